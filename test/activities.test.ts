// Activities through the HTTP API: instructors' CRUD under modules (positions, validation with
// 422 for unacceptable values, what a deletion takes with it), the learner's actions (deep link,
// shelf, skip, help), the learner rules (403 for non-learners, 409 for an enrollment that is over,
// 404 across tenants), a sequenced course walked from locked to completed (409 naming what blocks),
// the priority list with its filters and tiers, details, the module view and next up.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityStates, enrollments, eventRecipients, events, sequencingEdges } from '../db/schema';
import { feedPage } from '../src/events/log';
import { createEdge } from '../src/sequencing/edges';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t?.close());

interface Course {
  id: string;
  instructor: TestUser;
  ta: TestUser;
  student: TestUser;
  outsider: TestUser;
}

async function enrolled(courseId: string, role: 'instructor' | 'ta' | 'student', tenantId = t.defaultTenantId): Promise<TestUser> {
  const user = await t.newUser({ tenantId });
  insertEnrollment(t.db, { tenantId, courseId, userId: user.user.id, role });
  return user;
}

async function newCourse(status: 'draft' | 'published' = 'published', tenantId = t.defaultTenantId): Promise<Course> {
  const instructor = await t.newUser({ tenantId });
  const course = insertCourse(t.db, { tenantId, createdBy: instructor.user.id, status });
  insertEnrollment(t.db, { tenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  return {
    id: course.id,
    instructor,
    ta: await enrolled(course.id, 'ta', tenantId),
    student: await enrolled(course.id, 'student', tenantId),
    outsider: await t.newUser({ tenantId }),
  };
}

async function newModule(course: Course, title = 'Week 1'): Promise<string> {
  const res = await t.call('POST', `/api/courses/${course.id}/modules`, { as: course.instructor, body: { title } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function newActivity(course: Course, moduleId: string, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', `/api/modules/${moduleId}/activities`, {
    as: course.instructor,
    body: { title: 'Activity', type: 'reading', ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const act = (id: string, what = '') => `/api/activities/${id}${what}`;

function setEnrollmentStatus(courseId: string, userId: string, status: 'active' | 'completed' | 'dropped') {
  t.db.update(enrollments).set({ status }).where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, userId))).run();
}

function edge(course: Course, from: string, to: string, minScore: number | null = null) {
  return createEdge(t.db, t.clock, { tenantId: t.defaultTenantId, courseId: course.id, createdBy: course.instructor.user.id, fromNodeId: from, toNodeId: to, minScore });
}

describe('activities CRUD', () => {
  it('creates with defaults, inserts at a position (the others shift), lists in order, moves and deletes keeping positions dense', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId, { title: 'A' });
    expect(a).toMatchObject({ course_id: course.id, module_id: moduleId, title: 'A', type: 'reading', priority: 50, xp: 10, required: true, due_at: null, deep_link_url: null, position: 0 });
    const b = await newActivity(course, moduleId, { title: 'B', type: 'video', priority: 80, xp: 25, due_at: '2030-01-01T10:00:00+02:00', required: false, deep_link_url: 'https://videos.example.com/b', estimated_minutes: 12, min_seat_seconds: 300 });
    expect(b).toMatchObject({ position: 1, priority: 80, xp: 25, due_at: '2030-01-01T08:00:00.000Z', required: false, estimated_minutes: 12, min_seat_seconds: 300 });
    const c0 = await newActivity(course, moduleId, { title: 'C', position: 0 });
    expect(c0.position).toBe(0);

    const titles = async () => (await t.call('GET', `/api/modules/${moduleId}/activities`, { as: course.instructor })).body.data.map((x: { title: string; position: number }) => `${x.position}:${x.title}`);
    expect(await titles()).toEqual(['0:C', '1:A', '2:B']);
    const listed = await t.call('GET', `/api/modules/${moduleId}/activities?per_page=2`, { as: course.instructor });
    expect(listed.body.pagination).toMatchObject({ total: 3, total_pages: 2 });
    expect(listed.body.data[0]).toMatchObject({ state: null, available: null, locked: null });

    const moved = await t.call('PATCH', act(c0.id), { as: course.instructor, body: { position: 99, title: 'C last', priority: 0 } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ position: 2, title: 'C last', priority: 0 });
    expect(await titles()).toEqual(['0:A', '1:B', '2:C last']);

    const cleared = await t.call('PATCH', act(b.id), { as: course.instructor, body: { due_at: null, deep_link_url: null } });
    expect(cleared.body).toMatchObject({ due_at: null, deep_link_url: null });

    expect((await t.call('DELETE', act(a.id), { as: course.instructor })).status).toBe(204);
    expect(await titles()).toEqual(['0:B', '1:C last']);
    expectProblem(await t.call('GET', act(a.id), { as: course.instructor }), 404, 'not_found');
    expectProblem(await t.call('DELETE', act(a.id), { as: course.instructor }), 404, 'not_found');
    expectProblem(await t.call('POST', `/api/modules/${MISSING_ID}/activities`, { as: course.instructor, body: { title: 'x', type: 'quiz' } }), 404, 'not_found');
  });

  it('answers 422 for unacceptable values, naming the field, and 400 for malformed bodies; nothing is created', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const cases: [Record<string, unknown>, string][] = [
      [{ priority: 101 }, 'priority'],
      [{ priority: -1 }, 'priority'],
      [{ type: 'podcast' }, 'type'],
      [{ deep_link_url: 'javascript:alert(1)' }, 'deep_link_url'],
      [{ deep_link_url: 'ftp://files.example.com/a' }, 'deep_link_url'],
      [{ deep_link_url: 'not a url' }, 'deep_link_url'],
      [{ title: '   ' }, 'title'],
      [{ xp: -5 }, 'xp'],
      [{ estimated_minutes: -1 }, 'estimated_minutes'],
      [{ due_at: 'next tuesday' }, 'due_at'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: course.instructor, body: { title: 'T', type: 'quiz', ...body } });
      expectProblem(res, 422, 'validation_failed', JSON.stringify(body));
      expect(res.body.errors.map((e: { path: string }) => e.path), JSON.stringify(body)).toContain(field);
    }
    for (const body of [{ title: 'T', type: 'quiz', priority: 'high' }, { title: 'T', type: 'quiz', colour: 'red' }, { title: 'T' }]) {
      expectProblem(await t.call('POST', `/api/modules/${moduleId}/activities`, { as: course.instructor, body }), 400, 'validation_failed', JSON.stringify(body));
    }
    const a = await newActivity(course, moduleId);
    expectProblem(await t.call('PATCH', act(a.id), { as: course.instructor, body: { priority: 1000 } }), 422, 'validation_failed');
    expectProblem(await t.call('PATCH', act(a.id), { as: course.instructor, body: { deep_link_url: 'file:///etc/passwd' } }), 422, 'validation_failed');
    expectProblem(await t.call('PATCH', act(a.id), { as: course.instructor, body: {} }), 400, 'validation_failed');
    const list = await t.call('GET', `/api/modules/${moduleId}/activities`, { as: course.instructor });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ priority: 50, deep_link_url: null });
  });

  it("deleting an activity deletes learners' states on it and the edges touching it, and unties gradebook assignments", async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId, { title: 'A' });
    const b = await newActivity(course, moduleId, { title: 'B' });
    const c = await newActivity(course, moduleId, { title: 'C' });
    edge(course, a.id, b.id);
    edge(course, b.id, c.id);
    // B waits for A: a locked activity cannot be skipped, so A is completed first.
    expect((await t.call('POST', act(a.id, '/complete'), { as: course.student, body: {} })).status).toBe(200);
    expect((await t.call('POST', act(b.id, '/skip'), { as: course.student, body: {} })).status).toBe(200);
    const assignment = await t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, {
      as: course.instructor,
      body: { label: 'Quiz on B', grade_metadata: { score_maximum: 10 }, activity_id: b.id },
    });
    expect(assignment.status, assignment.text).toBe(201);

    expect((await t.call('DELETE', act(b.id), { as: course.instructor })).status).toBe(204);
    expect(t.db.select().from(activityStates).where(eq(activityStates.activityId, b.id)).all()).toEqual([]);
    expect(t.db.select().from(sequencingEdges).where(eq(sequencingEdges.courseId, course.id)).all()).toEqual([]);
    const after = await t.call('GET', `/api/gradebook/assignments/${assignment.body.id}`, { as: course.instructor });
    expect(after.status).toBe(200);
    expect(after.body.activity_id).toBeNull();
    // With B gone, C no longer waits for anything.
    expect((await t.call('GET', act(c.id), { as: course.student })).body.availability).toEqual({ available: true, reasons: [], unmet: [] });
  });

  it('deleting a module deletes its activities, their states and the edges touching them or the module', async () => {
    const course = await newCourse();
    const m1 = await newModule(course, 'Week 1');
    const m2 = await newModule(course, 'Week 2');
    const a = await newActivity(course, m1, { title: 'A' });
    const b = await newActivity(course, m2, { title: 'B' });
    edge(course, m1, m2);
    edge(course, a.id, b.id);
    expect((await t.call('POST', act(a.id, '/complete'), { as: course.student, body: {} })).status).toBe(200);
    expect((await t.call('DELETE', `/api/modules/${m1}`, { as: course.instructor })).status).toBe(204);
    expectProblem(await t.call('GET', act(a.id), { as: course.instructor }), 404, 'not_found');
    expect(t.db.select().from(activityStates).where(eq(activityStates.activityId, a.id)).all()).toEqual([]);
    expect(t.db.select().from(sequencingEdges).where(eq(sequencingEdges.courseId, course.id)).all()).toEqual([]);
    expect((await t.call('GET', act(b.id), { as: course.student })).body.availability.available).toBe(true);
  });

  it('hides the activities of a draft course from those who cannot read it, and of another tenant from everyone', async () => {
    const draft = await newCourse('draft');
    const moduleId = await newModule(draft);
    const a = await newActivity(draft, moduleId);
    expectProblem(await t.call('GET', act(a.id), { as: draft.outsider }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/modules/${moduleId}/activities`, { as: draft.outsider }), 404, 'not_found');
    expect((await t.call('GET', act(a.id), { as: draft.student })).status).toBe(200);
    const other = await t.newTenant('activities-other');
    expectProblem(await t.call('GET', act(a.id), { as: other.admin }), 404, 'not_found');
    expectProblem(await t.call('POST', act(a.id, '/complete'), { as: other.admin, body: {} }), 404, 'not_found');
    expectProblem(await t.call('PATCH', act(a.id), { as: other.admin, body: { title: 'x' } }), 404, 'not_found');
  });
});

describe('learner actions', () => {
  it('a deep-link click puts the activity in progress and counts clicks; no deep link is a 409', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId, { deep_link_url: 'https://lti.example.com/launch?x=1' });
    const first = await t.call('POST', act(a.id, '/deep-link-click'), { as: course.student });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ deep_link_url: 'https://lti.example.com/launch?x=1', clicks: 1 });
    expect((await t.call('POST', act(a.id, '/deep-link-click'), { as: course.student })).body.clicks).toBe(2);
    const details = await t.call('GET', act(a.id), { as: course.student });
    expect(details.body.state).toMatchObject({ status: 'in_progress', clicks: 2 });
    expect(details.body.state.started_at).toBe(t.clock.now().toISOString());
    const plain = await newActivity(course, moduleId);
    expectProblem(await t.call('POST', act(plain.id, '/deep-link-click'), { as: course.student }), 409, 'conflict');
  });

  it('save for later: reminder in the future (else 422), saving again keeps the date, un-save records the days; completing leaves the shelf', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId);
    const past = new Date(t.clock.now().getTime() - 60_000).toISOString();
    expectProblem(await t.call('POST', act(a.id, '/save'), { as: course.student, body: { remind_at: past } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', act(a.id, '/save'), { as: course.student, body: { remind_at: 'tomorrow' } }), 422, 'validation_failed');
    expect((await t.call('GET', act(a.id), { as: course.student })).body.state.status).toBe('not_started');

    const savedAt = t.clock.now().toISOString();
    const remind = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const saved = await t.call('POST', act(a.id, '/save'), { as: course.student, body: { remind_at: remind } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ status: 'in_progress', saved: true, saved_at: savedAt, remind_at: remind });
    t.clock.advance(3_600_000);
    const again = await t.call('POST', act(a.id, '/save'), { as: course.student });
    expect(again.body).toMatchObject({ saved_at: savedAt, remind_at: null });
    t.clock.advance(2 * 86_400_000 - 3_600_000);
    const off = await t.call('DELETE', act(a.id, '/save'), { as: course.student });
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ saved: false, saved_at: null, remind_at: null, shelf_days: 2 });
    expectProblem(await t.call('DELETE', act(a.id, '/save'), { as: course.student }), 404, 'not_found');

    expect((await t.call('POST', act(a.id, '/save'), { as: course.student })).status).toBe(200);
    t.clock.advance(86_400_000 / 2);
    const done = await t.call('POST', act(a.id, '/complete'), { as: course.student, body: {} });
    expect(done.body.state).toMatchObject({ status: 'completed', saved: false, completed_from_shelf: true, shelf_days: 0.5 });
    expectProblem(await t.call('POST', act(a.id, '/save'), { as: course.student }), 409, 'conflict');
  });

  it("shelf_days is given to two decimals, as the dashboard's days on the shelf", async () => {
    const course = await newCourse();
    const a = await newActivity(course, await newModule(course));
    expect((await t.call('POST', act(a.id, '/save'), { as: course.student })).status).toBe(200);
    t.clock.advance(8 * 3_600_000);
    const off = await t.call('DELETE', act(a.id, '/save'), { as: course.student });
    expect(off.status, off.text).toBe(200);
    expect(off.body.shelf_days).toBe(0.33);
  });

  it('skip with a reason; a skipped activity can still be completed; a completed one cannot be skipped', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId);
    const skipped = await t.call('POST', act(a.id, '/skip'), { as: course.student, body: { reason: 'I know this already' } });
    expect(skipped.status, skipped.text).toBe(200);
    expect(skipped.body).toMatchObject({ status: 'skipped', skip_reason: 'I know this already', skipped_at: t.clock.now().toISOString() });
    const done = await t.call('POST', act(a.id, '/complete'), { as: course.student });
    expect(done.status, done.text).toBe(200);
    expect(done.body.state.status).toBe('completed');
    expect(done.body.rewards.xp_awarded).toBeGreaterThan(0);
    expectProblem(await t.call('POST', act(a.id, '/skip'), { as: course.student, body: {} }), 409, 'conflict');
  });

  it("a help request is a 201 event in the feed of the course's instructors, not of its TA or other students", async () => {
    const course = await newCourse();
    const second = await enrolled(course.id, 'instructor');
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId, { title: 'Hard quiz' });
    const res = await t.call('POST', act(a.id, '/help'), { as: course.student, body: { message: 'Question 3 makes no sense to me' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      type: 'help.requested',
      actor_id: course.student.user.id,
      subject: { type: 'activity', id: a.id },
      course_id: course.id,
      data: { activity_id: a.id, course_id: course.id, user_id: course.student.user.id, message: 'Question 3 makes no sense to me' },
    });
    for (const instructor of [course.instructor, second]) expect(feedPage(t.db, instructor.user.id, 10, 0).rows.map((e) => e.id)).toEqual([res.body.id]);
    for (const other of [course.ta, course.student]) expect(feedPage(t.db, other.user.id, 10, 0).rows).toEqual([]);
    expectProblem(await t.call('POST', act(a.id, '/help'), { as: course.student, body: { message: '' } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', act(a.id, '/help'), { as: course.student, body: {} }), 400, 'validation_failed');
  });

  it('only active students act: instructors, TAs, admins and outsiders get 403; a dropped or completed enrollment gets 409', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId, { deep_link_url: 'https://example.com' });
    const admin = await t.newUser({ role: 'admin' });
    const actions: [string, string, unknown][] = [
      ['POST', '/complete', {}],
      ['POST', '/deep-link-click', undefined],
      ['POST', '/save', {}],
      ['POST', '/skip', {}],
      ['POST', '/help', { message: 'help' }],
    ];
    for (const who of [course.instructor, course.ta, course.outsider, admin]) {
      for (const [method, what, body] of actions) {
        const res = await t.call(method, act(a.id, what), { as: who, body });
        expectProblem(res, 403, 'forbidden', `${what} as ${who.user.name}`);
      }
    }
    const dropped = await enrolled(course.id, 'student');
    setEnrollmentStatus(course.id, dropped.user.id, 'dropped');
    const finished = await enrolled(course.id, 'student');
    setEnrollmentStatus(course.id, finished.user.id, 'completed');
    for (const who of [dropped, finished]) {
      const res = await t.call('POST', act(a.id, '/complete'), { as: who, body: {} });
      expectProblem(res, 409, 'conflict');
      expect(res.body.detail).toMatch(/dropped|completed/);
      expectProblem(await t.call('POST', act(a.id, '/save'), { as: who, body: {} }), 409, 'conflict');
    }
    expect(t.db.select().from(activityStates).where(eq(activityStates.activityId, a.id)).all()).toEqual([]);
  });

  it('completing in a draft course is a 409 saying the course is not open', async () => {
    const course = await newCourse('draft');
    const moduleId = await newModule(course);
    const a = await newActivity(course, moduleId);
    const res = await t.call('POST', act(a.id, '/complete'), { as: course.student, body: {} });
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toContain('not been published');
    expectProblem(await t.call('POST', act(a.id, '/complete'), { as: course.student, body: { score: 101 } }), 422, 'validation_failed');
  });
});

describe('a sequenced course, walked through by a learner', () => {
  it('locked → available → completed: a locked activity is a 409 naming what blocks it; min_score checks the completion score', async () => {
    const course = await newCourse();
    const m1 = await newModule(course, 'Basics');
    const m2 = await newModule(course, 'Advanced');
    const intro = await newActivity(course, m1, { title: 'Intro reading' });
    const quiz = await newActivity(course, m1, { title: 'Basics quiz', type: 'quiz' });
    const deep = await newActivity(course, m2, { title: 'Deep dive' });
    edge(course, intro.id, quiz.id);
    edge(course, m1, m2, 80);

    const status = async () =>
      Object.fromEntries(
        (await t.call('GET', '/api/activities', { as: course.student })).body.data.map((x: { title: string; locked: boolean; state: { status: string } }) => [x.title, x.locked ? 'locked' : x.state.status]),
      );
    expect(await status()).toEqual({ 'Intro reading': 'not_started', 'Basics quiz': 'locked', 'Deep dive': 'locked' });

    const blocked = await t.call('POST', act(quiz.id, '/complete'), { as: course.student, body: { score: 100 } });
    expectProblem(blocked, 409, 'conflict');
    expect(blocked.body.detail).toContain('Intro reading');
    expect(blocked.body.errors).toEqual([{ path: `prerequisites.${intro.id}`, message: expect.stringContaining('Intro reading') }]);
    const details = await t.call('GET', act(quiz.id), { as: course.student });
    expect(details.body.availability).toMatchObject({ available: false, unmet: [{ node_id: intro.id, node_type: 'activity', title: 'Intro reading' }] });
    expect(details.body.availability.reasons[0]).toContain('Intro reading');

    expect((await t.call('POST', act(intro.id, '/complete'), { as: course.student })).status).toBe(200);
    expect(await status()).toEqual({ 'Intro reading': 'completed', 'Basics quiz': 'not_started', 'Deep dive': 'locked' });

    // A score under the edge's min_score completes the quiz but leaves the next module locked.
    expect((await t.call('POST', act(quiz.id, '/complete'), { as: course.student, body: { score: 60 } })).status).toBe(200);
    const lockedDeep = await t.call('POST', act(deep.id, '/complete'), { as: course.student, body: {} });
    expectProblem(lockedDeep, 409, 'conflict');
    expect(lockedDeep.body.detail).toMatch(/80%.*Basics.*60%/);

    // Completing again awards nothing but keeps a better score, which unlocks it.
    const retake = await t.call('POST', act(quiz.id, '/complete'), { as: course.student, body: { score: 85 } });
    expect(retake.body.rewards.xp_awarded).toBe(0);
    expect(retake.body.state.score).toBe(85);
    expect(await status()).toEqual({ 'Intro reading': 'completed', 'Basics quiz': 'completed', 'Deep dive': 'not_started' });
    const last = await t.call('POST', act(deep.id, '/complete'), { as: course.student, body: {} });
    expect(last.status, last.text).toBe(200);
    expect(last.body.rewards.badges_awarded).toEqual(expect.arrayContaining([{ badge: 'module_completed', scope_id: m2 }, { badge: 'course_completed', scope_id: course.id }]));
  });

  it('min_score against a recorded gradebook grade of an assignment tied to the activity', async () => {
    const course = await newCourse();
    const moduleId = await newModule(course);
    const exam = await newActivity(course, moduleId, { title: 'Exam', type: 'assignment' });
    const next = await newActivity(course, moduleId, { title: 'Next' });
    edge(course, exam.id, next.id, 70);
    const assignment = await t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, {
      as: course.instructor,
      body: { label: 'Exam', grade_metadata: { score_maximum: 20 }, activity_id: exam.id },
    });
    expect(assignment.status).toBe(201);
    expect((await t.call('POST', act(exam.id, '/complete'), { as: course.student, body: { score: 100 } })).status).toBe(200);
    const graded = await t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${course.student.user.id}`, { as: course.instructor, body: { score: 10 } });
    expect(graded.status, graded.text).toBe(201);
    const blocked = await t.call('POST', act(next.id, '/complete'), { as: course.student, body: {} });
    expectProblem(blocked, 409, 'conflict');
    expect(blocked.body.detail).toContain('50%');
    await t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${course.student.user.id}`, { as: course.instructor, body: { score: 15 } });
    expect((await t.call('POST', act(next.id, '/complete'), { as: course.student, body: {} })).status).toBe(200);
  });
});

describe('the priority list, details, module view and next up', () => {
  it('orders by tier (available, locked, skipped, completed) then score; filters by course and status; paginates', async () => {
    const course = await newCourse();
    const other = await newCourse();
    const student = course.student;
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: other.id, userId: student.user.id });
    const m = await newModule(course);
    const om = await newModule(other);
    const now = t.clock.now().getTime();
    const low = await newActivity(course, m, { title: 'low', priority: 10 });
    const high = await newActivity(course, m, { title: 'high', priority: 90 });
    const overdue = await newActivity(course, m, { title: 'overdue', priority: 0, due_at: new Date(now - 3_600_000).toISOString() });
    const locked = await newActivity(course, m, { title: 'locked', priority: 100 });
    const skipped = await newActivity(course, m, { title: 'skipped', priority: 100 });
    const done = await newActivity(course, m, { title: 'done', priority: 100 });
    const elsewhere = await newActivity(other, om, { title: 'elsewhere', priority: 60, required: false });
    edge(course, low.id, locked.id);
    await t.call('POST', act(skipped.id, '/skip'), { as: student, body: {} });
    await t.call('POST', act(done.id, '/complete'), { as: student, body: {} });

    const list = await t.call('GET', '/api/activities', { as: student });
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((x: { title: string }) => x.title)).toEqual(['overdue', 'high', 'elsewhere', 'low', 'locked', 'skipped', 'done']);
    const byTitle = Object.fromEntries(list.body.data.map((x: { title: string }) => [x.title, x]));
    expect(byTitle.overdue).toMatchObject({ overdue: true, available: true, locked: false, priority_score: 125 });
    expect(byTitle.locked).toMatchObject({ locked: true, available: false });
    expect(byTitle.skipped).toMatchObject({ locked: false, state: { status: 'skipped' } });
    expect(list.body.pagination).toMatchObject({ total: 7 });

    const ofCourse = await t.call('GET', `/api/activities?course_id=${other.id}`, { as: student });
    expect(ofCourse.body.data.map((x: { id: string }) => x.id)).toEqual([elsewhere.id]);
    const filtered = async (status: string) => (await t.call('GET', `/api/activities?status=${status}`, { as: student })).body.data.map((x: { title: string }) => x.title);
    expect(await filtered('locked')).toEqual(['locked']);
    expect(await filtered('completed')).toEqual(['done']);
    expect(await filtered('skipped')).toEqual(['skipped']);
    expect(await filtered('not_started')).toEqual(['overdue', 'high', 'elsewhere', 'low', 'locked']);
    const page2 = await t.call('GET', '/api/activities?per_page=2&page=2', { as: student });
    expect(page2.body.data.map((x: { title: string }) => x.title)).toEqual(['elsewhere', 'low']);
    expect(page2.body.pagination).toMatchObject({ page: 2, per_page: 2, total: 7, total_pages: 4 });
    expect(page2.headers.get('link')).toContain('rel="next"');
    expectProblem(await t.call('GET', '/api/activities?status=bogus', { as: student }), 400, 'validation_failed');
    expectProblem(await t.call('GET', '/api/activities?sort=title', { as: student }), 400, 'validation_failed');

    // Next up: the available ones only, same order; a dropped course leaves both lists.
    const next = await t.call('GET', '/api/dashboard/next-up?per_page=3', { as: student });
    expect(next.body.data.map((x: { title: string }) => x.title)).toEqual(['overdue', 'high', 'elsewhere']);
    expect(next.body.pagination.total).toBe(4);
    setEnrollmentStatus(other.id, student.user.id, 'dropped');
    expect((await t.call('GET', '/api/dashboard/next-up', { as: student })).body.data.map((x: { title: string }) => x.title)).toEqual(['overdue', 'high', 'low']);
    expect((await t.call('GET', '/api/activities', { as: course.instructor })).body.data).toEqual([]);
  });

  it("details show the learner's state, availability and the rewards on offer; the module view shows states and locks", async () => {
    const course = await newCourse();
    const m = await newModule(course);
    const due = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const a = await newActivity(course, m, { title: 'A', xp: 20, due_at: due });
    const b = await newActivity(course, m, { title: 'B' });
    edge(course, a.id, b.id);
    const details = await t.call('GET', act(a.id), { as: course.student });
    expect(details.body).toMatchObject({
      id: a.id,
      state: { status: 'not_started', clicks: 0, saved: false },
      availability: { available: true, reasons: [], unmet: [] },
      rewards: { xp: 20, on_time_bonus: 10, xp_if_completed_now: 30 },
    });
    expect(details.body.rewards.badges).toContain('first_completion');
    const asInstructor = await t.call('GET', act(a.id), { as: course.instructor });
    expect(asInstructor.body).toMatchObject({ state: null, availability: null, rewards: null });

    const view = await t.call('GET', `/api/modules/${m}/activities`, { as: course.student });
    expect(view.body.data.map((x: { title: string; locked: boolean; available: boolean; state: { status: string } }) => [x.title, x.available, x.locked, x.state.status])).toEqual([
      ['A', true, false, 'not_started'],
      ['B', false, true, 'not_started'],
    ]);
    await t.call('POST', act(a.id, '/complete'), { as: course.student });
    expect((await t.call('GET', act(a.id), { as: course.student })).body.rewards).toBeNull();
  });
});

describe('events of a completion', () => {
  it('activity.completed, badge.awarded and level.reached go to the learner, in the same log', async () => {
    const course = await newCourse();
    const m = await newModule(course);
    const a = await newActivity(course, m, { xp: 150 });
    const res = await t.call('POST', act(a.id, '/complete'), { as: course.student, body: { score: 75 } });
    expect(res.body.rewards).toMatchObject({ xp_awarded: 150, total_xp: 150, level: 2, level_up: true, streak_days: 1 });
    const feed = feedPage(t.db, course.student.user.id, 20, 0).rows;
    expect(feed.map((e) => e.type).sort()).toEqual(['activity.completed', 'badge.awarded', 'badge.awarded', 'badge.awarded', 'level.reached']);
    const completed = feed.find((e) => e.type === 'activity.completed')!;
    expect(JSON.parse(completed.payload)).toMatchObject({ activity_id: a.id, module_id: m, course_id: course.id, score: 75, xp_awarded: 150 });
    const badges = feed.filter((e) => e.type === 'badge.awarded').map((e) => JSON.parse(e.payload).badge).sort();
    expect(badges).toEqual(['course_completed', 'first_completion', 'module_completed']);
    expect(feedPage(t.db, course.instructor.user.id, 20, 0).rows).toEqual([]);
    const recipients = t.db.select().from(eventRecipients).innerJoin(events, eq(events.seq, eventRecipients.eventSeq)).where(eq(events.courseId, course.id)).all();
    expect(new Set(recipients.map((r) => r.event_recipients.userId))).toEqual(new Set([course.student.user.id]));
  });
});

