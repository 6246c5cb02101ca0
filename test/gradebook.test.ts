// Gradebook through the HTTP API: the spec's rules for the assignments endpoint (401, 403
// "Instructor access required", 404 across tenants, page/per_page defaults and limits), the
// instructor's writes (assignments, grades, history, settings) and who may read what.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollments, type EnrollmentRole } from '../db/schema';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { insertActivity, insertModule } from './helpers/dashboard-fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t?.close());

interface Offering {
  id: string;
  instructor: TestUser;
  ta: TestUser;
  students: TestUser[];
  outsider: TestUser;
}

async function enrolled(courseId: string, role: EnrollmentRole, name?: string): Promise<TestUser> {
  const user = await t.newUser({ name });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: user.user.id, role });
  return user;
}

/** A course with an instructor, a TA, some students and a member of the tenant who is not enrolled. */
async function newOffering(studentCount = 2): Promise<Offering> {
  const instructor = await t.newUser();
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  const ta = await enrolled(course.id, 'ta');
  const students: TestUser[] = [];
  for (let i = 0; i < studentCount; i++) students.push(await enrolled(course.id, 'student'));
  return { id: course.id, instructor, ta, students, outsider: await t.newUser() };
}

function setEnrollmentStatus(courseId: string, userId: string, status: 'active' | 'completed' | 'dropped') {
  t.db.update(enrollments).set({ status }).where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, userId))).run();
}

/** An activity of the course (in a module of its own); activities are tested through their API elsewhere. */
function activityOf(courseId: string, createdBy: string, title = 'Activity', tenantId = t.defaultTenantId): string {
  const module = insertModule(t.db, { tenantId, courseId });
  return insertActivity(t.db, { tenantId, courseId, moduleId: module.id, createdBy, title }).id;
}

const assignmentsPath = (offeringId: string) => `/api/gradebook/offerings/${offeringId}/assignments`;

async function createAssignment(o: Offering, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', assignmentsPath(o.id), {
    as: o.instructor,
    body: { label: 'Quiz', grade_metadata: { score_maximum: 10 }, ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const gradePath = (assignmentId: string, studentId: string) => `/api/gradebook/assignments/${assignmentId}/grades/${studentId}`;

let otherTenant: { tenantId: string; admin: TestUser };
let foreignOfferingId: string;
beforeAll(async () => {
  otherTenant = await t.newTenant('gradebook-other');
  foreignOfferingId = insertCourse(t.db, { tenantId: otherTenant.tenantId, createdBy: otherTenant.admin.user.id }).id;
});

describe('GET /api/gradebook/offerings/{offering_id}/assignments (the spec endpoint)', () => {
  it('answers 401 without a credential, before anything else', async () => {
    const o = await newOffering();
    const res = await t.call('GET', assignmentsPath(o.id));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect((await t.call('GET', assignmentsPath('not-a-uuid'))).status).toBe(401);
  });

  it('answers 400 when offering_id is not a UUID', async () => {
    const res = await t.call('GET', assignmentsPath('not-a-uuid'), { as: t.admin });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('validation_failed');
  });

  it('answers 404 for an unknown offering and for an offering of another tenant, never 403', async () => {
    const o = await newOffering();
    expect((await t.call('GET', assignmentsPath(MISSING_ID), { as: o.instructor })).status).toBe(404);
    const foreign = await t.call('GET', assignmentsPath(foreignOfferingId), { as: o.instructor });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect((await t.call('GET', assignmentsPath(foreignOfferingId), { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', assignmentsPath(o.id), { as: otherTenant.admin })).status).toBe(404);
  });

  it('answers 403 "Instructor access required" to a student, a non-enrolled member and a dropped instructor; the TA reads it', async () => {
    const o = await newOffering();
    const former = await enrolled(o.id, 'instructor');
    setEnrollmentStatus(o.id, former.user.id, 'dropped');
    expect((await t.call('GET', assignmentsPath(o.id), { as: o.ta })).status).toBe(200);
    for (const who of [o.students[0]!, o.outsider, former]) {
      const res = await t.call('GET', assignmentsPath(o.id), { as: who });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403, code: 'forbidden', detail: 'Instructor access required' });
    }
  });

  it('lets the instructor and a tenant admin through', async () => {
    const o = await newOffering();
    await createAssignment(o);
    for (const who of [o.instructor, t.admin]) {
      const res = await t.call('GET', assignmentsPath(o.id), { as: who });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
    }
  });

  it('pages by default 1 and 100, allows at most 100 per page, and rejects anything else with 400', async () => {
    const o = await newOffering(0);
    for (let i = 0; i < 105; i++) await createAssignment(o, { label: `A${i}` });

    const first = await t.call('GET', assignmentsPath(o.id), { as: o.instructor });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(100);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 100, total: 105, total_pages: 2 });
    expect(first.headers.get('link')).toContain('rel="next"');

    const second = await t.call('GET', `${assignmentsPath(o.id)}?page=2`, { as: o.instructor });
    expect(second.body.data).toHaveLength(5);
    expect(second.body.pagination).toEqual({ page: 2, per_page: 100, total: 105, total_pages: 2 });
    expect(second.body.data.map((a: any) => a.label)).toEqual(['A100', 'A101', 'A102', 'A103', 'A104']);

    const exact = await t.call('GET', `${assignmentsPath(o.id)}?per_page=100&page=1`, { as: o.instructor });
    expect(exact.status).toBe(200);
    expect(exact.body.data).toHaveLength(100);

    const small = await t.call('GET', `${assignmentsPath(o.id)}?per_page=7&page=3`, { as: o.instructor });
    expect(small.body.data.map((a: any) => a.label)).toEqual(['A14', 'A15', 'A16', 'A17', 'A18', 'A19', 'A20']);
    expect(small.body.pagination).toEqual({ page: 3, per_page: 7, total: 105, total_pages: 15 });

    const beyond = await t.call('GET', `${assignmentsPath(o.id)}?page=9`, { as: o.instructor });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);

    for (const query of ['per_page=101', 'per_page=1000', 'per_page=0', 'per_page=-1', 'per_page=1.5', 'per_page=abc', 'page=0', 'page=-2', 'page=1.5', 'page=x']) {
      const res = await t.call('GET', `${assignmentsPath(o.id)}?${query}`, { as: o.instructor });
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('orders by position, then id, and shows each item as a resource link with full grade metadata', async () => {
    const o = await newOffering(0);
    const late = await createAssignment(o, { label: 'Late', position: 5 });
    const tieB = await createAssignment(o, { label: 'Tie first', position: 2 });
    const tieA = await createAssignment(o, { label: 'Tie second', position: 2 });
    const activityId = activityOf(o.id, o.instructor.user.id);
    const early = await createAssignment(o, {
      label: 'Early',
      position: 0,
      tag: 'exam',
      resource_id: 'res-1',
      resource_link_id: 'link-1',
      activity_id: activityId,
      grade_metadata: { score_maximum: 50, weight: 2.5, category: 'exams', due_at: '2026-03-01T12:00:00+02:00', grading_type: 'letter' },
    });
    const res = await t.call('GET', assignmentsPath(o.id), { as: o.instructor });
    expect(res.body.data.map((a: any) => a.id)).toEqual([early.id, tieB.id, tieA.id, late.id]);
    expect(res.body.data[0]).toEqual({
      id: early.id,
      offering_id: o.id,
      label: 'Early',
      resource_link_id: 'link-1',
      tag: 'exam',
      resource_id: 'res-1',
      activity_id: activityId,
      position: 0,
      grade_metadata: { score_maximum: 50, weight: 2.5, category: 'exams', due_at: '2026-03-01T10:00:00.000Z', grading_type: 'letter' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });
});

describe('assignments: create, read, change, delete', () => {
  it('creates with defaults, answers 201 with a Location that resolves', async () => {
    const o = await newOffering(0);
    const res = await t.call('POST', assignmentsPath(o.id), { as: o.instructor, body: { label: '  Essay  ', grade_metadata: { score_maximum: 20 } } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/gradebook/assignments/${res.body.id}`);
    expect(res.body).toMatchObject({
      label: 'Essay',
      resource_link_id: res.body.id,
      tag: null,
      resource_id: null,
      activity_id: null,
      position: 0,
      grade_metadata: { score_maximum: 20, weight: 1, category: 'general', due_at: null, grading_type: 'points' },
    });
    const again = await t.call('GET', res.headers.get('location')!, { as: o.instructor });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect((await createAssignment(o)).position).toBe(1);
  });

  it('rejects malformed bodies with 400', async () => {
    const o = await newOffering(0);
    const bodies: unknown[] = [
      {},
      { label: 'x' },
      { label: '', grade_metadata: { score_maximum: 10 } },
      { label: 'x', grade_metadata: { score_maximum: 0 } },
      { label: 'x', grade_metadata: { score_maximum: -5 } },
      { label: 'x', grade_metadata: { score_maximum: '10' } },
      { label: 'x', grade_metadata: { score_maximum: 10, grading_type: 'stars' } },
      { label: 'x', grade_metadata: { score_maximum: 10, weight: -1 } },
      { label: 'x', grade_metadata: { score_maximum: 10, due_at: 'tomorrow' } },
      { label: 'x', grade_metadata: { score_maximum: 10 }, activity_id: 'nope' },
      { label: 'x', grade_metadata: { score_maximum: 10 }, surprise: true },
    ];
    for (const body of bodies) {
      const res = await t.call('POST', assignmentsPath(o.id), { as: o.instructor, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.call('POST', assignmentsPath(o.id), { as: o.instructor, rawBody: 'label=x' })).status).toBe(415);
  });

  it('keeps resource_link_id unique within the offering (409), not across offerings', async () => {
    const o = await newOffering(0);
    await createAssignment(o, { resource_link_id: 'rl-1' });
    const dup = await t.call('POST', assignmentsPath(o.id), { as: o.instructor, body: { label: 'B', resource_link_id: 'rl-1', grade_metadata: { score_maximum: 1 } } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
    const other = await newOffering(0);
    await createAssignment(other, { resource_link_id: 'rl-1' });
    const second = await createAssignment(o, { resource_link_id: 'rl-2' });
    const patch = await t.call('PATCH', `/api/gradebook/assignments/${second.id}`, { as: o.instructor, body: { resource_link_id: 'rl-1' } });
    expect(patch.status).toBe(409);
  });

  it('is instructor-only for writes (TA and student 403), staff-only for reads (the TA reads, the student 403), other tenant 404', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o);
    const body = { label: 'x', grade_metadata: { score_maximum: 1 } };
    expect((await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: o.ta })).status).toBe(200);
    expect((await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: o.students[0]! })).status).toBe(403);
    for (const who of [o.ta, o.students[0]!]) {
      expect((await t.call('POST', assignmentsPath(o.id), { as: who, body })).status).toBe(403);
      expect((await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: who, body: { label: 'y' } })).status).toBe(403);
      expect((await t.call('DELETE', `/api/gradebook/assignments/${a.id}`, { as: who })).status).toBe(403);
    }
    expect((await t.call('POST', assignmentsPath(foreignOfferingId), { as: t.admin, body })).status).toBe(404);
    expect((await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: otherTenant.admin })).status).toBe(404);
    expect((await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: otherTenant.admin, body: { label: 'y' } })).status).toBe(404);
    expect((await t.call('DELETE', `/api/gradebook/assignments/${a.id}`, { as: otherTenant.admin })).status).toBe(404);
    expect((await t.call('GET', '/api/gradebook/assignments/123', { as: o.instructor })).status).toBe(400);
    expect((await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: t.admin })).status).toBe(200);
  });

  it('changes fields one by one, grade metadata included, and clears nullable ones with null', async () => {
    const o = await newOffering(0);
    const a = await createAssignment(o, { tag: 'hw', grade_metadata: { score_maximum: 10, due_at: '2026-05-01T00:00:00Z' } });
    t.clock.advance(1000);
    const res = await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, {
      as: o.instructor,
      body: { label: 'Renamed', tag: null, grade_metadata: { weight: 3, due_at: null } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ label: 'Renamed', tag: null, grade_metadata: { score_maximum: 10, weight: 3, category: 'general', due_at: null, grading_type: 'points' } });
    expect(res.body.updated_at > a.updated_at).toBe(true);
    expect((await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: {} })).status).toBe(400);
    expect((await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: { grade_metadata: { score_maximum: 0 } } })).status).toBe(400);
  });

  it('ties an assignment only to an activity of its own offering: 422 naming activity_id otherwise, and nothing changes', async () => {
    const o = await newOffering(0);
    const own = activityOf(o.id, o.instructor.user.id, 'Own quiz');
    const sibling = await newOffering(0);
    const siblings = activityOf(sibling.id, sibling.instructor.user.id);
    const foreign = activityOf(foreignOfferingId, otherTenant.admin.user.id, 'Foreign', otherTenant.tenantId);
    const strangers = { unknown: MISSING_ID, anotherCourse: siblings, anotherTenant: foreign };

    for (const [name, activityId] of Object.entries(strangers)) {
      const res = await t.call('POST', assignmentsPath(o.id), { as: o.instructor, body: { label: 'Tied', grade_metadata: { score_maximum: 10 }, activity_id: activityId } });
      expectProblem(res, 422, 'validation_failed');
      expect(res.body.errors, name).toEqual([{ path: 'activity_id', message: 'no such activity in this offering' }]);
      expect(res.headers.get('location')).toBeNull();
    }
    expect((await t.call('GET', assignmentsPath(o.id), { as: o.instructor })).body.pagination.total).toBe(0);

    const tied = await createAssignment(o, { label: 'Tied', activity_id: own });
    expect(tied.activity_id).toBe(own);
    const plain = await createAssignment(o, { label: 'Plain' });
    for (const a of [tied, plain]) {
      for (const [name, activityId] of Object.entries(strangers)) {
        const res = await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: { label: 'Changed', activity_id: activityId } });
        expectProblem(res, 422, 'validation_failed');
        expect(res.body.errors, name).toEqual([{ path: 'activity_id', message: 'no such activity in this offering' }]);
      }
      const unchanged = await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: o.instructor });
      expect(unchanged.body).toEqual(a);
    }
    // Its own offering's activity, and null to untie, are fine; so is naming the one it has.
    const retied = await t.call('PATCH', `/api/gradebook/assignments/${plain.id}`, { as: o.instructor, body: { activity_id: own } });
    expect(retied.status).toBe(200);
    expect(retied.body.activity_id).toBe(own);
    const untied = await t.call('PATCH', `/api/gradebook/assignments/${tied.id}`, { as: o.instructor, body: { activity_id: null } });
    expect(untied.status).toBe(200);
    expect(untied.body.activity_id).toBeNull();
    expect((await t.call('PATCH', `/api/gradebook/assignments/${plain.id}`, { as: o.instructor, body: { activity_id: own, label: 'Same' } })).status).toBe(200);
    // A tenant admin gets the same answer for another course's activity.
    const byAdmin = await t.call('POST', assignmentsPath(o.id), { as: t.admin, body: { label: 'x', grade_metadata: { score_maximum: 1 }, activity_id: siblings } });
    expectProblem(byAdmin, 422, 'validation_failed');
  });

  it('refuses (409) a change that would make recorded grades invalid', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 10 } });
    expect((await t.call('PUT', gradePath(a.id, o.students[0]!.user.id), { as: o.instructor, body: { score: 8 } })).status).toBe(201);
    const lower = await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: { grade_metadata: { score_maximum: 5 } } });
    expect(lower.status).toBe(409);
    const passFail = await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: { grade_metadata: { grading_type: 'pass_fail' } } });
    expect(passFail.status).toBe(409);
    const ok = await t.call('PATCH', `/api/gradebook/assignments/${a.id}`, { as: o.instructor, body: { grade_metadata: { score_maximum: 8, grading_type: 'pass_fail' } } });
    expect(ok.status).toBe(200);
  });

  it('deletes with its grades (204, then 404)', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o);
    await t.call('PUT', gradePath(a.id, o.students[0]!.user.id), { as: o.instructor, body: { score: 3 } });
    expect((await t.call('DELETE', `/api/gradebook/assignments/${a.id}`, { as: o.instructor })).status).toBe(204);
    expect((await t.call('GET', `/api/gradebook/assignments/${a.id}`, { as: o.instructor })).status).toBe(404);
    expect((await t.call('DELETE', `/api/gradebook/assignments/${a.id}`, { as: o.instructor })).status).toBe(404);
    const grades = await t.call('GET', `/api/gradebook/offerings/${o.id}/grades`, { as: o.instructor });
    expect(grades.body.pagination.total).toBe(0);
  });
});

describe('PUT /api/gradebook/assignments/{id}/grades/{student_id}', () => {
  it('creates (201 + Location) then updates (200) a grade', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 10 } });
    const student = o.students[0]!.user.id;
    const created = await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 7.5, comment: 'good' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(gradePath(a.id, student));
    expect(created.body).toMatchObject({ offering_id: o.id, assignment_id: a.id, student_id: student, score: 7.5, score_maximum: 10, comment: 'good', graded_by: o.instructor.user.id });
    const updated = await t.call('PUT', gradePath(a.id, student), { as: t.admin, body: { score: 10 } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, score: 10, comment: 'good', graded_by: t.admin.user.id });
    const cleared = await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 10, comment: null } });
    expect(cleared.body.comment).toBeNull();
    expect((await t.call('GET', gradePath(a.id, student), { as: o.instructor })).body.score).toBe(10);
  });

  it('accepts the bounds and answers 422 for a score outside 0..score_maximum', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 10 } });
    const student = o.students[0]!.user.id;
    for (const score of [0, 10]) expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score } })).status).toBeLessThan(300);
    for (const score of [10.01, 11, -0.5, -1]) {
      const res = await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score } });
      expect(res.status, String(score)).toBe(422);
      expect(res.body.errors[0].path).toBe('score');
    }
    for (const body of [{}, { score: '5' }, { score: null }, { score: 5, extra: 1 }, { score: 5, comment: 7 }]) {
      expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body })).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('takes only 0 or score_maximum on a pass_fail assignment', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 1, grading_type: 'pass_fail' } });
    const student = o.students[0]!.user.id;
    expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 0.5 } })).status).toBe(422);
    expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 1 } })).status).toBe(201);
  });

  it('grades a student who completed the course, as final grades often come after completion', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o);
    const finished = o.students[0]!.user.id;
    setEnrollmentStatus(o.id, finished, 'completed');
    const res = await t.call('PUT', gradePath(a.id, finished), { as: o.instructor, body: { score: 1 } });
    expect(res.status).toBe(201);
  });

  it('answers 422 unless the student is a student of the offering, active or completed', async () => {
    const o = await newOffering(2);
    const a = await createAssignment(o);
    const dropped = o.students[1]!.user.id;
    setEnrollmentStatus(o.id, dropped, 'dropped');
    const otherOffering = await newOffering(1);
    const foreignUser = otherTenant.admin.user.id;
    for (const who of [o.ta.user.id, o.instructor.user.id, o.outsider.user.id, dropped, otherOffering.students[0]!.user.id, foreignUser, MISSING_ID]) {
      const res = await t.call('PUT', gradePath(a.id, who), { as: o.instructor, body: { score: 1 } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe('student_id');
    }
    expect((await t.call('PUT', gradePath(a.id, 'bob'), { as: o.instructor, body: { score: 1 } })).status).toBe(400);
  });

  it('is for teaching staff: the TA grades, the student 403, another tenant 404', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o);
    const student = o.students[0]!;
    const refused = await t.call('PUT', gradePath(a.id, student.user.id), { as: student, body: { score: 1 } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('Instructor access required');
    const byTa = await t.call('PUT', gradePath(a.id, student.user.id), { as: o.ta, body: { score: 1, comment: 'by the TA' } });
    expect(byTa.status, byTa.text).toBe(201);
    const history = await t.call('GET', `${gradePath(a.id, student.user.id)}/history`, { as: o.instructor });
    expect(history.body.data[0]).toMatchObject({ new_score: 1, changed_by: o.ta.user.id });
    expect((await t.call('PUT', gradePath(a.id, student.user.id), { as: otherTenant.admin, body: { score: 1 } })).status).toBe(404);
  });

  it('keeps every change as history: who, when, old and new score and comment, newest first', async () => {
    const o = await newOffering(1);
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 100 } });
    const student = o.students[0]!;
    const instructor2 = await enrolled(o.id, 'instructor');
    const t0 = t.clock.now().toISOString();
    await t.call('PUT', gradePath(a.id, student.user.id), { as: o.instructor, body: { score: 60, comment: 'first try' } });
    t.clock.advance(60_000);
    const t1 = t.clock.now().toISOString();
    await t.call('PUT', gradePath(a.id, student.user.id), { as: instructor2, body: { score: 75, comment: 'regraded' } });
    t.clock.advance(60_000);
    // Changes nothing: no history entry.
    expect((await t.call('PUT', gradePath(a.id, student.user.id), { as: instructor2, body: { score: 75 } })).status).toBe(200);
    const t2 = t.clock.now().toISOString();
    await t.call('PUT', gradePath(a.id, student.user.id), { as: o.instructor, body: { score: 75, comment: 'typo fixed' } });

    const res = await t.call('GET', `${gradePath(a.id, student.user.id)}/history`, { as: o.instructor });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 3, total_pages: 1 });
    expect(res.body.data.map((h: any) => ({ ...h, id: undefined }))).toEqual([
      { id: undefined, assignment_id: a.id, student_id: student.user.id, old_score: 75, new_score: 75, old_comment: 'regraded', new_comment: 'typo fixed', changed_by: o.instructor.user.id, changed_at: t2 },
      { id: undefined, assignment_id: a.id, student_id: student.user.id, old_score: 60, new_score: 75, old_comment: 'first try', new_comment: 'regraded', changed_by: instructor2.user.id, changed_at: t1 },
      { id: undefined, assignment_id: a.id, student_id: student.user.id, old_score: null, new_score: 60, old_comment: null, new_comment: 'first try', changed_by: o.instructor.user.id, changed_at: t0 },
    ]);
    const paged = await t.call('GET', `${gradePath(a.id, student.user.id)}/history?per_page=1&page=2`, { as: o.instructor });
    expect(paged.body.data[0].new_comment).toBe('regraded');
    expect((await t.call('GET', `${gradePath(a.id, student.user.id)}/history?per_page=101`, { as: o.instructor })).status).toBe(400);
    expect((await t.call('GET', `${gradePath(a.id, student.user.id)}/history`, { as: student })).status).toBe(403);
    expect((await t.call('GET', `${gradePath(a.id, student.user.id)}/history`, { as: o.ta })).status).toBe(200);
    expect((await t.call('GET', `${gradePath(a.id, student.user.id)}/history`, { as: otherTenant.admin })).status).toBe(404);
    // A student id that is no student here (unknown, or of another tenant) is 404, as for the grade itself.
    for (const who of [MISSING_ID, otherTenant.admin.user.id, o.ta.user.id]) {
      expect((await t.call('GET', `${gradePath(a.id, who)}/history`, { as: o.instructor })).status, who).toBe(404);
    }
  });

  it('lets a student read their own grade, and nobody else but the teaching staff', async () => {
    const o = await newOffering(2);
    const a = await createAssignment(o);
    const [me, classmate] = o.students as [TestUser, TestUser];
    await t.call('PUT', gradePath(a.id, me.user.id), { as: o.instructor, body: { score: 4 } });
    expect((await t.call('GET', gradePath(a.id, me.user.id), { as: me })).body.score).toBe(4);
    expect((await t.call('GET', gradePath(a.id, me.user.id), { as: o.instructor })).status).toBe(200);
    expect((await t.call('GET', gradePath(a.id, me.user.id), { as: o.ta })).status).toBe(200);
    for (const who of [classmate, o.outsider]) expect((await t.call('GET', gradePath(a.id, me.user.id), { as: who })).status).toBe(403);
    expect((await t.call('GET', gradePath(a.id, classmate.user.id), { as: classmate })).status).toBe(404);
  });
});

describe('GET /api/gradebook/offerings/{offering_id}/grades (JSON)', () => {
  it('lists grade rows paginated and filtered; instructor only', async () => {
    const o = await newOffering(3);
    const a1 = await createAssignment(o, { label: 'One' });
    const a2 = await createAssignment(o, { label: 'Two' });
    for (const s of o.students) {
      await t.call('PUT', gradePath(a1.id, s.user.id), { as: o.instructor, body: { score: 5 } });
      await t.call('PUT', gradePath(a2.id, s.user.id), { as: o.instructor, body: { score: 6 } });
    }
    const path = `/api/gradebook/offerings/${o.id}/grades`;
    const all = await t.call('GET', path, { as: o.instructor });
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 100, total: 6, total_pages: 1 });
    const keys = all.body.data.map((g: any) => `${g.student_id}/${g.assignment_id}`);
    expect(keys).toEqual([...keys].sort());
    expect(all.body.data[0]).toMatchObject({ offering_id: o.id, score_maximum: 10, graded_by: o.instructor.user.id });

    const page = await t.call('GET', `${path}?per_page=4&page=2`, { as: o.instructor });
    expect(page.body.data).toEqual(all.body.data.slice(4));
    const byAssignment = await t.call('GET', `${path}?assignment_id=${a2.id}`, { as: o.instructor });
    expect(byAssignment.body.data.every((g: any) => g.assignment_id === a2.id && g.score === 6)).toBe(true);
    expect(byAssignment.body.pagination.total).toBe(3);
    const byStudent = await t.call('GET', `${path}?student_id=${o.students[1]!.user.id}`, { as: o.instructor });
    expect(byStudent.body.pagination.total).toBe(2);

    for (const q of ['per_page=101', 'page=0', 'format=xlsx', 'assignment_id=1']) expect((await t.call('GET', `${path}?${q}`, { as: o.instructor })).status, q).toBe(400);
    for (const q of ['', '?format=csv']) {
      const res = await t.call('GET', `${path}${q}`, { as: o.students[0]! });
      expect(res.status).toBe(403);
      expect(res.body.detail).toBe('Instructor access required');
      expect((await t.call('GET', `${path}${q}`, { as: o.ta })).status).toBe(200);
    }
    expect((await t.call('GET', `/api/gradebook/offerings/${foreignOfferingId}/grades`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', path)).status).toBe(401);
  });
});

describe('GET /api/gradebook/offerings/{offering_id}/students/{student_id}/grades', () => {
  it('shows the student every assignment with their grade, percent and standing', async () => {
    const o = await newOffering(2);
    const a1 = await createAssignment(o, { label: 'One', grade_metadata: { score_maximum: 20 } });
    const a2 = await createAssignment(o, { label: 'Two', grade_metadata: { score_maximum: 10, weight: 3 } });
    const me = o.students[0]!;
    await t.call('PUT', gradePath(a1.id, me.user.id), { as: o.instructor, body: { score: 15, comment: 'ok' } });
    const path = `/api/gradebook/offerings/${o.id}/students/${me.user.id}/grades`;
    const res = await t.call('GET', path, { as: me });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      offering_id: o.id,
      student: { id: me.user.id, name: me.user.name, email: me.user.email },
      weighted_percent: 75,
      letter: 'C',
    });
    expect(res.body.grades).toEqual([
      { assignment_id: a1.id, label: 'One', grade_metadata: a1.grade_metadata, score: 15, percent: 75, comment: 'ok', graded_at: expect.any(String) },
      { assignment_id: a2.id, label: 'Two', grade_metadata: a2.grade_metadata, score: null, percent: null, comment: null, graded_at: null },
    ]);
    await t.call('PUT', gradePath(a2.id, me.user.id), { as: o.instructor, body: { score: 10 } });
    // (1 × 0.75 + 3 × 1.0) / 4 = 93.75 %
    const after = await t.call('GET', path, { as: o.instructor });
    expect(after.body).toMatchObject({ weighted_percent: 93.75, letter: 'A' });
    expect((await t.call('GET', path, { as: t.admin })).status).toBe(200);
  });

  it('answers 403 to anyone else, 404 for a user who is not a student of the offering', async () => {
    const o = await newOffering(2);
    const [me, classmate] = o.students as [TestUser, TestUser];
    const path = (offeringId: string, studentId: string) => `/api/gradebook/offerings/${offeringId}/students/${studentId}/grades`;
    expect((await t.call('GET', path(o.id, me.user.id), { as: o.ta })).status).toBe(200);
    for (const who of [classmate, o.outsider]) {
      const res = await t.call('GET', path(o.id, me.user.id), { as: who });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await t.call('GET', path(o.id, o.ta.user.id), { as: o.instructor })).status).toBe(404);
    expect((await t.call('GET', path(o.id, o.outsider.user.id), { as: o.instructor })).status).toBe(404);
    expect((await t.call('GET', path(o.id, o.outsider.user.id), { as: o.outsider })).status).toBe(404);
    expect((await t.call('GET', path(o.id, MISSING_ID), { as: o.instructor })).status).toBe(404);
    expect((await t.call('GET', path(foreignOfferingId, me.user.id), { as: me })).status).toBe(404);
    expect((await t.call('GET', path(o.id, me.user.id), { as: otherTenant.admin })).status).toBe(404);
    expect((await t.call('GET', path(o.id, 'me'), { as: me })).status).toBe(400);
    expect((await t.call('GET', path(o.id, me.user.id))).status).toBe(401);
    // A dropped student still reads their own grades.
    setEnrollmentStatus(o.id, me.user.id, 'dropped');
    expect((await t.call('GET', path(o.id, me.user.id), { as: me })).status).toBe(200);
  });
});

describe('GET/PUT /api/gradebook/offerings/{offering_id}/settings', () => {
  it('starts from the default scale and no category weights, and replaces them', async () => {
    const o = await newOffering(0);
    const path = `/api/gradebook/offerings/${o.id}/settings`;
    const initial = await t.call('GET', path, { as: o.instructor });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      offering_id: o.id,
      category_weights: {},
      letter_scale: [
        { letter: 'A', min_percent: 90 },
        { letter: 'B', min_percent: 80 },
        { letter: 'C', min_percent: 70 },
        { letter: 'D', min_percent: 60 },
        { letter: 'F', min_percent: 0 },
      ],
      updated_at: null,
    });
    const body = { category_weights: { exams: 60, homework: 40 }, letter_scale: [{ letter: 'Pass', min_percent: 50 }, { letter: 'Fail', min_percent: 0 }] };
    const put = await t.call('PUT', path, { as: o.instructor, body });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ...body, updated_at: expect.any(String) });
    expect((await t.call('GET', path, { as: o.instructor })).body).toEqual(put.body);
    // A PUT replaces the whole: a part left out is a 422 naming it (it used to reset that part to
    // its default, an empty body every part), and nothing changes.
    for (const [partial, missing] of [[{ category_weights: { exams: 1 } }, ['letter_scale']], [{}, ['category_weights', 'letter_scale']]] as const) {
      const refused = await t.call('PUT', path, { as: o.instructor, body: partial });
      expectProblem(refused, 422, 'validation_failed', JSON.stringify(partial));
      expect(refused.body.errors).toEqual(missing.map((name) => ({ path: name, message: `${name} is required` })));
    }
    expect((await t.call('GET', path, { as: o.instructor })).body).toEqual(put.body);
    const reset = await t.call('PUT', path, { as: o.instructor, body: { category_weights: { exams: 1 }, letter_scale: initial.body.letter_scale } });
    expect(reset.body.letter_scale).toEqual(initial.body.letter_scale);
  });

  it('answers 422 for a scale that is unsorted, out of 0..100, not ending at 0 or repeating a letter, and for bad weights', async () => {
    const o = await newOffering(0);
    const path = `/api/gradebook/offerings/${o.id}/settings`;
    // Each with the other part valid (a PUT takes both), so that only the rule named fails.
    const passFail = [{ letter: 'P', min_percent: 50 }, { letter: 'F', min_percent: 0 }];
    const bad: unknown[] = [
      { category_weights: {}, letter_scale: [{ letter: 'B', min_percent: 80 }, { letter: 'A', min_percent: 90 }, { letter: 'F', min_percent: 0 }] },
      { category_weights: {}, letter_scale: [{ letter: 'A', min_percent: 90 }, { letter: 'B', min_percent: 90 }, { letter: 'F', min_percent: 0 }] },
      { category_weights: {}, letter_scale: [{ letter: 'A', min_percent: 120 }, { letter: 'F', min_percent: 0 }] },
      { category_weights: {}, letter_scale: [{ letter: 'A', min_percent: 90 }, { letter: 'F', min_percent: -10 }] },
      { category_weights: {}, letter_scale: [{ letter: 'A', min_percent: 90 }, { letter: 'B', min_percent: 50 }] },
      { category_weights: {}, letter_scale: [{ letter: 'A', min_percent: 90 }, { letter: 'A', min_percent: 0 }] },
      { category_weights: { exams: -1 }, letter_scale: passFail },
      { category_weights: { exams: 0, homework: 0 }, letter_scale: passFail },
    ];
    for (const body of bad) {
      const res = await t.call('PUT', path, { as: o.instructor, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
    const malformed: unknown[] = [{ letter_scale: 'A' }, { letter_scale: [] }, { letter_scale: [{ letter: 'A' }] }, { category_weights: { x: '1' } }, { other: 1 }];
    for (const body of malformed) expect((await t.call('PUT', path, { as: o.instructor, body })).status, JSON.stringify(body)).toBe(400);
    expect((await t.call('GET', path, { as: o.instructor })).body.updated_at).toBeNull();
  });

  it('is read by the teaching staff (TA too) and changed by instructors only', async () => {
    const o = await newOffering(1);
    const path = `/api/gradebook/offerings/${o.id}/settings`;
    expect((await t.call('GET', path, { as: o.ta })).status).toBe(200);
    expect((await t.call('GET', path, { as: o.students[0]! })).status).toBe(403);
    for (const who of [o.ta, o.students[0]!]) {
      // A complete body (an incomplete one is refused before anyone's rights are looked at).
      expect((await t.call('PUT', path, { as: who, body: { category_weights: {}, letter_scale: [{ letter: 'F', min_percent: 0 }] } })).status).toBe(403);
    }
    expect((await t.call('GET', `/api/gradebook/offerings/${foreignOfferingId}/settings`, { as: t.admin })).status).toBe(404);
  });
});

describe('a tenant member not enrolled and a dropped instructor', () => {
  it('get 403 "Instructor access required" on grades, summary, settings and history, and their writes change nothing', async () => {
    const o = await newOffering(1);
    const student = o.students[0]!;
    const a = await createAssignment(o, { grade_metadata: { score_maximum: 10 } });
    expect((await t.call('PUT', gradePath(a.id, student.user.id), { as: o.instructor, body: { score: 6, comment: 'kept' } })).status).toBe(201);
    const settingsPath = `/api/gradebook/offerings/${o.id}/settings`;
    const settings = { category_weights: { general: 1 }, letter_scale: [{ letter: 'P', min_percent: 50 }, { letter: 'F', min_percent: 0 }] };
    const saved = await t.call('PUT', settingsPath, { as: o.instructor, body: settings });
    expect(saved.status).toBe(200);
    const former = await enrolled(o.id, 'instructor');
    setEnrollmentStatus(o.id, former.user.id, 'dropped');
    const gradeBefore = (await t.call('GET', gradePath(a.id, student.user.id), { as: o.instructor })).body;
    const historyPath = `${gradePath(a.id, student.user.id)}/history`;

    const requests: [string, string, unknown?][] = [
      ['PUT', gradePath(a.id, student.user.id), { score: 9, comment: 'changed' }],
      ['GET', `/api/gradebook/offerings/${o.id}/grades`],
      ['GET', `/api/gradebook/offerings/${o.id}/grades?format=csv`],
      ['GET', `/api/gradebook/offerings/${o.id}/summary`],
      ['GET', settingsPath],
      ['PUT', settingsPath, { category_weights: { other: 1 }, letter_scale: settings.letter_scale }],
      ['GET', historyPath],
    ];
    for (const who of [o.outsider, former]) {
      for (const [method, path, body] of requests) {
        const res = await t.call(method, path, { as: who, body });
        expectProblem(res, 403, 'forbidden', `${method} ${path}`);
        expect(res.body.detail).toBe('Instructor access required');
      }
    }

    expect((await t.call('GET', gradePath(a.id, student.user.id), { as: o.instructor })).body).toEqual(gradeBefore);
    const history = await t.call('GET', historyPath, { as: o.instructor });
    expect(history.body.pagination.total).toBe(1);
    expect(history.body.data[0]).toMatchObject({ old_score: null, new_score: 6, new_comment: 'kept', changed_by: o.instructor.user.id });
    expect((await t.call('GET', settingsPath, { as: o.instructor })).body).toEqual(saved.body);
  });
});

describe('a soft-deleted offering', () => {
  it('answers 404 on its gradebook routes, to its instructor and to a tenant admin', async () => {
    const o = await newOffering(1);
    const student = o.students[0]!;
    const a = await createAssignment(o);
    expect((await t.call('PUT', gradePath(a.id, student.user.id), { as: o.instructor, body: { score: 5 } })).status).toBe(201);
    expect((await t.call('GET', `/api/gradebook/offerings/${o.id}/summary`, { as: o.instructor })).status).toBe(200);
    expect((await t.call('DELETE', `/api/courses/${o.id}`, { as: o.instructor })).status).toBe(204);

    const paths = [
      assignmentsPath(o.id),
      `/api/gradebook/assignments/${a.id}`,
      `/api/gradebook/offerings/${o.id}/grades`,
      `/api/gradebook/offerings/${o.id}/grades?format=csv`,
      `/api/gradebook/offerings/${o.id}/summary`,
    ];
    for (const who of [o.instructor, t.admin]) {
      for (const path of paths) {
        const res = await t.call('GET', path, { as: who });
        expect(res.status, path).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
  });
});

describe('Link header of paginated gradebook lists', () => {
  it('keeps the filters of /grades in first, prev, next and last', async () => {
    const o = await newOffering(2);
    const [me, other] = o.students as [TestUser, TestUser];
    const assignments = [];
    for (let i = 0; i < 3; i++) assignments.push(await createAssignment(o, { label: `A${i}` }));
    for (const a of assignments) {
      for (const s of [me, other]) expect((await t.call('PUT', gradePath(a.id, s.user.id), { as: o.instructor, body: { score: 4 } })).status).toBe(201);
    }
    const path = `/api/gradebook/offerings/${o.id}/grades`;
    const filter = `student_id=${me.user.id}`;
    const link = (page: number, rel: string) => `<${path}?${filter}&page=${page}&per_page=1>; rel="${rel}"`;

    const middle = await t.call('GET', `${path}?${filter}&page=2&per_page=1`, { as: o.instructor });
    expect(middle.status).toBe(200);
    expect(middle.body.pagination).toEqual({ page: 2, per_page: 1, total: 3, total_pages: 3 });
    expect(middle.body.data.map((g: any) => g.student_id)).toEqual([me.user.id]);
    expect(middle.headers.get('link')).toBe([link(1, 'first'), link(1, 'prev'), link(3, 'next'), link(3, 'last')].join(', '));

    const first = await t.call('GET', `${path}?per_page=1&${filter}`, { as: o.instructor });
    expect(first.headers.get('link')).toBe([link(1, 'first'), link(2, 'next'), link(3, 'last')].join(', '));

    const last = await t.call('GET', `${path}?${filter}&page=3&per_page=1`, { as: o.instructor });
    expect(last.headers.get('link')).toBe([link(1, 'first'), link(2, 'prev'), link(3, 'last')].join(', '));

    // Two filters at once, in the order the request gave them.
    const both = `assignment_id=${assignments[1]!.id}&student_id=${other.user.id}`;
    const one = await t.call('GET', `${path}?${both}&per_page=1`, { as: o.instructor });
    expect(one.body.pagination).toEqual({ page: 1, per_page: 1, total: 1, total_pages: 1 });
    expect(one.headers.get('link')).toBe([`<${path}?${both}&page=1&per_page=1>; rel="first"`, `<${path}?${both}&page=1&per_page=1>; rel="last"`].join(', '));
  });

  it('gives next and last on /history, and prev on a later page', async () => {
    const o = await newOffering(1);
    const student = o.students[0]!;
    const a = await createAssignment(o);
    for (const score of [1, 2, 3, 4, 5]) {
      expect((await t.call('PUT', gradePath(a.id, student.user.id), { as: o.instructor, body: { score } })).status).toBeLessThan(300);
      t.clock.advance(1000);
    }
    const path = `${gradePath(a.id, student.user.id)}/history`;
    const link = (page: number, rel: string) => `<${path}?page=${page}&per_page=2>; rel="${rel}"`;

    const first = await t.call('GET', `${path}?per_page=2`, { as: o.instructor });
    expect(first.status).toBe(200);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total: 5, total_pages: 3 });
    expect(first.body.data.map((h: any) => h.new_score)).toEqual([5, 4]);
    expect(first.headers.get('link')).toBe([link(1, 'first'), link(2, 'next'), link(3, 'last')].join(', '));

    const second = await t.call('GET', `${path}?page=2&per_page=2`, { as: o.instructor });
    expect(second.body.data.map((h: any) => h.new_score)).toEqual([3, 2]);
    expect(second.headers.get('link')).toBe([link(1, 'first'), link(1, 'prev'), link(3, 'next'), link(3, 'last')].join(', '));

    const third = await t.call('GET', `${path}?page=3&per_page=2`, { as: o.instructor });
    expect(third.body.data.map((h: any) => h.new_score)).toEqual([1]);
    expect(third.headers.get('link')).toBe([link(1, 'first'), link(2, 'prev'), link(3, 'last')].join(', '));
  });
});

describe('grading_type percent', () => {
  it('stores a score within 0..score_maximum like points, and answers 422 outside it without changing the grade', async () => {
    const o = await newOffering(1);
    const student = o.students[0]!.user.id;
    const a = await createAssignment(o, { label: 'Lab', grade_metadata: { score_maximum: 100, grading_type: 'percent' } });
    expect(a.grade_metadata).toEqual({ score_maximum: 100, weight: 1, category: 'general', due_at: null, grading_type: 'percent' });

    const created = await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 87.5 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ assignment_id: a.id, student_id: student, score: 87.5, score_maximum: 100 });
    for (const score of [0, 100]) expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score } })).status).toBe(200);
    expect((await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score: 87.5 } })).status).toBe(200);

    for (const score of [100.01, 101, 150, -0.01, -5]) {
      const res = await t.call('PUT', gradePath(a.id, student), { as: o.instructor, body: { score } });
      expect(res.status, String(score)).toBe(422);
      expect(res.body).toMatchObject({ status: 422, code: 'validation_failed' });
      expect(res.body.errors).toEqual([{ path: 'score', message: "must be between 0 and 100 (the assignment's score_maximum)" }]);
    }
    expect((await t.call('GET', gradePath(a.id, student), { as: o.instructor })).body.score).toBe(87.5);
    expect((await t.call('GET', `${gradePath(a.id, student)}/history`, { as: o.instructor })).body.pagination.total).toBe(4);

    const view = await t.call('GET', `/api/gradebook/offerings/${o.id}/students/${student}/grades`, { as: o.instructor });
    expect(view.body).toMatchObject({ weighted_percent: 87.5, letter: 'B', grades: [{ assignment_id: a.id, score: 87.5, percent: 87.5 }] });
  });
});
