// Gamification: what completing an activity earns, in one place.
//
// - XP: the activity's `xp`, plus an on-time bonus of half of it (rounded down) when it has a due
//   date and is completed by then; the sum is multiplied by the streak multiplier and rounded.
// - Daily streak: consecutive calendar days with at least one completion, counted in the
//   learner's own time zone (users.timezone, an IANA name; UTC when unset). A completion on the
//   day after the last active day continues the streak, one on the same day keeps it, a gap of a
//   whole day or more starts again at 1. So 23:30 and 00:30 the next local day are a streak of 2.
// - Streak multiplier: 1 + 0.1 per streak day beyond the first, at most 1.5 (from day 6 on).
// - Levels: level n is reached at 50·n·(n−1) total XP (level 1 at 0, 2 at 100, 3 at 300, 4 at 600,
//   5 at 1000...): each level costs 100 XP more than the one before.
// - Badges, each earned once: first_completion; streak_3, streak_7, streak_30 (a streak of that
//   many days); module_completed (per module: all its required activities completed) and
//   course_completed (per course: all its required activities completed).
// Rewards are written by the completion's transaction (applyRewards), so a completion and its
// rewards exist together or not at all, and a second completion finds the first and awards nothing.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { learnerBadges, learnerStats, users } from '../../db/schema';
import { localDay, previousDay } from '../lib/timezone';

export const ON_TIME_BONUS_RATE = 0.5;
export const STREAK_STEP = 0.1;
export const MAX_STREAK_MULTIPLIER = 1.5;
export const LEVEL_STEP_XP = 100;
export const STREAK_BADGES = [
  { days: 3, badge: 'streak_3' },
  { days: 7, badge: 'streak_7' },
  { days: 30, badge: 'streak_30' },
] as const;

export type BadgeName = 'first_completion' | 'streak_3' | 'streak_7' | 'streak_30' | 'module_completed' | 'course_completed';
export interface BadgeAward {
  badge: BadgeName;
  /** The module or course the badge is for; null for the others. */
  scopeId: string | null;
}

/** The bonus for completing by the due date: none without one, or once it has passed. */
export function onTimeBonus(activity: { xp: number; dueAt: string | null }, at: Date): number {
  if (activity.dueAt === null || at.getTime() > Date.parse(activity.dueAt)) return 0;
  return Math.floor(activity.xp * ON_TIME_BONUS_RATE);
}

export function streakMultiplier(streakDays: number): number {
  return Math.min(MAX_STREAK_MULTIPLIER, 1 + STREAK_STEP * Math.max(0, streakDays - 1));
}

/** XP a completion earns with the streak it makes. Multiplied in tenths, so no float drifts a round. */
export function completionXp(activity: { xp: number; dueAt: string | null }, at: Date, streakDays: number): number {
  const tenths = Math.round(streakMultiplier(streakDays) * 10);
  return Math.round(((activity.xp + onTimeBonus(activity, at)) * tenths) / 10);
}

/** The total XP at which `level` is reached. */
export const xpForLevel = (level: number): number => (LEVEL_STEP_XP / 2) * level * (level - 1);

export function levelForXp(totalXp: number): number {
  let level = Math.max(1, Math.floor((1 + Math.sqrt(1 + (8 * Math.max(0, totalXp)) / LEVEL_STEP_XP)) / 2));
  // The square root may land a hair either side of a boundary.
  while (xpForLevel(level + 1) <= totalXp) level++;
  while (level > 1 && xpForLevel(level) > totalXp) level--;
  return level;
}

/** The streak after a completion on `today`, given the last active day and the streak then. */
export function nextStreak(previous: { streakDays: number; lastActiveDay: string | null }, today: string): number {
  if (previous.lastActiveDay === today) return Math.max(1, previous.streakDays);
  if (previous.lastActiveDay !== null && previous.lastActiveDay === previousDay(today)) return previous.streakDays + 1;
  return 1;
}

/**
 * The streak as it stands on `today`: the stored one while it can still continue (last active
 * today or yesterday), else 0. The stored value only changes on a completion.
 */
export function currentStreak(stats: { streakDays: number; lastActiveDay: string | null } | undefined, today: string): number {
  if (!stats?.lastActiveDay) return 0;
  return stats.lastActiveDay === today || stats.lastActiveDay === previousDay(today) ? stats.streakDays : 0;
}

export type LearnerStatsRow = typeof learnerStats.$inferSelect;

export function learnerStatsOf(db: Db, userId: string): LearnerStatsRow | undefined {
  return db.select().from(learnerStats).where(eq(learnerStats.userId, userId)).get();
}

export function timezoneOf(db: Db, userId: string): string | null {
  return db.select({ timezone: users.timezone }).from(users).where(eq(users.id, userId)).get()?.timezone ?? null;
}

export function hasBadge(db: Db, userId: string, badge: BadgeName, scopeId: string | null): boolean {
  return (
    db
      .select({ one: sql`1` })
      .from(learnerBadges)
      .where(sql`${learnerBadges.userId} = ${userId} and ${learnerBadges.badge} = ${badge} and ${learnerBadges.scopeId} = ${scopeId ?? ''}`)
      .get() !== undefined
  );
}

export interface RewardsOnOffer {
  xp: number;
  onTimeBonus: number;
  streakMultiplier: number;
  xpIfCompletedNow: number;
  /** Only the badges that do not depend on what else is completed (first completion, streaks). */
  badges: BadgeName[];
}

/** What a completion at `at` would earn the learner, without writing anything. */
export function rewardsOnOffer(db: Db, userId: string, activity: { xp: number; dueAt: string | null }, at: Date): RewardsOnOffer {
  const stats = learnerStatsOf(db, userId);
  const streak = nextStreak({ streakDays: stats?.streakDays ?? 0, lastActiveDay: stats?.lastActiveDay ?? null }, localDay(at, timezoneOf(db, userId)));
  const badges: BadgeName[] = [];
  if (!hasBadge(db, userId, 'first_completion', null)) badges.push('first_completion');
  for (const { days, badge } of STREAK_BADGES) if (streak >= days && !hasBadge(db, userId, badge, null)) badges.push(badge);
  return {
    xp: activity.xp,
    onTimeBonus: onTimeBonus(activity, at),
    streakMultiplier: streakMultiplier(streak),
    xpIfCompletedNow: completionXp(activity, at, streak),
    badges,
  };
}

export interface AppliedRewards {
  xpAwarded: number;
  totalXp: number;
  level: number;
  levelUp: boolean;
  streakDays: number;
  badges: BadgeAward[];
}

/**
 * Writes a first completion's rewards, inside the completion's transaction: XP, streak and level
 * in learner_stats, and each badge newly earned (a badge already held is not awarded again).
 * `completed` says which module and course the completion finished, as the course state sees it.
 */
export function applyRewards(
  tx: Db,
  input: {
    tenantId: string;
    userId: string;
    activity: { xp: number; dueAt: string | null };
    at: Date;
    completed: { moduleId: string | null; courseId: string | null };
  },
): AppliedRewards {
  const { tenantId, userId, at } = input;
  const now = at.toISOString();
  const stats = learnerStatsOf(tx, userId);
  const today = localDay(at, timezoneOf(tx, userId));
  const streakDays = nextStreak({ streakDays: stats?.streakDays ?? 0, lastActiveDay: stats?.lastActiveDay ?? null }, today);
  const xpAwarded = completionXp(input.activity, at, streakDays);
  const before = stats?.totalXp ?? 0;
  const totalXp = before + xpAwarded;
  const level = levelForXp(totalXp);
  const previousLevel = stats ? stats.level : 1;
  const values = {
    totalXp,
    level,
    streakDays,
    longestStreak: Math.max(stats?.longestStreak ?? 0, streakDays),
    lastActiveDay: today,
    updatedAt: now,
  };
  tx.insert(learnerStats)
    .values({ userId, tenantId, ...values })
    .onConflictDoUpdate({ target: learnerStats.userId, set: values })
    .run();

  const candidates: BadgeAward[] = [{ badge: 'first_completion', scopeId: null }];
  for (const { days, badge } of STREAK_BADGES) if (streakDays >= days) candidates.push({ badge, scopeId: null });
  if (input.completed.moduleId) candidates.push({ badge: 'module_completed', scopeId: input.completed.moduleId });
  if (input.completed.courseId) candidates.push({ badge: 'course_completed', scopeId: input.completed.courseId });
  const badges = candidates.filter(
    ({ badge, scopeId }) =>
      tx
        .insert(learnerBadges)
        .values({ userId, badge, scopeId: scopeId ?? '', tenantId, awardedAt: now })
        .onConflictDoNothing()
        .run().changes === 1,
  );
  return { xpAwarded, totalXp, level, levelUp: level > previousLevel, streakDays, badges };
}
