// Tenants: only the platform operator lists and creates them; a new tenant's admin signs in with
// the tenant's slug and sees nothing of any other tenant.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, makeTestApp, type TestApp } from './helpers/app';

describe('/api/tenants', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  const newTenantBody = (slug: string, extra: Record<string, unknown> = {}) => ({
    name: `Tenant ${slug}`,
    slug,
    admin_email: `boss@${slug}.example.org`,
    admin_password: 'tenant-admin-pass',
    ...extra,
  });

  it('the platform operator creates a tenant with its first admin', async () => {
    const res = await t.call('POST', '/api/tenants', { as: t.admin, body: newTenantBody('north', { admin_name: 'North Boss' }) });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/tenants/${res.body.tenant.id}`);
    expect(res.body.tenant).toMatchObject({ name: 'Tenant north', slug: 'north' });
    expect(res.body.admin).toMatchObject({ email: 'boss@north.example.org', name: 'North Boss', role: 'admin', tenant_id: res.body.tenant.id });
    expect(res.text).not.toContain('tenant-admin-pass');

    const one = await t.call('GET', `/api/tenants/${res.body.tenant.id}`, { as: t.admin });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body.tenant);
  });

  it('the new admin signs in with the tenant slug, administers their tenant only, and is not an operator', async () => {
    const created = await t.call('POST', '/api/tenants', { as: t.admin, body: newTenantBody('south') });
    const session = await t.signIn('boss@south.example.org', 'tenant-admin-pass', 'south');
    const me = await t.call('GET', '/api/users/me', { as: session.access_token });
    expect(me.body).toMatchObject({ tenant_id: created.body.tenant.id, role: 'admin' });

    const users = await t.call('GET', '/api/users', { as: session.access_token });
    expect(users.body.data.map((u: { email: string }) => u.email)).toEqual(['boss@south.example.org']);
    expect((await t.call('GET', `/api/users/${t.admin.user.id}`, { as: session.access_token })).status).toBe(404);
    expect((await t.call('GET', `/api/users/${me.body.id}`, { as: t.admin })).status).toBe(404);

    const permissions = await t.call('GET', '/api/users/me/permissions', { as: session.access_token });
    expect(permissions.body.platform_admin).toBe(false);
  });

  it('an admin email that exists in the default tenant too: each password opens its own account, the slug picks one', async () => {
    await t.call('POST', '/api/tenants', { as: t.admin, body: newTenantBody('twin', { admin_email: ADMIN_EMAIL, admin_password: 'twin-admin-pass' }) });
    const first = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(first.status).toBe(200);
    expect(decodeJwt(first.body.access_token).tid).toBe(t.defaultTenantId);
    expect((await t.signIn(ADMIN_EMAIL, ADMIN_PASSWORD, 'default')).access_token).toBeTruthy();
    expect((await t.signIn(ADMIN_EMAIL, 'twin-admin-pass', 'twin')).access_token).toBeTruthy();
  });

  it('lists tenants for the operator, oldest first, paginated', async () => {
    const res = await t.call('GET', '/api/tenants?per_page=2', { as: t.admin });
    expect(res.status).toBe(200);
    expect(res.body.data[0].slug).toBe('default');
    expect(res.body.pagination.per_page).toBe(2);
    expect(res.body.pagination.total).toBeGreaterThanOrEqual(2);
    expect(res.headers.get('link')).toContain('rel="next"');
  });

  it('403 for a tenant admin and for members, on every tenant endpoint', async () => {
    const other = await t.newTenant('west');
    const member = await t.newUser();
    const localAdmin = await t.newUser({ role: 'admin' });
    for (const as of [other.admin, member, localAdmin]) {
      expect((await t.call('GET', '/api/tenants', { as })).status).toBe(403);
      const create = await t.call('POST', '/api/tenants', { as, body: newTenantBody(`x${crypto.randomUUID().slice(0, 8)}`) });
      expect(create.status).toBe(403);
      expect(create.body.code).toBe('forbidden');
      expect((await t.call('GET', `/api/tenants/${other.tenantId}`, { as })).status).toBe(403);
    }
  });

  it('409 for a slug already taken', async () => {
    await t.call('POST', '/api/tenants', { as: t.admin, body: newTenantBody('east') });
    const again = await t.call('POST', '/api/tenants', { as: t.admin, body: newTenantBody('east', { admin_email: 'other@east.example.org' }) });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
  });

  it('400 for malformed bodies', async () => {
    for (const body of [
      {},
      newTenantBody('Upper-Case'),
      newTenantBody('-leading'),
      newTenantBody('trailing-'),
      newTenantBody('a'),
      newTenantBody('has space'),
      newTenantBody('okslug', { admin_password: 'short' }),
      newTenantBody('okslug', { admin_email: 'nope' }),
      newTenantBody('okslug', { name: '' }),
      newTenantBody('okslug', { plan: 'gold' }),
    ]) {
      const res = await t.call('POST', '/api/tenants', { as: t.admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('404 for an unknown tenant, 400 for a malformed id, 401 without a credential', async () => {
    expect((await t.call('GET', `/api/tenants/${crypto.randomUUID()}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', '/api/tenants/default', { as: t.admin })).status).toBe(400);
    expect((await t.call('GET', '/api/tenants')).status).toBe(401);
    expect((await t.call('POST', '/api/tenants', { body: newTenantBody('anon') })).status).toBe(401);
  });
});
