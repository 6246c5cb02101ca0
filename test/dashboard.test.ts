// The dashboard through the API: the feed filled by what happens to a user elsewhere (enrolments,
// grades, shares; an instructor's help requests), marking it read, the shelf and its analytics,
// and the summary (progress from the course state, rewards, streak in the learner's time zone,
// due soon, unread count).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { courses, enrollments, events, sequencingEdges } from '../db/schema';
import { appendEvent } from '../src/events/log';
import { ManualClock } from '../src/lib/clock';
import { newId } from '../src/lib/ids';
import { expectProblem, expectUnauthorized, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { insertActivity, insertBadge, insertLearnerStats, insertModule, insertState } from './helpers/dashboard-fixtures';

const START = '2026-03-10T12:00:00.000Z';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface FeedItem {
  id: string;
  type: string;
  actor_id: string | null;
  subject: { type: string; id: string };
  course_id: string | null;
  data: Record<string, unknown>;
  occurred_at: string;
  read: boolean;
}

describe('dashboard feed', () => {
  let t: TestApp;
  let clock: ManualClock;
  let instructor: TestUser;
  let learner: TestUser;
  let classmate: TestUser;
  let course: ReturnType<typeof insertCourse>;

  const feedOf = async (as: TestUser, query = '') => {
    const res = await t.call<{ data: FeedItem[]; pagination: { total: number } }>('GET', `/api/dashboard/feed${query}`, { as });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    clock = new ManualClock(START);
    t = await makeTestApp({ clock });
    instructor = await t.newUser({ name: 'Iris Instructor' });
    learner = await t.newUser({ name: 'Lea Learner' });
    classmate = await t.newUser({ name: 'Carl Classmate' });
    course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id, title: 'Statistics' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  });
  afterAll(() => t.close());

  it('starts empty', async () => {
    const feed = await feedOf(learner);
    expect(feed.data).toEqual([]);
    expect(feed.pagination.total).toBe(0);
  });

  it("an enrolment by an instructor lands in the learner's feed, and only theirs", async () => {
    clock.advance(1000);
    const res = await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: instructor, body: { user_id: learner.user.id } });
    expect(res.status, res.text).toBe(201);
    const feed = await feedOf(learner);
    expect(feed.data).toEqual([
      {
        id: expect.any(String),
        type: 'enrollment.created',
        actor_id: instructor.user.id,
        subject: { type: 'enrollment', id: res.body.id },
        course_id: course.id,
        data: { enrollment_id: res.body.id, course_id: course.id, user_id: learner.user.id, role: 'student' },
        occurred_at: clock.now().toISOString(),
        read: false,
      },
    ]);
    expect((await feedOf(instructor)).data).toEqual([]);
    expect((await feedOf(classmate)).data).toEqual([]);
  });

  it('self-enrolment, bulk enrolment, completion, drop and reactivation are each an event of the enrolled user', async () => {
    clock.advance(1000);
    // The course takes self-enrolment (closed by default).
    expect((await t.call('PATCH', `/api/courses/${course.id}`, { as: instructor, body: { enrollment: { self_enroll: 'open' } } })).status).toBe(200);
    const self = await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: classmate });
    expect(self.status, self.text).toBe(201);
    const other = await t.newUser({ name: 'Bulk One' });
    clock.advance(1000);
    const bulk = await t.call('POST', `/api/enrollments/course/${course.id}/bulk-enroll`, {
      as: instructor,
      body: { user_ids: [other.user.id, classmate.user.id, MISSING_ID] },
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(bulk.body.enrolled).toHaveLength(1);
    clock.advance(1000);
    expect((await t.call('POST', `/api/enrollments/${self.body.id}/drop`, { as: classmate })).status).toBe(200);
    clock.advance(1000);
    const back = await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: classmate });
    expect(back.status, back.text).toBe(200);
    clock.advance(1000);
    expect((await t.call('POST', `/api/enrollments/${self.body.id}/complete`, { as: instructor })).status).toBe(200);

    const classmateFeed = await feedOf(classmate);
    expect(classmateFeed.data.map((e) => [e.type, e.actor_id, e.data.enrollment_id])).toEqual([
      ['enrollment.completed', instructor.user.id, self.body.id],
      ['enrollment.created', classmate.user.id, self.body.id],
      ['enrollment.dropped', classmate.user.id, self.body.id],
      ['enrollment.created', classmate.user.id, self.body.id],
    ]);
    const otherFeed = await feedOf(other);
    expect(otherFeed.data.map((e) => [e.type, e.actor_id, e.data.user_id])).toEqual([['enrollment.created', instructor.user.id, other.user.id]]);
  });

  it('a bulk enrolment of 1,200 users records one event each, in the order of the enrolment', async () => {
    const many = await Promise.all(Array.from({ length: 1_200 }, (_, i) => t.newUser({ name: `Many ${i}` })));
    clock.advance(1000);
    const res = await t.call('POST', `/api/enrollments/course/${course.id}/bulk-enroll`, { as: instructor, body: { user_ids: many.map((u) => u.user.id) } });
    expect(res.status, res.text).toBe(200);
    const enrolmentOf = new Map<string, string>(res.body.enrolled.map((e: { id: string; user_id: string }) => [e.user_id, e.id]));
    for (const u of [many[0]!, many[499]!, many[500]!, many[1_199]!]) {
      const feed = await feedOf(u);
      expect(feed.data.map((e) => [e.type, e.subject.id, e.data.user_id, e.actor_id])).toEqual([
        ['enrollment.created', enrolmentOf.get(u.user.id), u.user.id, instructor.user.id],
      ]);
    }
    // The log's order is the enrolment's.
    const logged = t.db
      .select({ userId: sql<string>`json_extract(${events.payload}, '$.user_id')` })
      .from(events)
      .where(and(eq(events.type, 'enrollment.created'), eq(events.courseId, course.id)))
      .orderBy(events.seq)
      .all()
      .map((r) => r.userId);
    expect(logged.slice(-1_200)).toEqual(many.map((u) => u.user.id));
  });

  it('a refused enrolment records nothing', async () => {
    const before = (await feedOf(learner)).pagination.total;
    const again = await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: instructor, body: { user_id: learner.user.id } });
    expectProblem(again, 409, 'conflict');
    expect((await feedOf(learner)).pagination.total).toBe(before);
  });

  it('every grade recorded or changed is an event of the student; a PUT that changes nothing is not', async () => {
    const assignment = await t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, {
      as: instructor,
      body: { label: 'Quiz 1', grade_metadata: { score_maximum: 20 } },
    });
    expect(assignment.status, assignment.text).toBe(201);
    const put = (score: number, comment?: string) =>
      t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${learner.user.id}`, { as: instructor, body: { score, comment } });
    clock.advance(1000);
    const first = await put(15);
    expect(first.status, first.text).toBe(201);
    clock.advance(1000);
    expect((await put(15)).status).toBe(200);
    expect((await put(18)).status).toBe(200);
    expectProblem(await put(25), 422, 'validation_failed');

    const grades = (await feedOf(learner)).data.filter((e) => e.type === 'grade.recorded');
    expect(grades.map((e) => e.data.score)).toEqual([18, 15]);
    expect(grades[1]).toMatchObject({
      actor_id: instructor.user.id,
      subject: { type: 'grade', id: first.body.id },
      course_id: course.id,
      data: { assignment_id: assignment.body.id, course_id: course.id, user_id: learner.user.id, score: 15, score_maximum: 20 },
    });
    expect((await feedOf(instructor)).data.filter((e) => e.type === 'grade.recorded')).toEqual([]);
  });

  it("a document shared with a user is in that user's feed; shared with a group, in each member's", async () => {
    const doc = await t.call('POST', '/api/documents', { as: instructor, body: { title: 'Reading list' } });
    expect(doc.status, doc.text).toBe(201);
    const share = (body: object) => t.call('POST', `/api/documents/${doc.body.id}/collaborators`, { as: instructor, body });
    clock.advance(1000);
    expect((await share({ principal_type: 'user', principal_id: learner.user.id, role: 'viewer' })).status).toBe(201);
    // The same grant again changes nothing and records nothing; a new role is a new share.
    expect((await share({ principal_type: 'user', principal_id: learner.user.id, role: 'viewer' })).status).toBe(200);
    clock.advance(1000);
    expect((await share({ principal_type: 'user', principal_id: learner.user.id, role: 'editor' })).status).toBe(200);

    const group = await t.call('POST', '/api/groups', { as: t.admin, body: { name: 'Study group' } });
    expect(group.status, group.text).toBe(201);
    for (const member of [learner, classmate]) {
      expect((await t.call('PUT', `/api/groups/${group.body.id}/members/${member.user.id}`, { as: t.admin })).status).toBe(204);
    }
    clock.advance(1000);
    expect((await share({ principal_type: 'group', principal_id: group.body.id, role: 'commenter' })).status).toBe(201);

    const shares = (await feedOf(learner)).data.filter((e) => e.type === 'document.shared');
    expect(shares.map((e) => [e.data.grantee_type, e.data.role])).toEqual([
      ['group', 'commenter'],
      ['user', 'editor'],
      ['user', 'viewer'],
    ]);
    expect(shares[2]).toMatchObject({
      actor_id: instructor.user.id,
      subject: { type: 'document', id: doc.body.id },
      course_id: null,
      data: { document_id: doc.body.id, title: 'Reading list', grantee_type: 'user', grantee_id: learner.user.id, role: 'viewer' },
    });
    const classmateShares = (await feedOf(classmate)).data.filter((e) => e.type === 'document.shared');
    expect(classmateShares.map((e) => e.data)).toEqual([
      { document_id: doc.body.id, title: 'Reading list', grantee_type: 'group', grantee_id: group.body.id, role: 'commenter' },
    ]);
  });

  it("an instructor sees their course's help requests in their feed; the learner and others do not", async () => {
    // A second instructor of the course gets it too; the TA does not (help goes to instructors).
    const coInstructor = await t.newUser({ name: 'Cora Co-instructor' });
    const ta = await t.newUser({ name: 'Tom TA' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: coInstructor.user.id, role: 'instructor' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: ta.user.id, role: 'ta' });
    const module = await t.call('POST', `/api/courses/${course.id}/modules`, { as: instructor, body: { title: 'Week 1' } });
    expect(module.status, module.text).toBe(201);
    const activity = await t.call('POST', `/api/modules/${module.body.id}/activities`, { as: instructor, body: { title: 'Problem set', type: 'assignment' } });
    expect(activity.status, activity.text).toBe(201);
    clock.advance(1000);
    const help = await t.call('POST', `/api/activities/${activity.body.id}/help`, { as: learner, body: { message: 'I am stuck on question 3' } });
    expect(help.status, help.text).toBe(201);
    const expected = {
      id: help.body.id,
      type: 'help.requested',
      actor_id: learner.user.id,
      subject: { type: 'activity', id: activity.body.id },
      course_id: course.id,
      data: { activity_id: activity.body.id, course_id: course.id, user_id: learner.user.id, message: 'I am stuck on question 3' },
      occurred_at: clock.now().toISOString(),
      read: false,
    };
    for (const teacher of [instructor, coInstructor]) expect((await feedOf(teacher)).data[0]).toEqual(expected);
    for (const other of [learner, classmate, ta]) expect((await feedOf(other)).data.map((e) => e.id)).not.toContain(help.body.id);
    // It counts as unread for the instructor until they mark it read.
    expect((await t.call('GET', '/api/dashboard/summary', { as: instructor })).body.unread_feed_count).toBe(1);
    expect((await t.call('POST', '/api/dashboard/feed/read', { as: instructor, body: { up_to: help.body.id } })).body).toEqual({
      read_up_to: help.body.id,
      unread_count: 0,
    });
  });

  it('is newest first and paginated like every list', async () => {
    const all = await feedOf(learner);
    expect(all.pagination.total).toBe(all.data.length);
    expect(all.data.length).toBeGreaterThanOrEqual(6);
    const times = all.data.map((e) => e.occurred_at);
    expect([...times].sort().reverse()).toEqual(times);
    const page2 = await t.call('GET', '/api/dashboard/feed?page=2&per_page=2', { as: learner });
    expect(page2.status).toBe(200);
    expect(page2.body.data.map((e: FeedItem) => e.id)).toEqual(all.data.slice(2, 4).map((e) => e.id));
    expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, total: all.pagination.total, total_pages: Math.ceil(all.pagination.total / 2) });
    expect(page2.headers.get('link')).toContain('rel="next"');
    expectProblem(await t.call('GET', '/api/dashboard/feed?per_page=101', { as: learner }), 400, 'validation_failed');
    expectProblem(await t.call('GET', '/api/dashboard/feed?page=0', { as: learner }), 400, 'validation_failed');
  });

  it('401 without a credential', async () => {
    expectUnauthorized(await t.call('GET', '/api/dashboard/feed'));
  });
});

describe('POST /api/dashboard/feed/read', () => {
  let t: TestApp;
  let clock: ManualClock;
  let learner: TestUser;
  let other: TestUser;
  const events: string[] = [];

  const append = (userId: string) => {
    clock.advance(1000);
    return appendEvent(t.db, clock, {
      tenantId: t.defaultTenantId,
      type: 'level.reached',
      actorId: userId,
      subject: { type: 'user', id: userId },
      data: { user_id: userId, level: 2, total_xp: 100 },
      recipients: [userId],
    });
  };
  const read = (body?: unknown, as: TestUser = learner) => t.call('POST', '/api/dashboard/feed/read', { as, body });
  const unread = async (as: TestUser = learner) => (await t.call('GET', '/api/dashboard/summary', { as })).body.unread_feed_count as number;
  const readFlags = async () => ((await t.call('GET', '/api/dashboard/feed', { as: learner })).body.data as FeedItem[]).map((e) => e.read);

  beforeAll(async () => {
    clock = new ManualClock(START);
    t = await makeTestApp({ clock });
    learner = await t.newUser();
    other = await t.newUser();
    for (let i = 0; i < 4; i++) events.push(append(learner.user.id).id);
  });
  afterAll(() => t.close());

  it('an empty feed marks nothing', async () => {
    const res = await read(undefined, other);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ read_up_to: null, unread_count: 0 });
  });

  it('up_to marks that event and every older one read', async () => {
    expect(await unread()).toBe(4);
    const res = await read({ up_to: events[1] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ read_up_to: events[1], unread_count: 2 });
    expect(await readFlags()).toEqual([false, false, true, true]);
  });

  it('never moves backwards', async () => {
    const res = await read({ up_to: events[0] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ read_up_to: events[1], unread_count: 2 });
  });

  it('an id in capitals names the same event', async () => {
    const res = await read({ up_to: events[2]!.toUpperCase() });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ read_up_to: events[2], unread_count: 1 });
  });

  it('without up_to (or without a body) marks the whole feed; newer events are unread again', async () => {
    expect((await read({})).body).toEqual({ read_up_to: events[3], unread_count: 0 });
    expect(await readFlags()).toEqual([true, true, true, true]);
    const later = append(learner.user.id);
    expect(await unread()).toBe(1);
    const res = await read();
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ read_up_to: later.id, unread_count: 0 });
  });

  it("404 for an event that is not in the caller's feed: unknown, someone else's, another tenant's; nothing changes", async () => {
    const before = await unread(other);
    const someoneElses = append(learner.user.id);
    const tenant = await t.newTenant('feed-other');
    clock.advance(1000);
    const foreign = appendEvent(t.db, clock, {
      tenantId: tenant.tenantId,
      type: 'level.reached',
      actorId: tenant.admin.user.id,
      subject: { type: 'user', id: tenant.admin.user.id },
      data: { user_id: tenant.admin.user.id, level: 3, total_xp: 300 },
      recipients: [tenant.admin.user.id],
    });
    const answers = [];
    for (const id of [MISSING_ID, someoneElses.id, foreign.id]) {
      const res = await read({ up_to: id }, other);
      expectProblem(res, 404, 'not_found', id);
      answers.push(res.body);
    }
    // The same answer whichever it was.
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(await unread(other)).toBe(before);
    // Tenant B's own user reads it fine.
    expect((await read({ up_to: foreign.id }, tenant.admin as TestUser)).body).toEqual({ read_up_to: foreign.id, unread_count: 0 });
  });

  it('400 for a malformed body; 401 without a credential', async () => {
    expectProblem(await read({ up_to: 'not-an-id' }), 400, 'validation_failed');
    expectProblem(await read({ up_to: events[0], extra: true }), 400, 'validation_failed');
    expectProblem(await read({ up_to: 42 }), 400, 'validation_failed');
    expectUnauthorized(await t.call('POST', '/api/dashboard/feed/read', { body: {} }));
  });
});

describe('dashboard shelf', () => {
  let t: TestApp;
  let clock: ManualClock;
  let learner: TestUser;
  let instructor: TestUser;
  let course: ReturnType<typeof insertCourse>;
  let deletedCourse: ReturnType<typeof insertCourse>;
  const acts: ReturnType<typeof insertActivity>[] = [];
  const now = () => clock.now();
  const at = (deltaMs: number) => new Date(now().getTime() + deltaMs).toISOString();

  beforeAll(async () => {
    clock = new ManualClock(START);
    t = await makeTestApp({ clock });
    learner = await t.newUser();
    instructor = await t.newUser();
    const tenantId = t.defaultTenantId;
    course = insertCourse(t.db, { tenantId, createdBy: instructor.user.id, title: 'Biology' });
    deletedCourse = insertCourse(t.db, { tenantId, createdBy: instructor.user.id, title: 'Gone' });
    for (const c of [course, deletedCourse]) insertEnrollment(t.db, { tenantId, courseId: c.id, userId: learner.user.id });
    const module = insertModule(t.db, { tenantId, courseId: course.id });
    const goneModule = insertModule(t.db, { tenantId, courseId: deletedCourse.id });
    for (let i = 0; i < 7; i++) {
      acts.push(insertActivity(t.db, { tenantId, courseId: course.id, moduleId: module.id, createdBy: instructor.user.id, title: `A${i}`, position: i }));
    }
    const gone = insertActivity(t.db, { tenantId, courseId: deletedCourse.id, moduleId: goneModule.id, createdBy: instructor.user.id });
    // On the shelf: a0 with an overdue reminder, a1 with one due in an hour, a2 without one (saved 4 days ago),
    // a3 without one (saved 1 day ago, in progress). Off it: a4 completed from the shelf after 2 days,
    // a5 taken off after 6 days, a6 never saved. The activity of the deleted course counts for nothing.
    insertState(t.db, acts[0]!, learner.user.id, { savedAt: at(-3 * DAY), remindAt: at(-HOUR) });
    insertState(t.db, acts[1]!, learner.user.id, { savedAt: at(-2 * DAY), remindAt: at(HOUR) });
    insertState(t.db, acts[2]!, learner.user.id, { savedAt: at(-4 * DAY) });
    insertState(t.db, acts[3]!, learner.user.id, { status: 'in_progress', savedAt: at(-1 * DAY), startedAt: at(-DAY) });
    insertState(t.db, acts[4]!, learner.user.id, { status: 'completed', completedFromShelf: true, shelfDays: 2, completedAt: at(-DAY) });
    insertState(t.db, acts[5]!, learner.user.id, { shelfDays: 6 });
    insertState(t.db, acts[6]!, learner.user.id, { status: 'in_progress' });
    insertState(t.db, gone, learner.user.id, { savedAt: at(-10 * DAY), remindAt: at(-DAY), completedFromShelf: true, shelfDays: 30 });
    t.db.update(courses).set({ deletedAt: now().toISOString() }).where(eq(courses.id, deletedCourse.id)).run();
    // Someone else's shelf is theirs.
    insertState(t.db, acts[6]!, instructor.user.id, { savedAt: at(-DAY), remindAt: at(-HOUR) });
  });
  afterAll(() => t.close());

  it('lists saved activities: reminders first by when they fall, then by when saved; due ones flagged', async () => {
    const res = await t.call('GET', '/api/dashboard/shelf', { as: learner });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(4);
    expect(res.body.data.map((i: { title: string }) => i.title)).toEqual(['A0', 'A1', 'A2', 'A3']);
    expect(res.body.data[0]).toEqual({
      activity_id: acts[0]!.id,
      title: 'A0',
      type: 'reading',
      course_id: course.id,
      course_title: 'Biology',
      module_id: acts[0]!.moduleId,
      status: 'not_started',
      due_at: null,
      deep_link_url: 'https://example.com/activity',
      estimated_minutes: 15,
      saved_at: at(-3 * DAY),
      remind_at: at(-HOUR),
      reminder_due: true,
      days_on_shelf: 3,
    });
    expect(res.body.data.map((i: { reminder_due: boolean }) => i.reminder_due)).toEqual([true, false, false, false]);
    expect(res.body.data[3]).toMatchObject({ status: 'in_progress', days_on_shelf: 1, remind_at: null });
  });

  it('a reminder becomes due when its time comes', async () => {
    clock.advance(HOUR);
    try {
      const res = await t.call('GET', '/api/dashboard/shelf', { as: learner });
      expect(res.body.data.map((i: { reminder_due: boolean }) => i.reminder_due)).toEqual([true, true, false, false]);
    } finally {
      clock.advance(-HOUR);
    }
  });

  it('is paginated', async () => {
    const res = await t.call('GET', '/api/dashboard/shelf?page=2&per_page=3', { as: learner });
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { title: string }) => i.title)).toEqual(['A3']);
    expect(res.body.pagination).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2 });
  });

  it('analytics: saved now, completed from the shelf, average days on it, reminders due and to come', async () => {
    const res = await t.call('GET', '/api/dashboard/shelf/analytics', { as: learner });
    expect(res.status, res.text).toBe(200);
    // Days: on it now 3, 2, 4, 1; left it 2 (completed) and 6 (taken off): 18 / 6 = 3.
    expect(res.body).toEqual({ saved: 4, completed_from_shelf: 1, average_days_on_shelf: 3, reminders_due: 1, reminders_upcoming: 1 });
  });

  it('another user has their own shelf; an empty one has null average', async () => {
    const mine = await t.call('GET', '/api/dashboard/shelf', { as: instructor });
    expect(mine.body.data.map((i: { activity_id: string }) => i.activity_id)).toEqual([acts[6]!.id]);
    const stranger = await t.newUser();
    expect((await t.call('GET', '/api/dashboard/shelf', { as: stranger })).body).toMatchObject({ data: [], pagination: { total: 0 } });
    expect((await t.call('GET', '/api/dashboard/shelf/analytics', { as: stranger })).body).toEqual({
      saved: 0,
      completed_from_shelf: 0,
      average_days_on_shelf: null,
      reminders_due: 0,
      reminders_upcoming: 0,
    });
  });

  it('401 without a credential; 400 for a bad page', async () => {
    expectUnauthorized(await t.call('GET', '/api/dashboard/shelf'));
    expectUnauthorized(await t.call('GET', '/api/dashboard/shelf/analytics'));
    expectProblem(await t.call('GET', '/api/dashboard/shelf?per_page=0', { as: learner }), 400, 'validation_failed');
  });
});

describe('dashboard summary', () => {
  let t: TestApp;
  let clock: ManualClock;
  let learner: TestUser;
  let instructor: TestUser;
  let algebra: ReturnType<typeof insertCourse>;
  let biology: ReturnType<typeof insertCourse>;
  let dropped: ReturnType<typeof insertCourse>;
  let taught: ReturnType<typeof insertCourse>;
  const acts: Record<string, ReturnType<typeof insertActivity>> = {};
  const at = (deltaMs: number) => new Date(clock.now().getTime() + deltaMs).toISOString();
  const summary = async (as: TestUser = learner) => {
    const res = await t.call('GET', '/api/dashboard/summary', { as });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    clock = new ManualClock(START);
    t = await makeTestApp({ clock });
    learner = await t.newUser();
    instructor = await t.newUser();
    const tenantId = t.defaultTenantId;
    const newCourse = (title: string) => insertCourse(t.db, { tenantId, createdBy: instructor.user.id, title });
    algebra = newCourse('Algebra');
    biology = newCourse('Biology');
    dropped = newCourse('Chemistry');
    taught = newCourse('Drama');
    for (const c of [algebra, biology, dropped]) insertEnrollment(t.db, { tenantId, courseId: c.id, userId: learner.user.id });
    insertEnrollment(t.db, { tenantId, courseId: taught.id, userId: learner.user.id, role: 'ta' });
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.courseId, dropped.id)).run();

    const add = (key: string, c: { id: string }, moduleId: string, fields: { dueAt?: string | null; required?: boolean; position?: number }) =>
      (acts[key] = insertActivity(t.db, { tenantId, courseId: c.id, moduleId, createdBy: instructor.user.id, title: key, ...fields }));
    const m1 = insertModule(t.db, { tenantId, courseId: algebra.id, title: 'Equations' });
    add('a-done', algebra, m1.id, { position: 0 });
    add('a-due-2d', algebra, m1.id, { position: 1, dueAt: at(2 * DAY) });
    add('a-due-6d-skipped', algebra, m1.id, { position: 2, dueAt: at(6 * DAY) });
    add('a-optional-due-1d', algebra, m1.id, { position: 3, required: false, dueAt: at(DAY) });
    add('a-due-8d', algebra, m1.id, { position: 4, dueAt: at(8 * DAY) });
    add('a-overdue', algebra, m1.id, { position: 5, dueAt: at(-HOUR) });
    add('a-done-due-3d', algebra, m1.id, { position: 6, dueAt: at(3 * DAY) });
    const m2 = insertModule(t.db, { tenantId, courseId: biology.id, title: 'Cells' });
    add('b-due-12h', biology, m2.id, { position: 0, dueAt: at(12 * HOUR) });
    add('b-other', biology, m2.id, { position: 1 });
    const m3 = insertModule(t.db, { tenantId, courseId: dropped.id });
    add('c-due-1d', dropped, m3.id, { dueAt: at(DAY) });
    const m4 = insertModule(t.db, { tenantId, courseId: taught.id });
    add('d-due-1d', taught, m4.id, { dueAt: at(DAY) });

    insertState(t.db, acts['a-done']!, learner.user.id, { status: 'completed', completedAt: at(-2 * HOUR), xpAwarded: 15 });
    insertState(t.db, acts['a-done-due-3d']!, learner.user.id, { status: 'completed', completedAt: at(-HOUR), xpAwarded: 12 });
    insertState(t.db, acts['a-due-6d-skipped']!, learner.user.id, { status: 'skipped', skippedAt: at(-HOUR) });
    // Another learner's completion changes nothing of this one's.
    insertState(t.db, acts['b-due-12h']!, instructor.user.id, { status: 'completed', completedAt: at(-HOUR) });
  });
  afterAll(() => t.close());

  it('a newcomer: level 1, nothing earned, no courses', async () => {
    const stranger = await t.newUser();
    expect(await summary(stranger)).toEqual({
      xp: 0,
      level: 1,
      streak_days: 0,
      longest_streak: 0,
      last_active_day: null,
      badges: 0,
      unread_feed_count: 0,
      courses: [],
      due_soon: [],
      due_soon_total: 0,
    });
  });

  it("lists the courses the caller learns in (active, as a student) with progress from the course state, most recently active first", async () => {
    const body = await summary();
    expect(body.courses).toEqual([
      {
        course_id: algebra.id,
        title: 'Algebra',
        slug: algebra.slug,
        enrollment_id: expect.any(String),
        status: 'in_progress',
        // Required: a-done, a-due-2d, a-due-6d-skipped, a-due-8d, a-overdue, a-done-due-3d; two completed.
        percent: 33.3,
        completed_required: 2,
        total_required: 6,
        xp_earned: 27,
        last_activity_at: expect.any(String),
      },
      {
        course_id: biology.id,
        title: 'Biology',
        slug: biology.slug,
        enrollment_id: expect.any(String),
        status: 'not_started',
        percent: 0,
        completed_required: 0,
        total_required: 2,
        xp_earned: 0,
        last_activity_at: null,
      },
    ]);
  });

  it('due soon: the next 7 days, not completed (skipped ones still due), soonest first, with availability', async () => {
    const body = await summary();
    expect(body.due_soon.map((d: { title: string }) => d.title)).toEqual(['b-due-12h', 'a-optional-due-1d', 'a-due-2d', 'a-due-6d-skipped']);
    expect(body.due_soon_total).toBe(4);
    expect(body.due_soon[0]).toEqual({
      activity_id: acts['b-due-12h']!.id,
      title: 'b-due-12h',
      type: 'reading',
      course_id: biology.id,
      module_id: acts['b-due-12h']!.moduleId,
      due_at: acts['b-due-12h']!.dueAt,
      required: true,
      status: 'not_started',
      available: true,
    });
    expect(body.due_soon[1]).toMatchObject({ required: false, status: 'not_started' });
    expect(body.due_soon[3]).toMatchObject({ status: 'skipped' });
  });

  it('an activity locked by a prerequisite is still due, and marked not available', async () => {
    // b-other must be completed before b-due-12h.
    const edge = t.db
      .insert(sequencingEdges)
      .values({
        id: newId(),
        tenantId: t.defaultTenantId,
        courseId: biology.id,
        fromNodeId: acts['b-other']!.id,
        fromNodeType: 'activity',
        toNodeId: acts['b-due-12h']!.id,
        toNodeType: 'activity',
        createdBy: instructor.user.id,
        createdAt: clock.now().toISOString(),
      })
      .returning()
      .get();
    try {
      const body = await summary();
      expect(body.due_soon[0]).toMatchObject({ title: 'b-due-12h', available: false });
      expect(body.due_soon[2]).toMatchObject({ title: 'a-due-2d', available: true });
    } finally {
      t.db.delete(sequencingEdges).where(eq(sequencingEdges.id, edge.id)).run();
    }
  });

  it('xp, level, badges and the streak from the learner stats; unread feed count', async () => {
    insertLearnerStats(t.db, {
      tenantId: t.defaultTenantId,
      userId: learner.user.id,
      totalXp: 420,
      level: 4,
      streakDays: 5,
      longestStreak: 9,
      lastActiveDay: '2026-03-10',
    });
    insertBadge(t.db, { tenantId: t.defaultTenantId, userId: learner.user.id, badge: 'first_completion' });
    insertBadge(t.db, { tenantId: t.defaultTenantId, userId: learner.user.id, badge: 'module_completed', scopeId: acts['a-done']!.moduleId });
    appendEvent(t.db, clock, {
      tenantId: t.defaultTenantId,
      type: 'level.reached',
      actorId: learner.user.id,
      subject: { type: 'user', id: learner.user.id },
      data: { user_id: learner.user.id, level: 4, total_xp: 420 },
      recipients: [learner.user.id],
    });
    expect(await summary()).toMatchObject({
      xp: 420,
      level: 4,
      streak_days: 5,
      longest_streak: 9,
      last_active_day: '2026-03-10',
      badges: 2,
      unread_feed_count: 1,
    });
    expect((await t.call('POST', '/api/dashboard/feed/read', { as: learner })).status).toBe(200);
    expect((await summary()).unread_feed_count).toBe(0);
  });

  it("the streak holds through the next day and breaks after a whole day without a completion, in the learner's calendar", async () => {
    // Last active on 2026-03-10 (UTC). 2026-03-11 23:30 UTC: yesterday was the 10th, it holds.
    clock.set('2026-03-11T23:30:00.000Z');
    expect((await summary()).streak_days).toBe(5);
    // 2026-03-12 00:30 UTC: the 11th passed with no completion, broken.
    clock.set('2026-03-12T00:30:00.000Z');
    expect(await summary()).toMatchObject({ streak_days: 0, longest_streak: 9, last_active_day: '2026-03-10' });
    // In New York it is still the 11th (20:30): it holds there.
    const tz = await t.call('PATCH', `/api/users/${learner.user.id}`, { as: learner, body: { timezone: 'America/New_York' } });
    expect(tz.status, tz.text).toBe(200);
    expect((await summary()).streak_days).toBe(5);
    // Back to UTC.
    expect((await t.call('PATCH', `/api/users/${learner.user.id}`, { as: learner, body: { timezone: null } })).body.timezone).toBeNull();
    expect((await summary()).streak_days).toBe(0);
    clock.set(START);
  });

  it('due soon lists the first 50 (soonest, ties by id) and counts them all', async () => {
    const tenantId = t.defaultTenantId;
    const busy = await t.newUser();
    const course = insertCourse(t.db, { tenantId, createdBy: instructor.user.id, title: 'Busy' });
    insertEnrollment(t.db, { tenantId, courseId: course.id, userId: busy.user.id });
    const module = insertModule(t.db, { tenantId, courseId: course.id });
    // 60 activities due over the next 20 hours, three at each hour; two completed, one due after the week.
    const due = Array.from({ length: 60 }, (_, i) =>
      insertActivity(t.db, { tenantId, courseId: course.id, moduleId: module.id, createdBy: instructor.user.id, title: `due-${i}`, position: i, dueAt: at((1 + (i % 20)) * HOUR) }),
    );
    insertActivity(t.db, { tenantId, courseId: course.id, moduleId: module.id, createdBy: instructor.user.id, title: 'later', position: 60, dueAt: at(8 * DAY) });
    for (const a of [due[3]!, due[40]!]) insertState(t.db, a, busy.user.id, { status: 'completed', completedAt: at(-HOUR) });
    const expected = due
      .filter((a) => a !== due[3] && a !== due[40])
      .sort((a, b) => Date.parse(a.dueAt!) - Date.parse(b.dueAt!) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((a) => a.id);
    const body = await summary(busy);
    expect(body.due_soon_total).toBe(58);
    expect(body.due_soon.map((d: { activity_id: string }) => d.activity_id)).toEqual(expected.slice(0, 50));
  });

  it('401 without a credential', async () => {
    expectUnauthorized(await t.call('GET', '/api/dashboard/summary'));
  });
});
