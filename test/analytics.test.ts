// The performance summary through the HTTP API: a learner's own figures (across their courses and
// in one), the instructor's class summary (enrolments by status, progress, the module funnel, the
// grade distribution, engagement with skip reasons and help requests), at-risk learners moving with
// the injected clock and with the thresholds given by query, and who may see what.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollments } from '../db/schema';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t?.close());

const DAY = 86_400_000;
const summary = (as: TestUser, query = '') => t.call('GET', `/api/analytics/performance-summary${query}`, { as });

async function ok<T = any>(res: Promise<{ status: number; text: string; body: T }>): Promise<T> {
  const r = await res;
  expect(r.status, r.text).toBe(200);
  return r.body;
}

interface Setup {
  courseId: string;
  instructor: TestUser;
  ta: TestUser;
  learners: TestUser[];
  modules: string[];
  activities: string[][];
}

/** A course of two modules (two required activities and one optional; one required), four learners, a dropped one and a completed one. */
async function setup(): Promise<Setup> {
  const instructor = await t.newUser({ name: 'Instructor' });
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  const enrol = async (name: string, role: 'student' | 'ta' = 'student') => {
    const u = await t.newUser({ name });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: u.user.id, role });
    return u;
  };
  const learners = [await enrol('Ada'), await enrol('Bo'), await enrol('Cy'), await enrol('Di')];
  const ta = await enrol('Tara', 'ta');
  const modules: string[] = [];
  const activities: string[][] = [];
  for (const [title, list] of [
    ['Week 1', [{ required: true }, { required: true }, { required: false, deep_link_url: 'https://example.com/x' }]],
    ['Week 2', [{ required: true }]],
  ] as const) {
    const m = await t.call('POST', `/api/courses/${course.id}/modules`, { as: instructor, body: { title } });
    modules.push(m.body.id);
    const ids: string[] = [];
    for (const [i, a] of list.entries()) {
      const res = await t.call('POST', `/api/modules/${m.body.id}/activities`, { as: instructor, body: { title: `${title} #${i + 1}`, type: 'reading', ...a } });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    activities.push(ids);
  }
  return { courseId: course.id, instructor, ta, learners, modules, activities };
}

const complete = async (as: TestUser, id: string) => expect((await t.call('POST', `/api/activities/${id}/complete`, { as })).status).toBe(200);

describe('performance summary', () => {
  it('by default flags learners with no progress, even when most of the class has none (the median is then 0)', async () => {
    const s = await setup();
    const [ada] = s.learners as [TestUser, TestUser, TestUser, TestUser];
    // Only Ada makes any progress: the median of four learners is 0.
    await complete(ada, s.activities[0]![0]!);
    t.clock.advance(8 * DAY);
    const later = await ok(summary(s.instructor, `?course_id=${s.courseId}`));
    expect(later.progress.median_percent).toBe(0);
    expect(later.at_risk.progress_below).toBe(0.1);
    expect(later.at_risk.count).toBe(3);
    expect(later.at_risk.learners.map((l: { user_id: string }) => l.user_id).sort()).toEqual(s.learners.slice(1).map((l) => l.user.id).sort());
    expect(later.at_risk.learners.every((l: { progress_percent: number }) => l.progress_percent === 0)).toBe(true);
    // An explicit 0 is still taken at its word: strictly below 0 is no one.
    expect((await ok(summary(s.instructor, `?course_id=${s.courseId}&at_risk_progress_below=0`))).at_risk.count).toBe(0);
  });

  it("gives the instructor the class: enrolments, progress, funnel, grades, engagement, and at-risk learners that move with the clock", async () => {
    const s = await setup();
    const [ada, bo, cy, di] = s.learners as [TestUser, TestUser, TestUser, TestUser];
    const [w1, w2] = s.activities as [string[], string[]];
    const dropped = await t.newUser({ name: 'Dropped' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: s.courseId, userId: dropped.user.id });
    t.db.update(enrollments).set({ status: 'dropped' }).where(and(eq(enrollments.courseId, s.courseId), eq(enrollments.userId, dropped.user.id))).run();

    // Ada finishes everything; Bo finishes week 1; Cy skips one with a reason and clicks; Di does nothing.
    for (const id of [w1[0]!, w1[1]!, w2[0]!]) await complete(ada, id);
    for (const id of [w1[0]!, w1[1]!]) await complete(bo, id);
    expect((await t.call('POST', `/api/activities/${w1[2]}/deep-link-click`, { as: cy })).status).toBe(200);
    expect((await t.call('POST', `/api/activities/${w1[2]}/deep-link-click`, { as: cy })).status).toBe(200);
    expect((await t.call('POST', `/api/activities/${w1[0]}/skip`, { as: cy, body: { reason: 'Already know this' } })).status).toBe(200);
    expect((await t.call('POST', `/api/activities/${w1[2]}/skip`, { as: bo, body: {} })).status).toBe(200);
    expect((await t.call('POST', `/api/activities/${w2[0]}/skip`, { as: di, body: { reason: 'Already know this' } })).status).toBe(200);
    expect((await t.call('POST', `/api/activities/${w2[0]}/help`, { as: cy, body: { message: 'Stuck' } })).status).toBe(201);

    // Grades: Ada 95%, Bo 85%, Cy 40%, Di none.
    const assignment = await t.call('POST', `/api/gradebook/offerings/${s.courseId}/assignments`, { as: s.instructor, body: { label: 'Quiz', grade_metadata: { score_maximum: 100 } } });
    expect(assignment.status, assignment.text).toBe(201);
    for (const [who, score] of [[ada, 95], [bo, 85], [cy, 40]] as const) {
      const g = await t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${who.user.id}`, { as: s.instructor, body: { score } });
      expect(g.status, g.text).toBe(201);
    }

    const now = await ok(summary(s.instructor, `?course_id=${s.courseId}`));
    expect(now).toMatchObject({
      scope: 'course',
      course_id: s.courseId,
      enrollments: { active: 4, completed: 0, dropped: 1, total: 5 },
      // Progress over 3 required activities: Ada 100, Bo 66.7 (a skip does not complete), Cy 0, Di 0.
      progress: { learners: 4, average_percent: 41.7, median_percent: 33.35, completed_course: 1 },
      modules: [
        { module_id: s.modules[0], title: 'Week 1', required_activities: 2, started: 3, completed: 2, completion_rate: 50 },
        { module_id: s.modules[1], title: 'Week 2', required_activities: 1, started: 2, completed: 1, completion_rate: 25 },
      ],
      grades: {
        graded: 3,
        ungraded: 1,
        mean_percent: 73.33,
        median_percent: 85,
        distribution: [
          { letter: 'A', count: 1 },
          { letter: 'B', count: 1 },
          { letter: 'C', count: 0 },
          { letter: 'D', count: 0 },
          { letter: 'F', count: 1 },
        ],
      },
      engagement: {
        deep_link_clicks: 2,
        learners_clicking: 1,
        help_requests: 1,
        skips: 3,
        skip_reasons: [
          { reason: 'Already know this', count: 2 },
          { reason: null, count: 1 },
        ],
      },
      // Below the median (33.35): Cy and Di, but both were active today.
      at_risk: { progress_below: 33.35, inactive_days: 7, count: 0, learners: [] },
    });

    // Seven days on, nobody has done anything: those below the median are at risk.
    t.clock.advance(7 * DAY);
    const later = await ok(summary(s.instructor, `?course_id=${s.courseId}`));
    expect(later.at_risk.count).toBe(2);
    expect(later.at_risk.learners.map((l: { user_id: string }) => l.user_id).sort()).toEqual([cy.user.id, di.user.id].sort());
    expect(later.at_risk.learners[0]).toMatchObject({ progress_percent: 0, days_inactive: 7 });

    // Di acts again: no longer inactive. Thresholds by query widen or narrow the net.
    await complete(di, w1[0]!);
    const afterDi = await ok(summary(s.instructor, `?course_id=${s.courseId}`));
    expect(afterDi.at_risk.learners.map((l: { user_id: string }) => l.user_id)).toEqual([cy.user.id]);
    const strict = await ok(summary(s.instructor, `?course_id=${s.courseId}&at_risk_progress_below=100&at_risk_inactive_days=3`));
    expect(strict.at_risk).toMatchObject({ progress_below: 100, inactive_days: 3 });
    expect(strict.at_risk.learners.map((l: { user_id: string }) => l.user_id).sort()).toEqual([bo.user.id, cy.user.id].sort());
    const lenient = await ok(summary(s.instructor, `?course_id=${s.courseId}&at_risk_inactive_days=30`));
    expect(lenient.at_risk.count).toBe(0);

    // An admin sees the same class view.
    expect((await ok(summary(t.admin, `?course_id=${s.courseId}`))).scope).toBe('course');
  });

  it("gives a learner their own figures, across their courses or in one, and never the class's", async () => {
    const s = await setup();
    const ada = s.learners[0]!;
    const [w1, w2] = s.activities as [string[], string[]];
    await complete(ada, w1[0]!);
    await complete(ada, w1[2]!);
    const mine = await ok(summary(ada));
    expect(mine).toMatchObject({
      scope: 'learner',
      user_id: ada.user.id,
      course_id: null,
      courses: 1,
      completion: { completed_required: 1, total_required: 3, rate: 33.3 },
      activities_completed: 2,
      streak: { current_days: 1, longest_days: 1 },
      average_grade: null,
      seat_time: { required_seconds: 0, credited_seconds: 0, remaining_seconds: 0, compliant: true },
    });
    expect(mine.total_xp).toBeGreaterThan(0);
    expect(mine.xp_earned).toBe(mine.total_xp);
    expect(mine.level).toBeGreaterThanOrEqual(1);

    // In the course, with a seat-time requirement and a grade.
    const timed = await t.call('POST', `/api/modules/${s.modules[1]}/activities`, { as: s.instructor, body: { title: 'Timed', type: 'video', min_seat_seconds: 100 } });
    const session = await t.call('POST', '/api/compliance/sessions', { as: ada, body: { course_id: s.courseId, block_id: timed.body.id } });
    expect(session.status, session.text).toBe(201);
    t.clock.advance(40_000);
    await t.call('POST', `/api/compliance/sessions/${session.body.id}/end`, { as: ada });
    const assignment = await t.call('POST', `/api/gradebook/offerings/${s.courseId}/assignments`, { as: s.instructor, body: { label: 'Quiz', grade_metadata: { score_maximum: 20 } } });
    await t.call('PUT', `/api/gradebook/assignments/${assignment.body.id}/grades/${ada.user.id}`, { as: s.instructor, body: { score: 15 } });
    const inCourse = await ok(summary(ada, `?course_id=${s.courseId}`));
    expect(inCourse).toMatchObject({
      scope: 'learner',
      course_id: s.courseId,
      completion: { completed_required: 1, total_required: 4 },
      average_grade: 75,
      seat_time: { required_seconds: 100, credited_seconds: 40, remaining_seconds: 60, compliant: false },
    });
    expect(inCourse.last_activity_at).not.toBeNull();
    // Time on a block without a requirement (the module) is credited, but makes up for no requirement.
    const onModule = await t.call('POST', '/api/compliance/sessions', { as: ada, body: { course_id: s.courseId, block_id: s.modules[1] } });
    expect(onModule.status, onModule.text).toBe(201);
    t.clock.advance(20_000);
    await t.call('POST', `/api/compliance/sessions/${onModule.body.id}/end`, { as: ada });
    const withModule = { required_seconds: 100, credited_seconds: 60, remaining_seconds: 60, compliant: false };
    expect((await ok(summary(ada, `?course_id=${s.courseId}`))).seat_time).toEqual(withModule);
    expect((await ok(summary(ada))).seat_time).toEqual(withModule);
    // The instructor may ask for that learner.
    expect(await ok(summary(s.instructor, `?course_id=${s.courseId}&user_id=${ada.user.id}`))).toMatchObject({ scope: 'learner', user_id: ada.user.id, average_grade: 75 });
    // And a learner naming themself gets the same as without.
    expect((await ok(summary(ada, `?course_id=${s.courseId}&user_id=${ada.user.id}`))).completion).toEqual(inCourse.completion);
    expect(w2).toHaveLength(1);
  });

  it('refuses: another learner to a student (403), outsiders (403), another user without a course to non-admins (403), unknown or foreign courses (404), bad thresholds (400)', async () => {
    const s = await setup();
    const [ada, bo] = s.learners as [TestUser, TestUser];
    expectProblem(await summary(ada, `?course_id=${s.courseId}&user_id=${bo.user.id}`), 403, 'forbidden');
    // The course's TA sees the class, as its instructor does.
    expect((await ok(summary(s.ta, `?course_id=${s.courseId}`))).scope).toBe('course');
    expectProblem(await summary(await t.newUser(), `?course_id=${s.courseId}`), 403, 'forbidden');
    expectProblem(await summary(ada, `?user_id=${bo.user.id}`), 403, 'forbidden');
    expectProblem(await summary(s.instructor, `?user_id=${bo.user.id}`), 403, 'forbidden');
    expect((await ok(summary(t.admin, `?user_id=${bo.user.id}`))).user_id).toBe(bo.user.id);
    expectProblem(await summary(t.admin, `?user_id=${MISSING_ID}`), 404, 'not_found');
    expectProblem(await summary(s.instructor, `?course_id=${s.courseId}&user_id=${s.ta.user.id}`), 404, 'not_found');
    expectProblem(await summary(s.instructor, `?course_id=${MISSING_ID}`), 404, 'not_found');
    const other = await t.newTenant('analytics-other');
    expectProblem(await summary(other.admin, `?course_id=${s.courseId}`), 404, 'not_found');
    expectProblem(await summary(s.instructor, `?course_id=${s.courseId}&at_risk_inactive_days=0`), 400, 'validation_failed');
    expectProblem(await summary(s.instructor, `?course_id=${s.courseId}&at_risk_progress_below=101`), 400, 'validation_failed');
    expectProblem(await summary(s.instructor, '?course_id=nope'), 400, 'validation_failed');
  });
});
