// Metrics: GET /metrics in the Prometheus text format, from the app's own registry (registry.ts).
import type { Area } from '../context';
import { metricsRouter } from './routes';

export const metricsArea: Area = { router: metricsRouter, scope: 'none' };
