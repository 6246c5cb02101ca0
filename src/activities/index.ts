// Activities: what learners do in a module, their state on each, the rewards for completing them
// (rewards.ts), the one priority order (priority.ts) and the dashboard's next up.
import type { Area } from '../context';
import { permissions } from './policy';
import { activitiesRouter } from './routes';

export const activitiesArea: Area = { router: activitiesRouter, permissions, scope: { name: 'activities', description: "activities and a learner's work on them" } };
