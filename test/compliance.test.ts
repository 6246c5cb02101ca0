// Compliance seat time through the HTTP API, on the manual clock: credited time with gaps just
// under, at and just over the idle timeout, session switching, the lazy end (and the sweep) of an
// abandoned session, completion gated by seat time, compliance flipping at the required time, the
// course report as JSON and as CSV parsed back (formula injection neutralised), the sessions
// listing and its filters, and the refusals (403, 404, 409, 422).
import { parse } from 'csv-parse/sync';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollments, seatSessions } from '../db/schema';
import { endIdleSessions } from '../src/compliance/service';
import { createEdge } from '../src/sequencing/edges';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { formulaCells } from './helpers/spreadsheet';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t?.close());

const SECOND = 1000;
const TIMEOUT = 300 * SECOND;

interface Course {
  id: string;
  instructor: TestUser;
  ta: TestUser;
  student: TestUser;
  moduleId: string;
}

async function enrolled(courseId: string, role: 'instructor' | 'ta' | 'student', name?: string): Promise<TestUser> {
  const user = await t.newUser({ name });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: user.user.id, role });
  return user;
}

async function newCourse(): Promise<Course> {
  const instructor = await t.newUser();
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  const module = await t.call('POST', `/api/courses/${course.id}/modules`, { as: instructor, body: { title: 'Week 1' } });
  expect(module.status, module.text).toBe(201);
  return { id: course.id, instructor, ta: await enrolled(course.id, 'ta'), student: await enrolled(course.id, 'student'), moduleId: module.body.id };
}

async function newActivity(course: Course, body: Record<string, unknown> = {}, moduleId = course.moduleId): Promise<string> {
  const res = await t.call('POST', `/api/modules/${moduleId}/activities`, { as: course.instructor, body: { title: 'Safety video', type: 'video', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function start(as: TestUser, courseId: string, blockId: string) {
  const res = await t.call('POST', '/api/compliance/sessions', { as, body: { course_id: courseId, block_id: blockId } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const beat = (as: TestUser, id: string) => t.call('POST', `/api/compliance/sessions/${id}/heartbeat`, { as });
const status = (as: TestUser, blockId: string, userId?: string) =>
  t.call('GET', `/api/compliance/blocks/${blockId}/status${userId ? `?user_id=${userId}` : ''}`, { as });

function setEnrollmentStatus(courseId: string, userId: string, value: 'active' | 'completed' | 'dropped') {
  t.db.update(enrollments).set({ status: value }).where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, userId))).run();
}

describe('seat-time sessions', () => {
  it('credits gaps up to the idle timeout (just under and exactly), nothing for a gap just over it, and the session then ends at its last heartbeat', async () => {
    const course = await newCourse();
    const activity = await newActivity(course, { min_seat_seconds: 3600 });
    const session = await start(course.student, course.id, activity);
    expect(session).toMatchObject({ active: true, credited_seconds: 0, heartbeats: 0, idle_timeout_seconds: 300, block_type: 'activity', end_reason: null, previous_session: null });
    const startedAt = t.clock.now().getTime();

    t.clock.advance(TIMEOUT - 1); // just under
    let res = await beat(course.student, session.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ credited_seconds: 299.999, heartbeats: 1, active: true });

    t.clock.advance(TIMEOUT); // exactly the timeout: "no longer than" it still earns
    res = await beat(course.student, session.id);
    expect(res.body).toMatchObject({ credited_seconds: 599.999, heartbeats: 2 });
    const lastBeat = t.clock.now().getTime();
    expect(res.body.expires_at).toBe(new Date(lastBeat + TIMEOUT).toISOString());

    t.clock.advance(TIMEOUT + 1); // just over: nothing more, and the session has ended by itself
    res = await beat(course.student, session.id);
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toMatch(/ended by itself/);
    const row = t.db.select().from(seatSessions).where(eq(seatSessions.id, session.id)).get()!;
    expect(row).toMatchObject({ endedAtMs: lastBeat, endReason: 'timed_out', creditedMs: 599_999, heartbeats: 2 });
    expect(row.endedAtMs! - startedAt).toBe(599_999);

    // A heartbeat on an ended session stays 409 and credits nothing; the status agrees.
    t.clock.advance(10 * SECOND);
    expectProblem(await beat(course.student, session.id), 409, 'conflict');
    expectProblem(await t.call('POST', `/api/compliance/sessions/${session.id}/end`, { as: course.student }), 409, 'conflict');
    expect((await status(course.student, activity)).body).toMatchObject({ required_seconds: 3600, credited_seconds: 599.999, remaining_seconds: 3000.001, compliant: false });
    expectProblem(await t.call('GET', '/api/compliance/sessions/active', { as: course.student }), 404, 'not_found');
  });

  it('ending credits the interval since the last heartbeat; the active session is found until then', async () => {
    const course = await newCourse();
    const activity = await newActivity(course);
    expectProblem(await t.call('GET', '/api/compliance/sessions/active', { as: course.student }), 404, 'not_found');
    const session = await start(course.student, course.id, activity);
    const active = await t.call('GET', '/api/compliance/sessions/active', { as: course.student });
    expect(active.status).toBe(200);
    expect(active.body.id).toBe(session.id);
    t.clock.advance(42 * SECOND);
    const ended = await t.call('POST', `/api/compliance/sessions/${session.id}/end`, { as: course.student });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body).toMatchObject({ active: false, end_reason: 'ended', credited_seconds: 42, duration_seconds: 42, expires_at: null });
    expectProblem(await t.call('GET', '/api/compliance/sessions/active', { as: course.student }), 404, 'not_found');
  });

  it('starting another session ends the previous one (switched), crediting it up to now', async () => {
    const course = await newCourse();
    const a = await newActivity(course, { title: 'A' });
    const b = await newActivity(course, { title: 'B' });
    const first = await start(course.student, course.id, a);
    t.clock.advance(60 * SECOND);
    expect((await beat(course.student, first.id)).status).toBe(200);
    t.clock.advance(30 * SECOND);
    const second = await start(course.student, course.id, b);
    expect(second.previous_session).toMatchObject({ id: first.id, active: false, end_reason: 'switched', credited_seconds: 90 });
    expect((await t.call('GET', '/api/compliance/sessions/active', { as: course.student })).body.id).toBe(second.id);
    expectProblem(await beat(course.student, first.id), 409, 'conflict');
    // A module is a block too; switching to it ends the session on B.
    t.clock.advance(5 * SECOND);
    const third = await start(course.student, course.id, course.moduleId);
    expect(third).toMatchObject({ block_type: 'module', block_id: course.moduleId });
    expect(third.previous_session).toMatchObject({ id: second.id, end_reason: 'switched', credited_seconds: 5 });
    // One open session per learner, whatever happened.
    const open = t.db.select().from(seatSessions).where(and(eq(seatSessions.userId, course.student.user.id))).all().filter((s) => s.endedAtMs === null);
    expect(open.map((s) => s.id)).toEqual([third.id]);
  });

  it('an abandoned session is ended lazily on the next read, at its last heartbeat, and by the sweep', async () => {
    const course = await newCourse();
    const activity = await newActivity(course);
    const session = await start(course.student, course.id, activity);
    t.clock.advance(100 * SECOND);
    await beat(course.student, session.id);
    const lastBeat = t.clock.now().toISOString();
    t.clock.advance(TIMEOUT + 1);
    // Nothing has recorded the end yet.
    expect(t.db.select().from(seatSessions).where(eq(seatSessions.id, session.id)).get()!.endedAtMs).toBeNull();
    expectProblem(await t.call('GET', '/api/compliance/sessions/active', { as: course.student }), 404, 'not_found');
    const listed = await t.call('GET', `/api/compliance/courses/${course.id}/sessions`, { as: course.student });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data[0]).toMatchObject({ id: session.id, active: false, ended_at: lastBeat, end_reason: 'timed_out', credited_seconds: 100, duration_seconds: 100 });

    // The sweep does the same for sessions nobody reads.
    const other = await enrolled(course.id, 'student');
    const abandoned = await start(other, course.id, activity);
    t.clock.advance(TIMEOUT);
    expect(endIdleSessions(t.db, t.clock)).toBe(0); // exactly at the timeout it is still open
    t.clock.advance(1);
    expect(endIdleSessions(t.db, t.clock)).toBe(1);
    expect(t.db.select().from(seatSessions).where(eq(seatSessions.id, abandoned.id)).get()).toMatchObject({ endReason: 'timed_out', creditedMs: 0 });
    expect(endIdleSessions(t.db, t.clock)).toBe(0);
  });

  it('a heartbeat from a learner whose enrollment was dropped is 409 and ends the session', async () => {
    const course = await newCourse();
    const activity = await newActivity(course);
    const session = await start(course.student, course.id, activity);
    t.clock.advance(10 * SECOND);
    setEnrollmentStatus(course.id, course.student.user.id, 'dropped');
    const res = await beat(course.student, session.id);
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toMatch(/no longer active/);
    expect(t.db.select().from(seatSessions).where(eq(seatSessions.id, session.id)).get()).toMatchObject({ endReason: 'ended' });
  });

  it('refuses: someone else\'s or an unknown session 404, non-learners 403, an enrollment that is over 409, a block outside the course 422, a locked block 409, another tenant 404, bad ids 400', async () => {
    const course = await newCourse();
    const activity = await newActivity(course);
    const session = await start(course.student, course.id, activity);
    const classmate = await enrolled(course.id, 'student');
    expectProblem(await beat(classmate, session.id), 404, 'not_found');
    expectProblem(await beat(course.instructor, session.id), 404, 'not_found');
    expectProblem(await t.call('POST', `/api/compliance/sessions/${session.id}/end`, { as: classmate }), 404, 'not_found');
    expectProblem(await beat(course.student, MISSING_ID), 404, 'not_found');
    expectProblem(await t.call('POST', '/api/compliance/sessions/not-a-uuid/heartbeat', { as: course.student }), 400, 'validation_failed');

    const body = { course_id: course.id, block_id: activity };
    for (const who of [course.instructor, course.ta, t.admin, await t.newUser()])
      expectProblem(await t.call('POST', '/api/compliance/sessions', { as: who, body }), 403, 'forbidden');
    const finished = await enrolled(course.id, 'student');
    setEnrollmentStatus(course.id, finished.user.id, 'completed');
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: finished, body }), 409, 'conflict');

    const elsewhere = await newCourse();
    const foreignBlock = await newActivity(elsewhere);
    const wrong = await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: course.id, block_id: foreignBlock } });
    expectProblem(wrong, 422, 'validation_failed');
    expect(wrong.body.errors).toEqual([{ path: 'block_id', message: 'not a module or activity of this course' }]);
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: course.id, block_id: MISSING_ID } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: MISSING_ID, block_id: activity } }), 404, 'not_found');
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: course.id } }), 400, 'validation_failed');
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { ...body, extra: 1 } }), 400, 'validation_failed');

    // Locked: a prerequisite not met.
    const second = await newActivity(course, { title: 'Second' });
    createEdge(t.db, t.clock, { tenantId: t.defaultTenantId, courseId: course.id, createdBy: course.instructor.user.id, fromNodeId: activity, toNodeId: second, minScore: null });
    const locked = await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: course.id, block_id: second } });
    expectProblem(locked, 409, 'conflict');
    expect(locked.body.detail).toMatch(/locked: Complete “Safety video” first/);
    // The refused starts left the open session alone.
    expect((await t.call('GET', '/api/compliance/sessions/active', { as: course.student })).body.id).toBe(session.id);

    // Another tenant's course and session do not exist for this caller.
    const other = await t.newTenant('compliance-other');
    const theirs = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    expectProblem(await t.call('POST', '/api/compliance/sessions', { as: course.student, body: { course_id: theirs.id, block_id: activity } }), 404, 'not_found');
    expectProblem(await beat(other.admin, session.id), 404, 'not_found');
  });
});

describe('seat time gates completion', () => {
  it('an activity with min_seat_seconds cannot be completed until the credited time reaches it: 409 saying how much remains', async () => {
    const course = await newCourse();
    const activity = await newActivity(course, { min_seat_seconds: 120 });
    let res = await t.call('POST', `/api/activities/${activity}/complete`, { as: course.student });
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toBe('This activity requires 120 seconds of seat time; you have been credited 0: 120 more seconds remain.');

    const session = await start(course.student, course.id, activity);
    t.clock.advance(60 * SECOND);
    await beat(course.student, session.id);
    res = await t.call('POST', `/api/activities/${activity}/complete`, { as: course.student });
    expectProblem(res, 409, 'conflict');
    expect(res.body.detail).toMatch(/credited 60: 60 more seconds remain/);

    // Time in a session on another block does not count for this activity.
    const other = await newActivity(course, { title: 'Other' });
    const elsewhere = await start(course.student, course.id, other);
    t.clock.advance(200 * SECOND);
    await beat(course.student, elsewhere.id);
    res = await t.call('POST', `/api/activities/${activity}/complete`, { as: course.student });
    expect(res.body.detail).toMatch(/60 more seconds remain/);

    // Back on it: the open session counts up to now, as a heartbeat would, and commits with the completion.
    const back = await start(course.student, course.id, activity);
    t.clock.advance(59 * SECOND);
    res = await t.call('POST', `/api/activities/${activity}/complete`, { as: course.student });
    expect(res.body.detail).toMatch(/credited 119: 1 more second remains\./);
    t.clock.advance(1 * SECOND);
    res = await t.call('POST', `/api/activities/${activity}/complete`, { as: course.student });
    expect(res.status, res.text).toBe(200);
    expect(res.body.state.status).toBe('completed');
    expect(t.db.select().from(seatSessions).where(eq(seatSessions.id, back.id)).get()).toMatchObject({ creditedMs: 60_000, endedAtMs: null });
    expect((await status(course.student, activity)).body).toMatchObject({ credited_seconds: 120, remaining_seconds: 0, compliant: true });

    // An activity without a requirement is not gated.
    const free = await newActivity(course, { title: 'Free' });
    expect((await t.call('POST', `/api/activities/${free}/complete`, { as: course.student })).status).toBe(200);
  });
});

describe('block status', () => {
  it('flips to compliant exactly when the credited time reaches the requirement', async () => {
    const course = await newCourse();
    const activity = await newActivity(course, { min_seat_seconds: 120 });
    const session = await start(course.student, course.id, activity);
    t.clock.advance(120 * SECOND - 1);
    await beat(course.student, session.id);
    expect((await status(course.student, activity)).body).toEqual({
      block_id: activity,
      block_type: 'activity',
      course_id: course.id,
      user_id: course.student.user.id,
      required_seconds: 120,
      credited_seconds: 119.999,
      remaining_seconds: 0.001,
      compliant: false,
    });
    t.clock.advance(1);
    await beat(course.student, session.id);
    expect((await status(course.student, activity)).body).toMatchObject({ credited_seconds: 120, remaining_seconds: 0, compliant: true });
    // The instructor reads the same with user_id.
    expect((await status(course.instructor, activity, course.student.user.id)).body).toMatchObject({ credited_seconds: 120, compliant: true });
  });

  it("a module: required is the sum of its activities', credited all time in it, remaining what each activity lacks", async () => {
    const course = await newCourse();
    const a = await newActivity(course, { title: 'A', min_seat_seconds: 100 });
    const b = await newActivity(course, { title: 'B', min_seat_seconds: 50 });
    await newActivity(course, { title: 'C' });
    let s = await start(course.student, course.id, a);
    t.clock.advance(150 * SECOND);
    await beat(course.student, s.id);
    s = await start(course.student, course.id, course.moduleId);
    t.clock.advance(30 * SECOND);
    await t.call('POST', `/api/compliance/sessions/${s.id}/end`, { as: course.student });
    const res = await status(course.student, course.moduleId);
    // 150 on A covers A (100) but not B: 50 remain although 180 were credited in the module.
    expect(res.body).toMatchObject({ block_type: 'module', required_seconds: 150, credited_seconds: 180, remaining_seconds: 50, compliant: false });
    expect((await status(course.student, b)).body).toMatchObject({ required_seconds: 50, credited_seconds: 0, compliant: false });
  });

  it('refuses another learner to a student (403), a non-learner asked for (404), an unknown block (404)', async () => {
    const course = await newCourse();
    const activity = await newActivity(course);
    const classmate = await enrolled(course.id, 'student');
    expectProblem(await status(course.student, activity, classmate.user.id), 403, 'forbidden');
    // The TA audits, as the instructor does (and is answered for themself as the instructor is).
    expect((await status(course.ta, activity, course.student.user.id)).status).toBe(200);
    expect((await status(course.ta, activity)).status).toBe((await status(course.instructor, activity)).status);
    expectProblem(await status(course.instructor, activity, course.ta.user.id), 404, 'not_found');
    expectProblem(await status(course.student, MISSING_ID), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/compliance/blocks/${activity}/status?user_id=nope`, { as: course.instructor }), 400, 'validation_failed');
  });
});

describe('course report', () => {
  it('per learner per block credited against required, totals and the course flag, as JSON pages and as a CSV safe to open in a spreadsheet', async () => {
    const course = await newCourse();
    const module2 = await t.call('POST', `/api/courses/${course.id}/modules`, { as: course.instructor, body: { title: 'Week 2' } });
    const a = await newActivity(course, { title: '=cmd|calc!A0', min_seat_seconds: 60 });
    const b = await newActivity(course, { title: 'Fire drill', min_seat_seconds: 30 }, module2.body.id);
    await newActivity(course, { title: 'No requirement' });
    const hostile = await enrolled(course.id, 'student', '=HYPERLINK("http://evil.example","x")');
    const dropped = await enrolled(course.id, 'student', 'Dropped Learner');
    setEnrollmentStatus(course.id, dropped.user.id, 'dropped');

    // The course's own student meets A and B; the hostile one only A.
    for (const [who, blocks] of [
      [course.student, [a, b]],
      [hostile, [a]],
    ] as const) {
      for (const block of blocks) {
        const s = await start(who, course.id, block);
        t.clock.advance(60 * SECOND);
        await t.call('POST', `/api/compliance/sessions/${s.id}/end`, { as: who });
      }
    }

    const res = await t.call('GET', `/api/compliance/courses/${course.id}/report?per_page=1`, { as: course.instructor });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      course_id: course.id,
      blocks: [
        { block_id: a, block_type: 'activity', module_id: course.moduleId, title: '=cmd|calc!A0', required_seconds: 60 },
        { block_id: b, module_id: module2.body.id, required_seconds: 30 },
      ],
      learners: 2,
      compliant_learners: 1,
      compliant: false,
      pagination: { page: 1, per_page: 1, total: 2, total_pages: 2 },
    });
    // By name: "=HYPERLINK…" sorts before "Test member…".
    expect(res.body.data).toEqual([
      {
        user_id: hostile.user.id,
        name: '=HYPERLINK("http://evil.example","x")',
        email: hostile.user.email,
        enrollment_status: 'active',
        blocks: [
          { block_id: a, required_seconds: 60, credited_seconds: 60, remaining_seconds: 0, compliant: true },
          { block_id: b, required_seconds: 30, credited_seconds: 0, remaining_seconds: 30, compliant: false },
        ],
        totals: { required_seconds: 90, credited_seconds: 60, remaining_seconds: 30, compliant: false },
        compliant: false,
      },
    ]);
    expect(res.headers.get('link')).toContain('rel="next"');
    const page2 = await t.call('GET', `/api/compliance/courses/${course.id}/report?per_page=1&page=2`, { as: course.instructor });
    expect(page2.body.data[0]).toMatchObject({ user_id: course.student.user.id, compliant: true, totals: { credited_seconds: 120, remaining_seconds: 0 } });

    const csv = await t.call('GET', `/api/compliance/courses/${course.id}/report?format=csv`, { as: course.instructor });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="compliance-${course.id}.csv"`);
    const rows = parse(csv.text, { bom: true }) as string[][];
    expect(rows[0]).toEqual([
      'user_id',
      'name',
      'email',
      'enrollment_status',
      "'=cmd|calc!A0 (credited of 60 s)",
      'Fire drill (credited of 30 s)',
      'required_seconds',
      'credited_seconds',
      'remaining_seconds',
      'compliant',
    ]);
    expect(rows.slice(1)).toEqual([
      [hostile.user.id, `'=HYPERLINK("http://evil.example","x")`, hostile.user.email, 'active', '60', '0', '90', '60', '30', 'no'],
      [course.student.user.id, course.student.user.name, course.student.user.email, 'active', '60', '60', '90', '120', '0', 'yes'],
    ]);
    // No cell a spreadsheet would run.
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);

    // Once the hostile learner completes their time, the course is compliant.
    const s = await start(hostile, course.id, b);
    t.clock.advance(30 * SECOND);
    await t.call('POST', `/api/compliance/sessions/${s.id}/end`, { as: hostile });
    const after = await t.call('GET', `/api/compliance/courses/${course.id}/report`, { as: course.instructor });
    expect(after.body).toMatchObject({ learners: 2, compliant_learners: 2, compliant: true });
  });

  it('starts no cell of the CSV with a formula when read with `,`, `;` or tab as the list separator', async () => {
    const course = await newCourse();
    await newActivity(course, { title: 'Drill;=1+1', min_seat_seconds: 60 });
    const bob = await enrolled(course.id, 'student', 'Bob;=2+3;x');
    await enrolled(course.id, 'student', 'Ann, @SUM(1+1)');
    const csv = await t.call('GET', `/api/compliance/courses/${course.id}/report?format=csv`, { as: course.instructor });
    expect(csv.status).toBe(200);
    expect(formulaCells(csv.text)).toEqual([]);
    const rows = parse(csv.text, { bom: true }) as string[][];
    expect(rows[0]![4]).toBe("Drill;'=1+1 (credited of 60 s)");
    expect(rows.find((r) => r[0] === bob.user.id)![1]).toBe("Bob;'=2+3;x");
  });

  it('a course without requirements is compliant; learners are refused (403), TAs read it; page limits are 400', async () => {
    const course = await newCourse();
    const res = await t.call('GET', `/api/compliance/courses/${course.id}/report`, { as: course.instructor });
    expect(res.body).toMatchObject({ blocks: [], learners: 1, compliant_learners: 1, compliant: true });
    expect(res.body.data[0]).toMatchObject({ blocks: [], compliant: true });
    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/report`, { as: course.student }), 403, 'forbidden');
    expect((await t.call('GET', `/api/compliance/courses/${course.id}/report?format=csv`, { as: course.ta })).status).toBe(200);
    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/report?per_page=101`, { as: course.instructor }), 400, 'validation_failed');
    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/report?format=xml`, { as: course.instructor }), 400, 'validation_failed');
  });
});

describe('course sessions listing', () => {
  it('instructors filter by learner, block and start time; learners see only their own', async () => {
    const course = await newCourse();
    const a = await newActivity(course, { title: 'A' });
    const b = await newActivity(course, { title: 'B' });
    const classmate = await enrolled(course.id, 'student');
    const t0 = t.clock.now();
    const s1 = await start(course.student, course.id, a);
    t.clock.advance(10 * SECOND);
    const s2 = await start(course.student, course.id, b);
    t.clock.advance(10 * SECOND);
    const t2 = t.clock.now();
    const s3 = await start(classmate, course.id, a);
    t.clock.advance(10 * SECOND);

    const list = async (as: TestUser, query = '') => {
      const res = await t.call('GET', `/api/compliance/courses/${course.id}/sessions${query}`, { as });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((s: { id: string }) => s.id);
    };
    expect(await list(course.instructor)).toEqual([s3.id, s2.id, s1.id]);
    expect(await list(course.instructor, `?user_id=${course.student.user.id}`)).toEqual([s2.id, s1.id]);
    expect(await list(course.instructor, `?block_id=${a}`)).toEqual([s3.id, s1.id]);
    expect(await list(course.instructor, `?from=${encodeURIComponent(t2.toISOString())}`)).toEqual([s3.id]);
    expect(await list(course.instructor, `?to=${encodeURIComponent(t2.toISOString())}`)).toEqual([s2.id, s1.id]);
    expect(await list(course.instructor, `?from=${encodeURIComponent(t0.toISOString())}&to=${encodeURIComponent(t2.toISOString())}&per_page=1`)).toEqual([s2.id]);
    expect(await list(course.student)).toEqual([s2.id, s1.id]);
    expect(await list(course.student, `?user_id=${course.student.user.id}`)).toEqual([s2.id, s1.id]);
    const res = await t.call('GET', `/api/compliance/courses/${course.id}/sessions`, { as: course.instructor });
    expect(res.body.data[2]).toMatchObject({ id: s1.id, active: false, end_reason: 'switched', credited_seconds: 10, user_id: course.student.user.id });
    expect(res.body.data[1]).toMatchObject({ id: s2.id, active: true, end_reason: null });
    expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 3, total_pages: 1 });

    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/sessions?user_id=${classmate.user.id}`, { as: course.student }), 403, 'forbidden');
    expect((await t.call('GET', `/api/compliance/courses/${course.id}/sessions`, { as: course.ta })).body.pagination.total).toBe(3);
    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/sessions?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`, { as: course.instructor }), 422, 'validation_failed');
    expectProblem(await t.call('GET', `/api/compliance/courses/${course.id}/sessions?from=yesterday`, { as: course.instructor }), 400, 'validation_failed');
    expectProblem(await t.call('GET', `/api/compliance/courses/${MISSING_ID}/sessions`, { as: course.instructor }), 404, 'not_found');
  });
});
