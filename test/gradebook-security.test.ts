// Security matrix of the gradebook: every route of src/gradebook/routes.ts, for each principal,
// with bad credentials and across tenants. Instructors of the offering and tenant admins manage it
// (TAs too are refused: API.md "instructor only (403)"); a student reads only their own grades;
// another tenant's offering, assignment or grade is 404.
import { describe, expect, it } from 'vitest';
import { MISSING_ID } from './helpers/app';
import { newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('gradebook-sec');

interface Fixture {
  course: CourseRow;
  assignment: { id: string };
  student: string;
}

/** A published offering (or a draft one) with one assignment and the student's grade on it. */
async function graded(side: Side, c: Cast, status: 'draft' | 'published' = 'published'): Promise<Fixture> {
  const course = newCourse(c.t, side, { status });
  const created = await c.t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, {
    as: side.instructor,
    body: { label: 'Quiz 1', grade_metadata: { score_maximum: 10, category: 'quizzes' } },
  });
  expect(created.status, created.text).toBe(201);
  const grade = await c.t.call('PUT', `/api/gradebook/assignments/${created.body.id}/grades/${side.student.user.id}`, {
    as: side.instructor,
    body: { score: 8, comment: 'Good' },
  });
  expect(grade.status, grade.text).toBe(201);
  return { course, assignment: { id: created.body.id }, student: side.student.user.id };
}

/** Read-only routes share one fixture per tenant. */
const readGraded = sharedFixture((side, c) => graded(side, c));
const readDraftGraded = sharedFixture((side, c) => graded(side, c, 'draft'));

const offering = (f: Fixture) => `/api/gradebook/offerings/${f.course.id}`;
const assignment = (f: Fixture) => `/api/gradebook/assignments/${f.assignment.id}`;
const grade = (f: Fixture) => `${assignment(f)}/grades/${f.student}`;

const instructorOnly = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
/** Seeing the gradebook and recording grades: the course's teaching staff, TAs included (API.md, "Course roles"). */
const staffOnly = (ok: number) => ({ ...instructorOnly(ok), ta: ok });
/** One student's grades: the student themself or the teaching staff. */
const studentOrStaff = { ...staffOnly(200), student: 200 };

const snapshotOf = (path: (f: Fixture) => string) => (f: Fixture, c: Cast, side: Side) => readAs(c, side.admin, path(f));

describe('gradebook', () => {
  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/assignments',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/assignments` }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/gradebook/offerings/{offering_id}/assignments',
    setup: graded,
    request: (f) => ({ method: 'POST', path: `${offering(f)}/assignments`, body: { label: 'Essay', grade_metadata: { score_maximum: 100 } } }),
    snapshot: snapshotOf((f) => `${offering(f)}/assignments`),
    roles: instructorOnly(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/assignments/{id}',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: assignment(f) }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/gradebook/assignments/{id}',
    setup: graded,
    request: (f) => ({ method: 'PATCH', path: assignment(f), body: { label: 'Quiz 1 (renamed)', grade_metadata: { weight: 2 } } }),
    snapshot: snapshotOf(assignment),
    roles: instructorOnly(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/gradebook/assignments/{id}',
    fresh: true,
    setup: graded,
    request: (f) => ({ method: 'DELETE', path: assignment(f) }),
    snapshot: snapshotOf(grade),
    roles: instructorOnly(204),
  });

  securityMatrix(cast, {
    name: 'PUT /api/gradebook/assignments/{id}/grades/{student_id}',
    setup: graded,
    request: (f) => ({ method: 'PUT', path: grade(f), body: { score: 3, comment: 'Changed' } }),
    snapshot: snapshotOf(grade),
    // TAs grade; the student may not grade themself.
    roles: staffOnly(200),
  });

  it("grading tenant B's student on tenant A's assignment is answered as for an unknown user, and records nothing", async () => {
    const c = cast();
    const f = await graded(c.a, c);
    const answer = async (studentId: string) => {
      const res = await c.t.call('PUT', `${assignment(f)}/grades/${studentId}`, { as: c.a.instructor, body: { score: 5 } });
      expect(res.text).not.toContain(c.b.student.user.id);
      return { status: res.status, code: res.body.code, detail: res.body.detail };
    };
    const foreign = await answer(c.b.student.user.id);
    expect(foreign.status).toBe(422);
    expect(foreign).toEqual(await answer(MISSING_ID));
    const grades = await c.t.call('GET', `${offering(f)}/grades`, { as: c.a.admin });
    expect(grades.body.data.map((g: { student_id: string }) => g.student_id)).toEqual([c.a.student.user.id]);
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/assignments/{id}/grades/{student_id}',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: grade(f) }),
    roles: studentOrStaff,
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/assignments/{id}/grades/{student_id}/history',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${grade(f)}/history` }),
    // Teaching staff only: the student reads their grade, not who changed it when.
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/grades',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/grades` }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/grades?format=csv',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/grades?format=csv` }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/students/{student_id}/grades',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/students/${f.student}/grades` }),
    roles: studentOrStaff,
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/summary',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/summary` }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/settings',
    setup: readGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/settings` }),
    roles: staffOnly(200),
  });

  securityMatrix(cast, {
    name: 'PUT /api/gradebook/offerings/{offering_id}/settings',
    setup: graded,
    request: (f) => ({ method: 'PUT', path: `${offering(f)}/settings`, body: { category_weights: { quizzes: 1 }, letter_scale: [{ letter: 'Pass', min_percent: 50 }, { letter: 'Fail', min_percent: 0 }] } }),
    snapshot: snapshotOf((f) => `${offering(f)}/settings`),
    roles: instructorOnly(200),
  });

  // A draft course is not known to those who may not read it (GET /api/courses/{id} answers 404),
  // and its gradebook says no more: 404 for a member who is not in it, 403 for its student.
  const draftOutsider = { ...staffOnly(200), outsider: 404 };

  securityMatrix(cast, {
    name: 'GET /api/gradebook/offerings/{offering_id}/assignments (draft course)',
    setup: readDraftGraded,
    request: (f) => ({ method: 'GET', path: `${offering(f)}/assignments` }),
    roles: draftOutsider,
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/assignments/{id} (draft course)',
    setup: readDraftGraded,
    request: (f) => ({ method: 'GET', path: assignment(f) }),
    roles: draftOutsider,
  });

  securityMatrix(cast, {
    name: 'GET /api/gradebook/assignments/{id}/grades/{student_id} (draft course)',
    setup: readDraftGraded,
    request: (f) => ({ method: 'GET', path: grade(f) }),
    roles: { ...studentOrStaff, outsider: 404 },
  });
});
