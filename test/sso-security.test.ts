// Security matrix of SSO connections: every route of src/sso/routes.ts, for each principal, with
// bad credentials and across tenants. Only tenant admins manage their tenant's connections (members
// 403); another tenant's connection is 404.
import { expect } from 'vitest';
import { ssoConnections, ssoSettings } from '../db/schema';
import { ownTenantAdmins, adminsOnly, countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';
import { keypair, type Keypair } from './helpers/sso';

const cast = useCast('sso-sec');

let cert: Keypair | undefined;
const samlBody = async (name: string) => ({
  protocol: 'saml',
  name,
  idp_entity_id: 'urn:idp:sso-sec',
  idp_sso_url: 'https://idp.sso-sec.example.edu/sso',
  idp_certificates: [(cert ??= await keypair()).certBase64],
});

async function connection(side: Side, c: Cast): Promise<{ id: string }> {
  const created = await c.t.call('POST', '/api/sso/connections', { as: side.admin, body: await samlBody(`Connection ${side.name}`) });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id };
}

const readConnection = sharedFixture(connection);
const connectionState = (f: { id: string }, c: Cast, side: Side) => readAs(c, side.admin, `/api/sso/connections/${f.id}`);


securityMatrix(cast, {
  name: 'GET /api/sso/connections',
  crossTenant: false,
  setup: readConnection,
  request: () => ({ method: 'GET', path: '/api/sso/connections' }),
  roles: ownTenantAdmins(200),
});

securityMatrix(cast, {
  name: 'POST /api/sso/connections',
  crossTenant: false,
  setup: async () => ({ body: await samlBody('New') }),
  request: (f) => ({ method: 'POST', path: '/api/sso/connections', body: f.body }),
  snapshot: (_f, c) => countRows(c, ssoConnections),
  roles: ownTenantAdmins(201),
});

securityMatrix(cast, {
  name: 'GET /api/sso/connections/{id}',
  setup: readConnection,
  request: (f) => ({ method: 'GET', path: `/api/sso/connections/${f.id}` }),
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'PATCH /api/sso/connections/{id}',
  setup: connection,
  request: (f) => ({ method: 'PATCH', path: `/api/sso/connections/${f.id}`, body: { name: 'Changed', enabled: false } }),
  snapshot: connectionState,
  roles: adminsOnly(200),
});

securityMatrix(cast, {
  name: 'DELETE /api/sso/connections/{id}',
  fresh: true,
  setup: connection,
  request: (f) => ({ method: 'DELETE', path: `/api/sso/connections/${f.id}` }),
  snapshot: connectionState,
  roles: adminsOnly(204),
});

securityMatrix(cast, {
  name: 'GET /api/sso/settings',
  crossTenant: false,
  setup: async () => ({}),
  request: () => ({ method: 'GET', path: '/api/sso/settings' }),
  roles: ownTenantAdmins(200),
});

securityMatrix(cast, {
  name: 'PATCH /api/sso/settings',
  crossTenant: false,
  setup: async () => ({}),
  request: () => ({ method: 'PATCH', path: '/api/sso/settings', body: { member_password_sign_in: true } }),
  snapshot: (_f, c) => countRows(c, ssoSettings),
  roles: ownTenantAdmins(200),
});
