// Courses: the catalogue, course state, sections and modules.
import type { Area } from '../context';
import { permissions } from './policy';
import { coursesRouter } from './routes';

export const coursesArea: Area = { router: coursesRouter, permissions, scope: { name: 'courses', description: 'courses, their sections and modules, and the enrolment policy' } };
