// Webhooks: tenant admins subscribe HTTPS endpoints to the tenant's domain events (src/events),
// delivered signed (Standard Webhooks), at least once, in log order per subscription, with
// retries, from a SQLite outbox that survives restarts; see delivery.ts for the worker and
// targets.ts for what an endpoint may be (no private network).
import type { Area } from '../context';
import { permissions } from './policy';
import { documentMessages, webhooksRouter } from './routes';

export const webhooksArea: Area = { router: webhooksRouter, permissions, scope: { name: 'webhooks', description: 'webhook subscriptions and deliveries' }, document: documentMessages };
