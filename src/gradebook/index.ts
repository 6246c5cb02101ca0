// Gradebook: assignments, grades, categories, settings, statistics and CSV export of a course offering.
import type { Area } from '../context';
import { gradebookRouter } from './routes';

export const gradebookArea: Area = { router: gradebookRouter, scope: { name: 'grades', description: 'gradebooks: assignments, grades, summaries, settings' } };
