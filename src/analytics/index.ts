// Analytics: performance summaries, a learner's own figures and a course's for its instructors,
// read from the course-state engine, the gradebook, seat time and the event log.
import type { Area } from '../context';
import { permissions } from './policy';
import { analyticsRouter } from './routes';

export const analyticsArea: Area = { router: analyticsRouter, permissions, scope: { name: 'analytics', description: 'performance summaries' } };
