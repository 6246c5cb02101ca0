// Dashboard: the caller's own feed of events, shelf of saved activities, and summary. Every route
// reads the caller's own data only, so there is nothing to authorize beyond being signed in (and
// no policy.ts); "next up" is defined by the activities area, which owns the priority order.
import type { Area } from '../context';
import { dashboardRouter } from './routes';

export const dashboardArea: Area = { router: dashboardRouter, scope: { name: 'dashboard', description: "the caller's dashboard and feed" } };
