// Sequencing: prerequisite edges between a course's modules and activities, the graph in
// topological order, and the course-state engine (state.ts) every learner-facing area asks.
import type { Area } from '../context';
import { sequencingRouter } from './routes';

export const sequencingArea: Area = { router: sequencingRouter, scope: { name: 'courses', description: 'courses, their sections and modules, and the enrolment policy' } };
