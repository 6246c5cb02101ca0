// Security matrix of tenants: every route of src/tenants/routes.ts. They are the platform
// operator's alone (API.md: "platform operator only"): every other caller, tenant admins included,
// is refused with 403 before any tenant is looked up, so the answer says nothing about any id.
// Seeing every tenant is the point of these routes: the operator's answers are not leak-checked
// against tenant B, and GET /api/tenants/{id} has no cross-tenant 404.
import { describe, expect, it } from 'vitest';
import { tenants } from '../db/schema';
import { countRows, securityMatrix, useCast } from './helpers/security';

const cast = useCast('tenants-sec');

let slugs = 0;
const newTenantBody = () => {
  const slug = `sec-tenant-${++slugs}`;
  return { name: `Tenant ${slug}`, slug, admin_email: `boss@${slug}.example.org`, admin_password: 'tenant-admin-pass' };
};

const operatorOnly = (ok: number) => ({ platform: ok, admin: 403, instructor: 403, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 403, otherTenantUser: 403 });

describe('tenants', () => {
  securityMatrix(cast, {
    name: 'GET /api/tenants',
    crossTenant: false,
    leakCheck: false,
    setup: () => ({}),
    request: () => ({ method: 'GET', path: '/api/tenants' }),
    roles: {
      ...operatorOnly(200),
      platform: { status: 200, check: (res) => expect(res.body.data.map((x: { id: string }) => x.id)).toContain(cast().b.tenantId) },
    },
  });

  securityMatrix(cast, {
    name: 'POST /api/tenants',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/tenants', body: newTenantBody() }),
    snapshot: (_f, c) => countRows(c, tenants),
    roles: operatorOnly(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/tenants/{id}',
    crossTenant: false,
    setup: (side) => ({ tenantId: side.tenantId }),
    request: (f) => ({ method: 'GET', path: `/api/tenants/${f.tenantId}` }),
    // A tenant admin may not read even their own tenant here.
    roles: operatorOnly(200),
  });

  it('GET /api/tenants/{id}: the operator reads tenant B; anyone else is refused for it as for a missing id', async () => {
    const c = cast();
    const read = await c.t.call('GET', `/api/tenants/${c.b.tenantId}`, { as: c.platform });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(c.b.tenantId);
    for (const as of [c.a.admin, c.b.admin, c.a.outsider]) {
      const real = await c.t.call('GET', `/api/tenants/${c.b.tenantId}`, { as });
      const missing = await c.t.call('GET', `/api/tenants/${crypto.randomUUID()}`, { as });
      expect(real.status).toBe(403);
      expect(real.body).toEqual(missing.body);
    }
  });
});
