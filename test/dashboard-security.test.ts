// Security matrix of the dashboard: every route of src/dashboard/routes.ts, for each principal,
// with bad credentials and across tenants. Each route answers about the caller alone: everyone
// signed in gets their own (200) and never another tenant's ids; marking the feed read up to an
// event is for the event's recipient only, anyone else gets the 404 of an unknown id.
import { describe, expect } from 'vitest';
import { appendEvent } from '../src/events/log';
import type { CallResult } from './helpers/app';
import { insertActivity, insertModule, insertState } from './helpers/dashboard-fixtures';
import { CAST_ROLES, readAs, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';

const cast = useCast('dashboard-sec');

interface Fixture {
  eventId: string;
  activityId: string;
}

/** An event in the side's student's feed, and an activity of the side's course on their shelf. */
function fixture(side: Side, c: Cast): Fixture {
  const module = insertModule(c.t.db, { tenantId: side.tenantId, courseId: side.course.id });
  const activity = insertActivity(c.t.db, {
    tenantId: side.tenantId,
    courseId: side.course.id,
    moduleId: module.id,
    createdBy: side.instructor.user.id,
    dueAt: new Date(c.t.clock.now().getTime() + 86_400_000).toISOString(),
  });
  insertState(c.t.db, activity, side.student.user.id, { savedAt: c.t.clock.now().toISOString() });
  const event = appendEvent(c.t.db, c.t.clock, {
    tenantId: side.tenantId,
    type: 'badge.awarded',
    actorId: side.student.user.id,
    subject: { type: 'user', id: side.student.user.id },
    courseId: side.course.id,
    data: { user_id: side.student.user.id, badge: 'first_completion', scope_id: null, course_id: side.course.id },
    recipients: [side.student.user.id],
  });
  return { eventId: event.id, activityId: activity.id };
}

const shared = sharedFixture(fixture);

/** Everyone gets their own: 200, the student's answer checked. */
const everyone = (studentCheck: (res: CallResult, f: Fixture) => void) => ({
  ...(Object.fromEntries(CAST_ROLES.map((r) => [r, 200])) as Record<(typeof CAST_ROLES)[number], number>),
  student: { status: 200, check: studentCheck },
});

describe('dashboard', () => {
  securityMatrix(cast, {
    name: 'GET /api/dashboard/feed',
    crossTenant: false,
    setup: shared,
    request: () => ({ method: 'GET', path: '/api/dashboard/feed' }),
    roles: {
      ...everyone((res, f) => expect(res.body.data.map((e: { id: string }) => e.id)).toContain(f.eventId)),
      // Nobody else has it in their feed.
      instructor: { status: 200, check: (res, f) => expect(res.text).not.toContain(f.eventId) },
    },
  });

  securityMatrix(cast, {
    name: 'POST /api/dashboard/feed/read',
    fresh: true,
    setup: fixture,
    request: (f) => ({ method: 'POST', path: '/api/dashboard/feed/read', body: { up_to: f.eventId } }),
    snapshot: (_f, c, side) => readAs(c, side.student, '/api/dashboard/summary'),
    // Only the event's recipient can mark up to it; for anyone else it is not in their feed.
    roles: {
      platform: 404,
      admin: 404,
      instructor: 404,
      ta: 404,
      student: { status: 200, check: (res, f) => expect(res.body.read_up_to).toBe(f.eventId) },
      outsider: 404,
      otherTenantAdmin: 404,
      otherTenantUser: 404,
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/dashboard/shelf',
    crossTenant: false,
    setup: shared,
    request: () => ({ method: 'GET', path: '/api/dashboard/shelf' }),
    roles: {
      ...everyone((res, f) => expect(res.body.data.map((i: { activity_id: string }) => i.activity_id)).toContain(f.activityId)),
      instructor: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/dashboard/shelf/analytics',
    crossTenant: false,
    setup: shared,
    request: () => ({ method: 'GET', path: '/api/dashboard/shelf/analytics' }),
    roles: {
      ...everyone((res) => expect(res.body.saved).toBeGreaterThanOrEqual(1)),
      outsider: { status: 200, check: (res) => expect(res.body.saved).toBe(0) },
    },
  });

  securityMatrix(cast, {
    name: 'GET /api/dashboard/summary',
    crossTenant: false,
    setup: shared,
    request: () => ({ method: 'GET', path: '/api/dashboard/summary' }),
    roles: {
      ...everyone((res, f) => {
        expect(res.body.courses.length).toBeGreaterThanOrEqual(1);
        expect(res.body.due_soon.map((d: { activity_id: string }) => d.activity_id)).toContain(f.activityId);
      }),
      // The TA and the instructor teach the course: it is not one of their learning courses.
      ta: { status: 200, check: (res) => expect(res.body.courses).toEqual([]) },
      instructor: { status: 200, check: (res) => expect(res.body.due_soon).toEqual([]) },
    },
  });
});
