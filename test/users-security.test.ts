// Security matrix of users: every route of src/users/routes.ts, for each principal, with bad
// credentials and across tenants. Admins list, create, change and delete the users of their own
// tenant; admins and instructors search; a user reads themself, anyone sharing a course with them
// (and admins); a user changes their own name, time zone and password, never their role; the platform
// operator's account is theirs alone. Another tenant's user is 404.
import { describe, expect } from 'vitest';
import { users } from '../db/schema';
import { uniqueEmail, type CallResult, type TestUser } from './helpers/app';
import { insertEnrollment } from './helpers/courses';
import { adminsOnly, countRows, newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('users-sec');

interface Target {
  /** A member of the side's tenant, a student of a course of the side's instructor, TA and student. */
  target: TestUser;
}

async function target(side: Side, c: Cast): Promise<Target> {
  const course = newCourse(c.t, side);
  const user = await c.t.newUser({ tenantId: side.tenantId, name: `${side.name} Target` });
  insertEnrollment(c.t.db, { tenantId: side.tenantId, courseId: course.id, userId: user.user.id });
  return { target: user };
}

/** Read-only routes share one fixture per tenant. */
const readTarget = sharedFixture(target);

const self = (f: Target) => ({ self: f.target });
/** The user as their tenant's admin reads them (deleted ones too). */
const userState = (f: Target, c: Cast, side: Side) => readAs(c, side.admin, `/api/users/${f.target.user.id}`);


const idOf = (res: CallResult) => res.body.id as string;
const listed = (res: CallResult) => (res.body.data as { id: string }[]).map((u) => u.id);

describe('users', () => {
  securityMatrix(cast, {
    name: 'GET /api/users',
    crossTenant: false,
    setup: readTarget,
    request: () => ({ method: 'GET', path: '/api/users?per_page=100' }),
    // Each admin lists their own tenant (the leak check holds B's admin to B's users).
    roles: {
      ...adminsOnly(200),
      admin: { status: 200, check: (res, f) => expect(listed(res)).toContain(f.target.user.id) },
      otherTenantAdmin: 200,
      otherTenantUser: 403,
    },
  });

  securityMatrix(cast, {
    name: 'POST /api/users',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/users', body: { email: uniqueEmail('created'), name: 'Created' } }),
    snapshot: (_f, c) => countRows(c, users),
    // An admin creates users in their own tenant only.
    roles: { ...adminsOnly(201), otherTenantAdmin: 201, otherTenantUser: 403 },
  });

  securityMatrix(cast, {
    name: 'GET /api/users/search',
    crossTenant: false,
    setup: readTarget,
    request: () => ({ method: 'GET', path: '/api/users/search?q=target' }),
    // Admins and instructors (of any course), each in their own tenant; not TAs (API.md).
    roles: {
      ...adminsOnly(200),
      instructor: { status: 200, check: (res, f) => expect(listed(res)).toContain(f.target.user.id) },
      otherTenantAdmin: 200,
      otherTenantUser: 200,
    },
  });

  const me = (who: (c: Cast) => TestUser) => ({ status: 200, check: (res: CallResult) => expect(idOf(res)).toBe(who(cast()).user.id) });
  securityMatrix(cast, {
    name: 'GET /api/users/me',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'GET', path: '/api/users/me' }),
    roles: {
      platform: me((c) => c.platform),
      admin: me((c) => c.a.admin),
      instructor: me((c) => c.a.instructor),
      ta: me((c) => c.a.ta),
      student: me((c) => c.a.student),
      outsider: me((c) => c.a.outsider),
      otherTenantAdmin: me((c) => c.b.admin),
      otherTenantUser: me((c) => c.b.instructor),
    },
  });

  const permissions = (platformAdmin: boolean, tenantRole: string) => ({
    status: 200,
    check: (res: CallResult) => expect(res.body).toMatchObject({ platform_admin: platformAdmin, tenant_role: tenantRole }),
  });
  securityMatrix(cast, {
    name: 'GET /api/users/me/permissions',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'GET', path: '/api/users/me/permissions' }),
    roles: {
      platform: permissions(true, 'admin'),
      admin: permissions(false, 'admin'),
      instructor: permissions(false, 'member'),
      ta: permissions(false, 'member'),
      student: permissions(false, 'member'),
      outsider: permissions(false, 'member'),
      otherTenantAdmin: permissions(false, 'admin'),
      otherTenantUser: permissions(false, 'member'),
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/users/{id}',
    setup: readTarget,
    principals: self,
    request: (f) => ({ method: 'GET', path: `/api/users/${f.target.user.id}` }),
    // Self, admins, and anyone sharing a course; a member of the same tenant who shares none: 403.
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 403, self: 200, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'PATCH /api/users/{id} (name)',
    setup: target,
    principals: self,
    request: (f) => ({ method: 'PATCH', path: `/api/users/${f.target.user.id}`, body: { name: 'Renamed' } }),
    snapshot: userState,
    roles: { ...adminsOnly(200), self: 200 },
  });

  securityMatrix(cast, {
    name: 'PATCH /api/users/{id} (timezone)',
    setup: target,
    principals: self,
    request: (f) => ({ method: 'PATCH', path: `/api/users/${f.target.user.id}`, body: { timezone: 'Europe/Paris' } }),
    snapshot: userState,
    roles: { ...adminsOnly(200), self: { status: 200, check: (res) => expect(res.body.timezone).toBe('Europe/Paris') } },
  });

  securityMatrix(cast, {
    name: 'PATCH /api/users/{id} (role)',
    fresh: true,
    setup: target,
    principals: self,
    request: (f) => ({ method: 'PATCH', path: `/api/users/${f.target.user.id}`, body: { role: 'admin' } }),
    snapshot: userState,
    // Nobody makes themself an admin.
    roles: { ...adminsOnly(200), self: 403 },
  });

  securityMatrix(cast, {
    name: 'DELETE /api/users/{id}',
    fresh: true,
    setup: target,
    principals: self,
    request: (f) => ({ method: 'DELETE', path: `/api/users/${f.target.user.id}` }),
    snapshot: userState,
    roles: { ...adminsOnly(204), self: 403 },
  });

  /** The operator's account (tenant B has no operator: its admin stands in as the cross-tenant target). */
  const operator = (side: Side, c: Cast) => ({ target: side.name === 'A' ? c.platform : side.admin });

  securityMatrix(cast, {
    name: "PATCH /api/users/{id} (the operator's account)",
    setup: operator,
    request: (f) => ({ method: 'PATCH', path: `/api/users/${f.target.user.id}`, body: { name: 'Platform Operator' } }),
    snapshot: userState,
    // Another admin of the operator's tenant may not change it.
    roles: { ...adminsOnly(200), admin: 403 },
  });

  securityMatrix(cast, {
    name: "DELETE /api/users/{id} (the operator's account)",
    setup: operator,
    request: (f) => ({ method: 'DELETE', path: `/api/users/${f.target.user.id}` }),
    snapshot: userState,
    // Nobody deletes their own account (409); another admin may not delete the operator's (403).
    roles: { ...adminsOnly(403), platform: 409 },
  });
});
