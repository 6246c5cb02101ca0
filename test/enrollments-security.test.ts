// Security matrix of enrollments: every route of src/enrollments/routes.ts, for each principal,
// with bad credentials and across tenants. An enrollment is seen by its user, the course's
// instructors and TAs, and admins (404 to anyone else); instructors and admins enrol others,
// complete and drop; a user enrols themself as a student in a published course open to it (never
// in a closed one, the default, nor one enrolling by approval), and drops their own.
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { courses, enrollments } from '../db/schema';
import type { CallResult } from './helpers/app';
import { newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('enrollments-sec');

const enrollmentId = (c: Cast, courseId: string, userId: string): string =>
  c.t.db
    .select({ id: enrollments.id })
    .from(enrollments)
    .where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, userId)))
    .get()!.id;

interface Fixture {
  course: CourseRow;
  /** The student's enrollment in the course. */
  enrollment: string;
}

const withStudentEnrollment = (side: Side, c: Cast, status: 'draft' | 'published' = 'published'): Fixture => {
  const course = newCourse(c.t, side, { status });
  return { course, enrollment: enrollmentId(c, course.id, side.student.user.id) };
};

// Read-only routes share one fixture per tenant.
const readEnrollment = sharedFixture((side, c) => withStudentEnrollment(side, c));
const readDraftEnrollment = sharedFixture((side, c) => withStudentEnrollment(side, c, 'draft'));

/** A course of the side whose self-enrolment is `mode` (set directly: the policy's own routes are tested in enrollment-policy.test.ts). */
const openCourse = (c: Cast, side: Side, mode: 'open' | 'approval'): CourseRow => {
  const course = newCourse(c.t, side);
  c.t.db.update(courses).set({ selfEnroll: mode }).where(eq(courses.id, course.id)).run();
  return { ...course, selfEnroll: mode };
};

/** The course's whole roster, as its admin sees it. */
const roster = (f: { course: CourseRow }, c: Cast, side: Side) => readAs(c, side.admin, `/api/enrollments?course_id=${f.course.id}`);

const userIds = (res: CallResult) => (res.body.data as { user_id: string }[]).map((e) => e.user_id).sort();

/** Sees one enrollment (the student's): its user, the course's staff, admins; anyone else 404. */
const viewEnrollment = { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 };

describe('enrollments', () => {
  securityMatrix(cast, {
    name: 'GET /api/enrollments',
    crossTenant: false,
    setup: readEnrollment,
    request: (f) => ({ method: 'GET', path: `/api/enrollments?course_id=${f.course.id}` }),
    roles: {
      platform: { status: 200, check: (res) => expect(res.body.pagination.total).toBe(3) },
      admin: { status: 200, check: (res) => expect(res.body.pagination.total).toBe(3) },
      instructor: { status: 200, check: (res) => expect(res.body.pagination.total).toBe(3) },
      ta: { status: 200, check: (res) => expect(res.body.pagination.total).toBe(3) },
      // A student sees their own enrollment only, a plain member none.
      student: { status: 200, check: (res, f) => expect(res.body.data.map((e: { id: string }) => e.id)).toEqual([f.enrollment]) },
      outsider: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
      // Another tenant's course filters to nothing.
      otherTenantAdmin: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
      otherTenantUser: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
    },
  });

  it("GET /api/enrollments?course_id= of tenant B's course, as tenant A's admin or the operator: an empty list", async () => {
    const c = cast();
    for (const as of [c.a.admin, c.platform]) {
      const res = await c.t.call('GET', `/api/enrollments?course_id=${c.b.course.id}`, { as });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination.total).toBe(0);
    }
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (another user)',
    fresh: true,
    setup: async (side, c) => ({ course: newCourse(c.t, side), target: await c.t.newUser({ tenantId: side.tenantId }) }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll`, body: { user_id: f.target.user.id, role: 'student' } }),
    snapshot: roster,
    roles: { platform: 201, admin: 201, instructor: 201, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (another user, draft)',
    fresh: true,
    setup: async (side, c) => ({ course: newCourse(c.t, side, { status: 'draft' }), target: await c.t.newUser({ tenantId: side.tenantId }) }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll`, body: { user_id: f.target.user.id } }),
    snapshot: roster,
    roles: { platform: 201, admin: 201, instructor: 201, ta: 403, student: 403, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (self, published, open)',
    fresh: true,
    setup: (side, c) => ({ course: openCourse(c, side, 'open') }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll` }),
    snapshot: roster,
    // Those already enrolled are a 409; anyone else of the tenant joins as a student.
    roles: { platform: 201, admin: 201, instructor: 409, ta: 409, student: 409, outsider: 201, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  const closed = { status: 403, code: 'self_enrollment_closed' };
  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (self, published, closed: the default)',
    fresh: true,
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll` }),
    snapshot: roster,
    // Nobody enrols themselves; instructors and admins still enrol anyone (themselves included).
    roles: { platform: 201, admin: 201, instructor: 409, ta: closed, student: closed, outsider: closed, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  const ask = { status: 403, code: 'enrollment_approval_required' };
  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (self, published, approval)',
    fresh: true,
    setup: (side, c) => ({ course: openCourse(c, side, 'approval') }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll` }),
    snapshot: roster,
    roles: { platform: 201, admin: 201, instructor: 409, ta: ask, student: ask, outsider: ask, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (self, draft)',
    fresh: true,
    setup: (side, c) => ({ course: newCourse(c.t, side, { status: 'draft' }) }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll` }),
    snapshot: roster,
    // A draft is not open for self-enrolment (403 to its members, who see it); instructors and admins enrol anyone.
    roles: { platform: 201, admin: 201, instructor: 409, ta: 403, student: 403, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/enroll (self as instructor)',
    fresh: true,
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/enroll`, body: { role: 'instructor' } }),
    snapshot: roster,
    // Only instructors and admins give a role other than student, themselves included.
    roles: { platform: 201, admin: 201, instructor: 409, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  it("enrolling tenant B's user into tenant A's course is 404 (instructor, admin, operator), and changes nothing", async () => {
    const c = cast();
    const course = newCourse(c.t, c.a);
    const before = await roster({ course }, c, c.a);
    for (const as of [c.a.instructor, c.a.admin, c.platform]) {
      const res = await c.t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as, body: { user_id: c.b.outsider.user.id } });
      expect(res.status, res.text).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect(res.text).not.toContain(c.b.outsider.user.id);
    }
    expect(await roster({ course }, c, c.a)).toEqual(before);
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/course/{course_id}/bulk-enroll',
    setup: async (side, c) => ({ course: newCourse(c.t, side), target: await side.persona('Bulk target') }),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/course/${f.course.id}/bulk-enroll`, body: { user_ids: [f.target.user.id] } }),
    snapshot: roster,
    roles: { platform: 200, admin: 200, instructor: 200, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  it("bulk-enrolling tenant B's user into tenant A's course skips it as an unknown user", async () => {
    const c = cast();
    const course = newCourse(c.t, c.a);
    const res = await c.t.call('POST', `/api/enrollments/course/${course.id}/bulk-enroll`, { as: c.a.instructor, body: { user_ids: [c.b.outsider.user.id] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ enrolled: [], skipped: [{ user_id: c.b.outsider.user.id, reason: 'unknown_user' }] });
    expect(userIds(await c.t.call('GET', `/api/enrollments?course_id=${course.id}`, { as: c.a.admin }))).toHaveLength(3);
  });

  securityMatrix(cast, {
    name: 'GET /api/enrollments/course/{course_id}/user/{user_id} (published)',
    setup: readEnrollment,
    request: (f, { side }) => ({ method: 'GET', path: `/api/enrollments/course/${f.course.id}/user/${side.student.user.id}` }),
    // A plain member may read the published course, not look up who is in it.
    roles: { ...viewEnrollment, outsider: 403 },
  });

  securityMatrix(cast, {
    name: 'GET /api/enrollments/course/{course_id}/user/{user_id} (draft)',
    setup: readDraftEnrollment,
    request: (f, { side }) => ({ method: 'GET', path: `/api/enrollments/course/${f.course.id}/user/${side.student.user.id}` }),
    roles: viewEnrollment,
  });

  securityMatrix(cast, {
    name: 'GET /api/enrollments/{enrollment_id}',
    setup: readEnrollment,
    request: (f) => ({ method: 'GET', path: `/api/enrollments/${f.enrollment}` }),
    roles: viewEnrollment,
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/{enrollment_id}/complete',
    fresh: true,
    setup: (side, c) => withStudentEnrollment(side, c),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/${f.enrollment}/complete` }),
    snapshot: roster,
    roles: { platform: 200, admin: 200, instructor: 200, ta: 403, student: 403, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'POST /api/enrollments/{enrollment_id}/drop',
    fresh: true,
    setup: (side, c) => withStudentEnrollment(side, c),
    request: (f) => ({ method: 'POST', path: `/api/enrollments/${f.enrollment}/drop` }),
    snapshot: roster,
    // The student leaves the course themself; a TA sees the enrollment but may not drop it.
    roles: { platform: 200, admin: 200, instructor: 200, ta: 403, student: 200, outsider: 404, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'GET /api/enrollments/{enrollment_id}/progress',
    setup: readEnrollment,
    request: (f) => ({ method: 'GET', path: `/api/enrollments/${f.enrollment}/progress` }),
    roles: viewEnrollment,
  });
});
