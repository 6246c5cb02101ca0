// Security matrix of templates: every route of src/templates/routes.ts for each principal, with bad
// credentials and across tenants. Every member of a tenant lists, reads, renders and instantiates
// its templates; tenant admins and instructors (of a course of the tenant; a TA is not one) create
// them; the creator or a tenant admin replaces or deletes one. Another tenant's template is 404.
import { describe, expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { documentTemplates, documents } from '../db/schema';
import type { CallResult } from './helpers/app';
import { countRows, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('templates-sec');

const INPUT = { name: 'Lab report', category: 'reports', body: '# {{title}}\n\nBy {{author}}', variables: [{ name: 'title', required: true }, { name: 'author', default: 'me' }] };

/** A template of the side's tenant, made by the cast's instructor. */
async function template(side: Side, c: Cast) {
  const res = await c.t.call('POST', '/api/templates', { as: side.instructor, body: INPUT });
  expect(res.status, res.text).toBe(201);
  return { template: { id: res.body.id as string } };
}
const readShared = sharedFixture(template);
type Fixture = Awaited<ReturnType<typeof template>>;

const everyone = (status: number) => ({ platform: status, admin: status, instructor: status, ta: status, student: status, outsider: status, otherTenantAdmin: 404, otherTenantUser: 404 });
const stored = (f: Fixture, c: Cast) => c.t.db.select().from(documentTemplates).where(eq(documentTemplates.id, f.template.id)).all();
const listed = (res: CallResult) => expect((res.body.data as { id: string }[]).length).toBeGreaterThan(0);

describe('templates', () => {
  securityMatrix(cast, {
    name: 'GET /api/templates',
    crossTenant: false,
    setup: readShared,
    request: () => ({ method: 'GET', path: '/api/templates' }),
    roles: {
      platform: { status: 200, check: listed },
      admin: { status: 200, check: listed },
      instructor: { status: 200, check: listed },
      ta: 200,
      student: 200,
      outsider: 200,
      otherTenantAdmin: { status: 200, check: listed },
      otherTenantUser: 200,
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/templates/categories',
    crossTenant: false,
    setup: readShared,
    request: () => ({ method: 'GET', path: '/api/templates/categories' }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 200, otherTenantUser: 200 },
  });

  securityMatrix(cast, {
    name: 'POST /api/templates',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/templates', body: INPUT }),
    snapshot: (_f, c) => countRows(c, documentTemplates),
    // Tenant B's admin and instructor create in their own tenant.
    roles: { platform: 201, admin: 201, instructor: 201, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 201, otherTenantUser: 201 },
  });

  securityMatrix(cast, {
    name: 'GET /api/templates/{id}',
    setup: readShared,
    request: (f) => ({ method: 'GET', path: `/api/templates/${f.template.id}` }),
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'PUT /api/templates/{id}',
    setup: template,
    request: (f) => ({ method: 'PUT', path: `/api/templates/${f.template.id}`, body: { ...INPUT, name: 'Renamed' } }),
    snapshot: stored,
    roles: { ...everyone(403), platform: 200, admin: 200, instructor: 200 },
  });

  securityMatrix(cast, {
    name: 'DELETE /api/templates/{id}',
    setup: template,
    fresh: true,
    request: (f) => ({ method: 'DELETE', path: `/api/templates/${f.template.id}` }),
    snapshot: stored,
    roles: { ...everyone(403), platform: 204, admin: 204, instructor: 204 },
  });

  securityMatrix(cast, {
    name: 'POST /api/templates/{id}/render',
    setup: readShared,
    request: (f) => ({ method: 'POST', path: `/api/templates/${f.template.id}/render`, body: { variables: { title: 'T' } } }),
    snapshot: stored,
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/templates/{id}/instantiate',
    setup: template,
    request: (f) => ({ method: 'POST', path: `/api/templates/${f.template.id}/instantiate`, body: { variables: { title: 'T' } } }),
    snapshot: (_f, c) => countRows(c, documents),
    roles: everyone(201),
  });
});
