// Security matrix of webhooks: every route of src/webhooks/routes.ts, for each principal, with bad
// credentials and across tenants. Only tenant admins manage their tenant's webhooks (members 403);
// another tenant's subscription, or delivery, is 404.
import { expect } from 'vitest';
import { webhookDeliveries, webhookSubscriptions } from '../db/schema';
import { ownTenantAdmins, adminsOnly, countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';
import { emitEvent } from './helpers/webhooks';

const cast = useCast('webhooks-sec');

/** A name under .invalid never resolves (RFC 6761): accepted at creation, and every attempt fails without a packet sent. */
const URL_ = 'https://hooks.webhooks-sec.invalid/endpoint';

interface Fixture {
  webhook: string;
  delivery: string;
}

async function webhook(side: Side, c: Cast): Promise<Fixture> {
  const created = await c.t.call('POST', '/api/webhooks', { as: side.admin, body: { url: URL_, description: `Hook ${side.name}` } });
  expect(created.status, created.text).toBe(201);
  emitEvent(c.t.db, c.t.clock, side.tenantId, 'level.reached', { user_id: side.student.user.id, level: 2, total_xp: 20 });
  await c.t.deps.webhooks.drain();
  const log = await c.t.call('GET', `/api/webhooks/${created.body.id}/deliveries`, { as: side.admin });
  expect(log.body.data, log.text).toHaveLength(1);
  return { webhook: created.body.id, delivery: log.body.data[0].id };
}

const readWebhook = sharedFixture(webhook);

const webhookState = (f: Fixture, c: Cast, side: Side) => Promise.all([
  readAs(c, side.admin, `/api/webhooks/${f.webhook}`),
  readAs(c, side.admin, `/api/webhooks/${f.webhook}/deliveries`),
]);



securityMatrix(cast, {
  name: 'GET /api/webhooks/event-types',
  crossTenant: false,
  setup: () => ({}),
  request: () => ({ method: 'GET', path: '/api/webhooks/event-types' }),
  roles: ownTenantAdmins(200),
});

securityMatrix(cast, {
  name: 'GET /api/webhooks',
  crossTenant: false,
  setup: readWebhook,
  request: () => ({ method: 'GET', path: '/api/webhooks' }),
  roles: ownTenantAdmins(200),
});

securityMatrix(cast, {
  name: 'POST /api/webhooks',
  crossTenant: false,
  setup: () => ({}),
  request: () => ({ method: 'POST', path: '/api/webhooks', body: { url: URL_ } }),
  snapshot: (_f, c) => countRows(c, webhookSubscriptions),
  roles: ownTenantAdmins(201),
});

securityMatrix(cast, {
  name: 'GET /api/webhooks/{id}',
  setup: readWebhook,
  request: (f) => ({ method: 'GET', path: `/api/webhooks/${f.webhook}` }),
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'PATCH /api/webhooks/{id}',
  setup: webhook,
  request: (f) => ({ method: 'PATCH', path: `/api/webhooks/${f.webhook}`, body: { description: 'Changed', enabled: false } }),
  snapshot: webhookState,
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'DELETE /api/webhooks/{id}',
  fresh: true,
  setup: webhook,
  request: (f) => ({ method: 'DELETE', path: `/api/webhooks/${f.webhook}` }),
  snapshot: webhookState,
  roles: adminsOnly(204),
});

securityMatrix(cast, {
  name: 'POST /api/webhooks/{id}/rotate-secret',
  setup: webhook,
  request: (f) => ({ method: 'POST', path: `/api/webhooks/${f.webhook}/rotate-secret` }),
  snapshot: webhookState,
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'POST /api/webhooks/{id}/test',
  setup: webhook,
  request: (f) => ({ method: 'POST', path: `/api/webhooks/${f.webhook}/test` }),
  snapshot: (_f, c) => countRows(c, webhookDeliveries),
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'GET /api/webhooks/{id}/deliveries',
  setup: readWebhook,
  request: (f) => ({ method: 'GET', path: `/api/webhooks/${f.webhook}/deliveries` }),
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'POST /api/webhooks/{id}/deliveries/{delivery_id}/retry',
  setup: webhook,
  request: (f) => ({ method: 'POST', path: `/api/webhooks/${f.webhook}/deliveries/${f.delivery}/retry` }),
  snapshot: webhookState,
  roles: adminsOnly(202),
});
