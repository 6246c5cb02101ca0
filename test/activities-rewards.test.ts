// Rewards of completing activities, through the HTTP API with the injected clock: daily streaks
// counted in the learner's own calendar days (23:30 and 00:30 the next local day continue a
// streak, whatever UTC says), streak badges and the streak multiplier, the on-time bonus, the
// level curve, and exactly-once awards (completing again, two concurrent completions).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityStates, events, learnerBadges, learnerStats, users } from '../db/schema';
import { ManualClock } from '../src/lib/clock';
import { completionXp, levelForXp, nextStreak, xpForLevel } from '../src/activities/rewards';
import { localDay, previousDay } from '../src/lib/timezone';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

let t: TestApp;
const clock = new ManualClock('2026-03-09T12:00:00.000Z');
beforeAll(async () => {
  t = await makeTestApp({ clock });
});
afterAll(() => t?.close());

interface Setup {
  student: TestUser;
  activities: { id: string }[];
}

/** A published course with `n` activities in one module and a student whose time zone is `timezone`. */
async function learner(timezone: string | null, n: number, activity: Record<string, unknown> = {}): Promise<Setup> {
  const instructor = await t.newUser();
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  const student = await t.newUser();
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id, role: 'student' });
  t.db.update(users).set({ timezone }).where(eq(users.id, student.user.id)).run();
  const module = await t.call('POST', `/api/courses/${course.id}/modules`, { as: instructor, body: { title: 'M' } });
  const activities = [];
  for (let i = 0; i < n; i++) {
    const res = await t.call('POST', `/api/modules/${module.body.id}/activities`, { as: instructor, body: { title: `A${i}`, type: 'reading', ...activity } });
    expect(res.status, res.text).toBe(201);
    activities.push(res.body);
  }
  return { student, activities };
}

async function completeAt(s: Setup, index: number, at: string, body: Record<string, unknown> = {}) {
  clock.set(at);
  const res = await t.call('POST', `/api/activities/${s.activities[index]!.id}/complete`, { as: s.student, body });
  expect(res.status, res.text).toBe(200);
  return res.body.rewards;
}

describe('streaks in the learner’s calendar days', () => {
  it('23:30 and 00:30 the next local day continue a streak (New York), though both are the same UTC day', async () => {
    const s = await learner('America/New_York', 3);
    // 2026-03-09 23:30 EDT (UTC−4) is 2026-03-10 03:30 UTC; 00:30 on the 10th is 04:30 UTC.
    expect((await completeAt(s, 0, '2026-03-10T03:30:00.000Z')).streak_days).toBe(1);
    const second = await completeAt(s, 1, '2026-03-10T04:30:00.000Z');
    expect(second.streak_days).toBe(2);
    expect(second.xp_awarded).toBe(11); // 10 XP × 1.1 for a streak of 2
    const stats = t.db.select().from(learnerStats).where(eq(learnerStats.userId, s.student.user.id)).get();
    expect(stats).toMatchObject({ streakDays: 2, longestStreak: 2, lastActiveDay: '2026-03-10' });
  });

  it('the same two instants are one day for a learner in UTC (no time zone set): the streak stays at 1', async () => {
    const s = await learner(null, 2);
    expect((await completeAt(s, 0, '2026-03-10T03:30:00.000Z')).streak_days).toBe(1);
    expect((await completeAt(s, 1, '2026-03-10T04:30:00.000Z')).streak_days).toBe(1);
  });

  it('east of UTC too: 23:30 and 00:30 in Tokyo (UTC+9) fall on one UTC day and continue the streak', async () => {
    const s = await learner('Asia/Tokyo', 2);
    expect((await completeAt(s, 0, '2026-03-10T14:30:00.000Z')).streak_days).toBe(1);
    expect((await completeAt(s, 1, '2026-03-10T15:30:00.000Z')).streak_days).toBe(2);
  });

  it('a missed local day starts again at 1; streak badges at 3 days, once; the multiplier grows with the streak', async () => {
    const s = await learner('Europe/Paris', 6);
    const days = ['2026-04-01T21:00:00.000Z', '2026-04-02T21:00:00.000Z', '2026-04-03T21:00:00.000Z'];
    const r = [];
    for (const [i, at] of days.entries()) r.push(await completeAt(s, i, at));
    expect(r.map((x) => x.streak_days)).toEqual([1, 2, 3]);
    expect(r.map((x) => x.xp_awarded)).toEqual([10, 11, 12]);
    expect(r[2].badges_awarded).toEqual([{ badge: 'streak_3', scope_id: null }]);
    // 23:30 Paris time on the 4th is still the 4th there (UTC+2): the streak goes on to 4, no badge again.
    const fourth = await completeAt(s, 3, '2026-04-04T21:30:00.000Z');
    expect(fourth).toMatchObject({ streak_days: 4, badges_awarded: [] });
    // Nothing on the 5th (local): the 6th starts again.
    const after = await completeAt(s, 4, '2026-04-06T08:00:00.000Z');
    expect(after).toMatchObject({ streak_days: 1, xp_awarded: 10 });
    const stats = t.db.select().from(learnerStats).where(eq(learnerStats.userId, s.student.user.id)).get();
    expect(stats).toMatchObject({ streakDays: 1, longestStreak: 4 });
    const badges = t.db.select().from(learnerBadges).where(eq(learnerBadges.userId, s.student.user.id)).all().map((b) => b.badge).sort();
    expect(badges).toEqual(['first_completion', 'streak_3']);
  });

  it('streaks of 7 and 30 days earn their badges', async () => {
    const s = await learner('UTC', 30);
    const start = Date.parse('2026-05-01T10:00:00.000Z');
    const earned: string[] = [];
    for (let day = 0; day < 30; day++) {
      const rewards = await completeAt(s, day, new Date(start + day * 86_400_000).toISOString());
      expect(rewards.streak_days).toBe(day + 1);
      for (const b of rewards.badges_awarded) earned.push(`${day + 1}:${b.badge}`);
    }
    expect(earned).toEqual(['1:first_completion', '3:streak_3', '7:streak_7', '30:streak_30', '30:module_completed', '30:course_completed']);
  });
});

describe('XP, on-time bonus and levels', () => {
  it('half the XP again when completed by the due date, none after it', async () => {
    clock.set('2026-06-01T09:00:00.000Z');
    const s = await learner(null, 2, { xp: 40, due_at: '2026-06-02T00:00:00.000Z', required: false });
    expect((await completeAt(s, 0, '2026-06-01T23:59:59.000Z')).xp_awarded).toBe(60);
    expect((await completeAt(s, 1, '2026-06-02T00:00:01.000Z')).xp_awarded).toBe(44); // 40 × 1.1: the streak of 2 days, no bonus
  });

  it('levels by the documented curve (level n at 50·n·(n−1) XP), with level_up and a level.reached event', async () => {
    expect([0, 99, 100, 299, 300, 600, 1000].map(levelForXp)).toEqual([1, 1, 2, 2, 3, 4, 5]);
    for (let level = 1; level < 60; level++) expect(levelForXp(xpForLevel(level))).toBe(level);
    clock.set('2026-07-01T09:00:00.000Z');
    const s = await learner(null, 3, { xp: 60 });
    const first = await completeAt(s, 0, '2026-07-01T10:00:00.000Z');
    expect(first).toMatchObject({ xp_awarded: 60, total_xp: 60, level: 1, level_up: false });
    const second = await completeAt(s, 1, '2026-07-01T11:00:00.000Z');
    expect(second).toMatchObject({ xp_awarded: 60, total_xp: 120, level: 2, level_up: true });
    const levelEvents = t.db.select().from(events).where(eq(events.type, 'level.reached')).all().filter((e) => e.actorId === s.student.user.id);
    expect(levelEvents.map((e) => JSON.parse(e.payload))).toEqual([{ user_id: s.student.user.id, level: 2, total_xp: 120 }]);
  });

  it('the pure rules: local days, the day before across months and leap years, the streak step', () => {
    expect(localDay(new Date('2026-03-10T03:30:00Z'), 'America/New_York')).toBe('2026-03-09');
    expect(localDay(new Date('2026-03-10T03:30:00Z'), null)).toBe('2026-03-10');
    expect(localDay(new Date('2026-03-10T03:30:00Z'), 'Not/AZone')).toBe('2026-03-10');
    expect(previousDay('2028-03-01')).toBe('2028-02-29');
    expect(previousDay('2026-01-01')).toBe('2025-12-31');
    expect(nextStreak({ streakDays: 4, lastActiveDay: '2026-01-01' }, '2026-01-01')).toBe(4);
    expect(nextStreak({ streakDays: 4, lastActiveDay: '2025-12-31' }, '2026-01-01')).toBe(5);
    expect(nextStreak({ streakDays: 4, lastActiveDay: '2025-12-30' }, '2026-01-01')).toBe(1);
    expect([1, 2, 6, 30].map((d) => completionXp({ xp: 10, dueAt: null }, new Date(), d))).toEqual([10, 11, 15, 15]);
  });
});

describe('rewards accrue exactly once', () => {
  it('completing again answers 200 with xp_awarded 0 and changes no totals, badges or events', async () => {
    clock.set('2026-08-01T09:00:00.000Z');
    const s = await learner(null, 1, { xp: 30 });
    const first = await completeAt(s, 0, '2026-08-01T10:00:00.000Z');
    expect(first.xp_awarded).toBe(30);
    const count = () => t.db.select().from(events).all().filter((e) => e.actorId === s.student.user.id).length;
    const before = count();
    const again = await completeAt(s, 0, '2026-08-02T10:00:00.000Z');
    expect(again).toEqual({ xp_awarded: 0, total_xp: 30, level: 1, level_up: false, streak_days: 1, badges_awarded: [] });
    expect(count()).toBe(before);
    const state = t.db.select().from(activityStates).where(eq(activityStates.userId, s.student.user.id)).get();
    expect(state).toMatchObject({ status: 'completed', xpAwarded: 30, completedAt: '2026-08-01T10:00:00.000Z' });
  });

  it('two concurrent completions: exactly one award', async () => {
    clock.set('2026-09-01T09:00:00.000Z');
    const s = await learner(null, 1, { xp: 25 });
    const path = `/api/activities/${s.activities[0]!.id}/complete`;
    const results = await Promise.all([t.call('POST', path, { as: s.student, body: {} }), t.call('POST', path, { as: s.student, body: {} })]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results.map((r) => r.body.rewards.xp_awarded).sort((a, b) => a - b)).toEqual([0, 25]);
    expect(t.db.select().from(learnerStats).where(eq(learnerStats.userId, s.student.user.id)).get()?.totalXp).toBe(25);
    const completions = t.db.select().from(events).where(eq(events.type, 'activity.completed')).all().filter((e) => e.actorId === s.student.user.id);
    expect(completions).toHaveLength(1);
    expect(t.db.select().from(learnerBadges).where(eq(learnerBadges.userId, s.student.user.id)).all().map((b) => b.badge).sort()).toEqual([
      'course_completed',
      'first_completion',
      'module_completed',
    ]);
  });
});
