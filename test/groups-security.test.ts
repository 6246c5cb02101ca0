// Security matrix of groups: every route of src/groups/routes.ts, for each principal, with bad
// credentials and across tenants. Any member of the tenant reads its groups (to share documents
// with them; only admins see other members' emails); admins create, change, delete and fill them.
// Another tenant's group, or user, is 404.
import { describe, expect, it } from 'vitest';
import { groups } from '../db/schema';
import type { CallResult, TestUser } from './helpers/app';
import { adminsOnly, countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('groups-sec');

let groupNumber = 0;

interface Fixture {
  group: string;
  /** A member of the group. */
  member: TestUser;
  /** A member of the tenant not in the group. */
  joiner: TestUser;
}

async function group(side: Side, c: Cast): Promise<Fixture> {
  const created = await c.t.call('POST', '/api/groups', { as: side.admin, body: { name: `Group ${side.name}${++groupNumber}` } });
  expect(created.status, created.text).toBe(201);
  const member = side.student;
  const put = await c.t.call('PUT', `/api/groups/${created.body.id}/members/${member.user.id}`, { as: side.admin });
  expect(put.status, put.text).toBe(204);
  return { group: created.body.id, member, joiner: await side.persona('Joiner') };
}

/** Read-only routes share one fixture per tenant. */
const readGroup = sharedFixture(group);

const groupState = (f: Fixture, c: Cast, side: Side) => readAs(c, side.admin, `/api/groups/${f.group}`);


/** Emails of the members as the caller sees them. */
const emails = (res: CallResult) => (res.body.members as { id: string; email: string | null }[]).map((m) => m.email);
const seesEmails = (yes: boolean) => ({
  status: 200,
  check: (res: CallResult, f: Fixture) => expect(emails(res)).toEqual([yes ? f.member.user.email : null]),
});

describe('groups', () => {
  securityMatrix(cast, {
    name: 'GET /api/groups',
    crossTenant: false,
    setup: readGroup,
    request: () => ({ method: 'GET', path: '/api/groups' }),
    // Every member reads their own tenant's groups (the leak check keeps tenant B to its own).
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 200, otherTenantUser: 200 },
  });

  securityMatrix(cast, {
    name: 'POST /api/groups',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/groups', body: { name: `Created ${++groupNumber}` } }),
    snapshot: (_f, c) => countRows(c, groups),
    // An admin creates groups in their own tenant.
    roles: { platform: 201, admin: 201, instructor: 403, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 201, otherTenantUser: 403 },
  });

  securityMatrix(cast, {
    name: 'GET /api/groups/{id}',
    setup: readGroup,
    request: (f) => ({ method: 'GET', path: `/api/groups/${f.group}` }),
    // Any member reads it; the member's email only for admins and the member themself (the student).
    roles: {
      platform: seesEmails(true),
      admin: seesEmails(true),
      instructor: seesEmails(false),
      ta: seesEmails(false),
      student: seesEmails(true),
      outsider: seesEmails(false),
      otherTenantAdmin: 404,
      otherTenantUser: 404,
    },
  });

  securityMatrix(cast, {
    name: 'PATCH /api/groups/{id}',
    setup: group,
    request: (f) => ({ method: 'PATCH', path: `/api/groups/${f.group}`, body: { description: 'Changed' } }),
    snapshot: groupState,
    roles: adminsOnly(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/groups/{id}',
    fresh: true,
    setup: group,
    request: (f) => ({ method: 'DELETE', path: `/api/groups/${f.group}` }),
    snapshot: groupState,
    roles: adminsOnly(204),
  });

  securityMatrix(cast, {
    name: 'PUT /api/groups/{id}/members/{user_id}',
    setup: group,
    request: (f) => ({ method: 'PUT', path: `/api/groups/${f.group}/members/${f.joiner.user.id}` }),
    snapshot: groupState,
    roles: adminsOnly(204),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/groups/{id}/members/{user_id}',
    fresh: true,
    setup: group,
    request: (f) => ({ method: 'DELETE', path: `/api/groups/${f.group}/members/${f.member.user.id}` }),
    snapshot: groupState,
    roles: adminsOnly(204),
  });

  it("tenant B's user put into tenant A's group is 404 (admin, operator), as an unknown user, and changes nothing", async () => {
    const c = cast();
    const f = await group(c.a, c);
    const before = await groupState(f, c, c.a);
    for (const as of [c.a.admin, c.platform]) {
      const foreign = await c.t.call('PUT', `/api/groups/${f.group}/members/${c.b.outsider.user.id}`, { as });
      const missing = await c.t.call('PUT', `/api/groups/${f.group}/members/${crypto.randomUUID()}`, { as });
      expect(foreign.status, foreign.text).toBe(404);
      expect({ code: foreign.body.code, detail: foreign.body.detail }).toEqual({ code: missing.body.code, detail: missing.body.detail });
    }
    expect(await groupState(f, c, c.a)).toEqual(before);
  });
});
