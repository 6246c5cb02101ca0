// Security matrix of compliance seat time and the performance summary: every route, for each
// principal, with bad credentials and across tenants. Only the course's active student keeps seat
// time (403 for everyone else of the tenant, instructors and admins included); a session is its
// owner's alone (404 for anyone else); the course's instructors and admins audit (report, every
// session, another learner's status); a student reads their own; another tenant's things are 404.
import { describe, expect } from 'vitest';
import { readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('compliance-sec');

interface Fixture {
  course: CourseRow;
  module: string;
  activity: string;
  student: Side['student'];
}

/** The side's course with a module and an activity requiring a minute of seat time. */
async function withBlock(side: Side, c: Cast): Promise<Fixture> {
  const module = await c.t.call('POST', `/api/courses/${side.course.id}/modules`, { as: side.instructor, body: { title: 'Compliance' } });
  expect(module.status, module.text).toBe(201);
  const activity = await c.t.call('POST', `/api/modules/${module.body.id}/activities`, {
    as: side.instructor,
    body: { title: 'Safety briefing', type: 'video', min_seat_seconds: 60 },
  });
  expect(activity.status, activity.text).toBe(201);
  return { course: side.course, module: module.body.id, activity: activity.body.id, student: side.student };
}

/** The same, with the side's student in an open session on the activity. */
async function withSession(side: Side, c: Cast): Promise<Fixture & { session: string }> {
  const f = await withBlock(side, c);
  const res = await c.t.call('POST', '/api/compliance/sessions', { as: side.student, body: { course_id: f.course.id, block_id: f.activity } });
  expect(res.status, res.text).toBe(201);
  return { ...f, session: res.body.id };
}

const shared = sharedFixture(withSession);
const sessionsOf = (f: Fixture) => `/api/compliance/courses/${f.course.id}/sessions`;

/** The course's teaching staff (instructors and TAs) and admins audit (API.md, "Course roles": TAs see the compliance report and analytics). */
const auditors = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: ok, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
const ownerOnly = (ok: number) => ({ platform: 404, admin: 404, instructor: 404, ta: 404, student: ok, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 });

describe('compliance', () => {
  securityMatrix(cast, {
    name: 'POST /api/compliance/sessions',
    setup: withBlock,
    request: (f) => ({ method: 'POST', path: '/api/compliance/sessions', body: { course_id: f.course.id, block_id: f.activity } }),
    snapshot: (f, c, side) => readAs(c, side.admin, sessionsOf(f)),
    roles: { platform: 403, admin: 403, instructor: 403, ta: 403, student: 201, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/compliance/sessions/{id}/heartbeat',
    fresh: true,
    setup: withSession,
    request: (f) => ({ method: 'POST', path: `/api/compliance/sessions/${f.session}/heartbeat` }),
    snapshot: (f, c, side) => readAs(c, side.admin, sessionsOf(f)),
    roles: ownerOnly(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/compliance/sessions/{id}/end',
    fresh: true,
    setup: withSession,
    request: (f) => ({ method: 'POST', path: `/api/compliance/sessions/${f.session}/end` }),
    snapshot: (f, c, side) => readAs(c, side.admin, sessionsOf(f)),
    roles: ownerOnly(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/compliance/sessions/active',
    setup: withSession,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/compliance/sessions/active' }),
    // Only the student holds an open session; nobody else has one to see.
    roles: { platform: 404, admin: 404, instructor: 404, ta: 404, student: 200, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'GET /api/compliance/blocks/{block_id}/status',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/compliance/blocks/${f.activity}/status?user_id=${f.student.user.id}` }),
    roles: { ...auditors(200), student: 200 },
  });

  securityMatrix(cast, {
    name: 'GET /api/compliance/courses/{course_id}/report',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/compliance/courses/${f.course.id}/report` }),
    roles: auditors(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/compliance/courses/{course_id}/report?format=csv',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/compliance/courses/${f.course.id}/report?format=csv` }),
    roles: auditors(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/compliance/courses/{course_id}/sessions',
    setup: shared,
    request: (f) => ({ method: 'GET', path: sessionsOf(f) }),
    roles: { ...auditors(200), student: 200 },
  });
});

describe('analytics', () => {
  securityMatrix(cast, {
    name: 'GET /api/analytics/performance-summary?course_id=',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/analytics/performance-summary?course_id=${f.course.id}` }),
    roles: {
      ...auditors(200),
      student: { status: 200, check: (res) => expect(res.body.scope).toBe('learner') },
      instructor: { status: 200, check: (res) => expect(res.body.scope).toBe('course') },
      ta: { status: 200, check: (res) => expect(res.body.scope).toBe('course') },
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/analytics/performance-summary',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/analytics/performance-summary' }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 200, otherTenantUser: 200 },
  });
});
