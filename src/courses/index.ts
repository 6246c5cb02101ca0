// Courses: the catalogue, course state, sections and modules.
import type { Area } from '../context';
import { permissions } from './policy';
import { coursesRouter } from './routes';

export const coursesArea: Area = { router: coursesRouter, permissions };
