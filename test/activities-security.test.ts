// Security matrix of the activities area: every route of src/activities/routes.ts, for each
// principal, with bad credentials and across tenants. Instructors of the course and tenant admins
// manage activities; whoever may read the course reads them; only the course's active student acts
// as a learner (403 for everyone else of the tenant, instructors and admins included); another
// tenant's module or activity is 404.
import { describe, expect } from 'vitest';
import { events } from '../db/schema';
import { countRows, newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('activities-sec');

interface Fixture {
  course: CourseRow;
  module: { id: string };
  activity: { id: string };
  student: Side['student'];
}

/** A published course with one module and one activity (with a deep link) in it. */
async function withActivity(side: Side, c: Cast): Promise<Fixture> {
  const course = newCourse(c.t, side);
  const module = await c.t.call('POST', `/api/courses/${course.id}/modules`, { as: side.instructor, body: { title: 'Week 1' } });
  expect(module.status, module.text).toBe(201);
  const activity = await c.t.call('POST', `/api/modules/${module.body.id}/activities`, {
    as: side.instructor,
    body: { title: 'Read chapter 1', type: 'reading', deep_link_url: 'https://example.com/ch1' },
  });
  expect(activity.status, activity.text).toBe(201);
  return { course, module: { id: module.body.id }, activity: { id: activity.body.id }, student: side.student };
}

/** The same, with the activity on the student's shelf. */
async function saved(side: Side, c: Cast): Promise<Fixture> {
  const f = await withActivity(side, c);
  const res = await c.t.call('POST', `/api/activities/${f.activity.id}/save`, { as: side.student, body: {} });
  expect(res.status, res.text).toBe(200);
  return f;
}

const shared = sharedFixture(withActivity);
const activityPath = (f: Fixture) => `/api/activities/${f.activity.id}`;

const instructorOnly = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
const everyoneOfTheTenant = { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 404, otherTenantUser: 404 };
/** Learner actions: the active student only; instructors and admins are not learners. */
const learnerOnly = (ok: number) => ({ platform: 403, admin: 403, instructor: 403, ta: 403, student: ok, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });

/** The student's own view of the activity (their state), and the module's activities as the admin sees them. */
const learnerSnapshot = async (f: Fixture, c: Cast, side: Side) => ({
  mine: await readAs(c, side.student, activityPath(f)),
  activities: await readAs(c, side.admin, `/api/modules/${f.module.id}/activities`),
});

describe('activities', () => {
  securityMatrix(cast, {
    name: 'POST /api/modules/{id}/activities',
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `/api/modules/${f.module.id}/activities`, body: { title: 'Quiz 1', type: 'quiz' } }),
    snapshot: (f, c, side) => readAs(c, side.admin, `/api/modules/${f.module.id}/activities`),
    roles: instructorOnly(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/modules/{id}/activities',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/modules/${f.module.id}/activities` }),
    roles: everyoneOfTheTenant,
  });

  securityMatrix(cast, {
    name: 'GET /api/activities/{id}',
    setup: shared,
    request: (f) => ({ method: 'GET', path: activityPath(f) }),
    roles: everyoneOfTheTenant,
  });

  securityMatrix(cast, {
    name: 'PATCH /api/activities/{id}',
    setup: withActivity,
    request: (f) => ({ method: 'PATCH', path: activityPath(f), body: { title: 'Read chapter 1 again', priority: 90 } }),
    snapshot: (f, c, side) => readAs(c, side.admin, activityPath(f)),
    roles: instructorOnly(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/activities/{id}',
    fresh: true,
    setup: withActivity,
    request: (f) => ({ method: 'DELETE', path: activityPath(f) }),
    snapshot: (f, c, side) => readAs(c, side.admin, `/api/modules/${f.module.id}/activities`),
    roles: instructorOnly(204),
  });

  securityMatrix(cast, {
    name: 'GET /api/activities',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/activities' }),
    roles: { ...everyoneOfTheTenant, otherTenantAdmin: 200, otherTenantUser: 200 },
  });

  securityMatrix(cast, {
    name: 'GET /api/dashboard/next-up',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/dashboard/next-up' }),
    roles: { ...everyoneOfTheTenant, otherTenantAdmin: 200, otherTenantUser: 200 },
  });

  securityMatrix(cast, {
    name: 'POST /api/activities/{id}/deep-link-click',
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `${activityPath(f)}/deep-link-click` }),
    snapshot: learnerSnapshot,
    roles: learnerOnly(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/activities/{id}/complete',
    fresh: true,
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `${activityPath(f)}/complete`, body: { score: 90 } }),
    snapshot: learnerSnapshot,
    roles: learnerOnly(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/activities/{id}/help',
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `${activityPath(f)}/help`, body: { message: 'I am stuck on page 3' } }),
    snapshot: async (f, c, side) => ({ events: countRows(c, events), mine: await readAs(c, side.student, activityPath(f)) }),
    roles: learnerOnly(201),
  });

  securityMatrix(cast, {
    name: 'POST /api/activities/{id}/save',
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `${activityPath(f)}/save`, body: {} }),
    snapshot: learnerSnapshot,
    roles: learnerOnly(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/activities/{id}/save',
    fresh: true,
    setup: saved,
    request: (f) => ({ method: 'DELETE', path: `${activityPath(f)}/save` }),
    snapshot: learnerSnapshot,
    roles: learnerOnly(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/activities/{id}/skip',
    setup: withActivity,
    request: (f) => ({ method: 'POST', path: `${activityPath(f)}/skip`, body: { reason: 'Already know it' } }),
    snapshot: learnerSnapshot,
    roles: learnerOnly(200),
  });
});
