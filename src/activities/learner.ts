// What a learner does with an activity: open its deep link, save it for later (with a reminder)
// and take it off the shelf, skip it, ask for help, and complete it. Each is one transaction on the
// learner's state row (activity_states: no row means not started). Completing checks availability
// with the course-state engine, writes the completion, its rewards and its events together, and
// awards once: the state is re-read under the write lock, so of two concurrent completions one
// finds the other's and awards nothing.
import { and, eq, notExists, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, activityStates, enrollments } from '../../db/schema';
import { requireSeatTime } from '../compliance/service';
import { countRows } from '../lib/sql';
import { appendEvent, type EventRow } from '../events/log';
import { AppError, conflict, notFound, unprocessable } from '../http/errors';
import type { Clock } from '../lib/clock';
import { learnerCourseState } from '../sequencing/state';
import { daysSince } from '../lib/time';
import { localDay } from '../lib/timezone';
import { applyRewards, currentStreak, learnerStatsOf, levelForXp, timezoneOf, type AppliedRewards } from './rewards';
import type { ActivityRow, ActivityStateRow } from './service';

export interface Learner {
  tenantId: string;
  userId: string;
}

export function stateOf(db: Db, userId: string, activityId: string): ActivityStateRow | undefined {
  return db
    .select()
    .from(activityStates)
    .where(and(eq(activityStates.userId, userId), eq(activityStates.activityId, activityId)))
    .get();
}

/** Writes the learner's state row, creating it when there is none. */
function writeState(tx: Db, learner: Learner, activity: ActivityRow, current: ActivityStateRow | undefined, set: Partial<ActivityStateRow>): ActivityStateRow {
  if (current) {
    return tx
      .update(activityStates)
      .set(set)
      .where(and(eq(activityStates.userId, learner.userId), eq(activityStates.activityId, activity.id)))
      .returning()
      .get()!;
  }
  return tx
    .insert(activityStates)
    .values({ activityId: activity.id, userId: learner.userId, tenantId: learner.tenantId, courseId: activity.courseId, updatedAt: set.updatedAt!, ...set })
    .returning()
    .get();
}

/** Touching a not-started (or skipped) activity puts it in progress; a completed one stays completed. */
const started = (current: ActivityStateRow | undefined, now: string): Partial<ActivityStateRow> =>
  current?.status === 'completed' || current?.status === 'in_progress'
    ? {}
    : { status: 'in_progress', startedAt: current?.startedAt ?? now };

export function recordClick(db: Db, clock: Clock, learner: Learner, activity: ActivityRow): { deepLinkUrl: string; clicks: number } {
  if (activity.deepLinkUrl === null) throw conflict('This activity has no deep link to open');
  const deepLinkUrl = activity.deepLinkUrl;
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    const row = writeState(tx, learner, activity, current, { ...started(current, now), clicks: (current?.clicks ?? 0) + 1, updatedAt: now });
    return { deepLinkUrl, clicks: row.clicks };
  });
}

/**
 * A learner opened the activity through its LTI tool (src/lti): the first launch puts it in
 * progress, each counts as a click, and the event log records it (`activity.launched`), in one
 * transaction.
 */
export function recordLaunch(db: Db, clock: Clock, learner: Learner, activity: ActivityRow, toolId: string): ActivityStateRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    const row = writeState(tx, learner, activity, current, { ...started(current, now), clicks: (current?.clicks ?? 0) + 1, updatedAt: now });
    appendEvent(tx, clock, {
      tenantId: learner.tenantId,
      type: 'activity.launched',
      actorId: learner.userId,
      subject: { type: 'activity', id: activity.id },
      courseId: activity.courseId,
      data: { activity_id: activity.id, module_id: activity.moduleId, course_id: activity.courseId, user_id: learner.userId, tool_id: toolId },
    });
    return row;
  });
}

/** The sentence a 409 on a locked activity gives: what blocks it, in the learner's words. */
function lockedDetail(reasons: string[]): string {
  return reasons.length > 0 ? `This activity is locked: ${reasons.join(' ')}` : 'This activity is locked.';
}

/**
 * 409 unless the activity is available to the learner now: a prerequisite of it or of its module
 * unmet (a locked module locks its activities), the course or the enrollment blocking it. Completing,
 * saving for later and skipping all ask it: none may touch a locked activity's state.
 */
function requireUnlocked(tx: Db, learner: Learner, activity: ActivityRow): void {
  const node = learnerCourseState(tx, { tenantId: learner.tenantId, courseId: activity.courseId, userId: learner.userId })?.byId.get(activity.id);
  if (!node || !node.available) {
    throw new AppError('conflict', lockedDetail(node?.reasons ?? []), {
      errors: node?.unmet.map((u) => ({ path: `prerequisites.${u.node_id}`, message: u.message })),
    });
  }
}

export function saveForLater(db: Db, clock: Clock, learner: Learner, activity: ActivityRow, remindAt: string | null): ActivityStateRow {
  const nowDate = clock.now();
  const now = nowDate.toISOString();
  if (remindAt !== null && Date.parse(remindAt) <= nowDate.getTime()) {
    throw unprocessable('remind_at must be in the future', [{ path: 'remind_at', message: `must be after ${now}` }]);
  }
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    if (current?.status === 'completed') throw conflict('This activity is completed: there is nothing to save for later');
    requireUnlocked(tx, learner, activity);
    return writeState(tx, learner, activity, current, {
      ...started(current, now),
      savedAt: current?.savedAt ?? now,
      remindAt: remindAt === null ? null : new Date(remindAt).toISOString(),
      updatedAt: now,
    });
  });
}

export function unsave(db: Db, clock: Clock, learner: Learner, activity: ActivityRow): ActivityStateRow {
  const nowDate = clock.now();
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    if (!current?.savedAt) throw notFound('Saved activity');
    return writeState(tx, learner, activity, current, {
      shelfDays: daysSince(current.savedAt, nowDate),
      savedAt: null,
      remindAt: null,
      updatedAt: nowDate.toISOString(),
    });
  });
}

export function skip(db: Db, clock: Clock, learner: Learner, activity: ActivityRow, reason: string | null): ActivityStateRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    if (current?.status === 'completed') throw conflict('This activity is already completed: it cannot be skipped');
    requireUnlocked(tx, learner, activity);
    return writeState(tx, learner, activity, current, { status: 'skipped', skippedAt: now, skipReason: reason || null, updatedAt: now });
  });
}

/** The course's instructors (active): whose feeds a help request goes to. */
function instructorsOf(db: Db, tenantId: string, courseId: string): string[] {
  return db
    .select({ userId: enrollments.userId })
    .from(enrollments)
    .where(and(eq(enrollments.tenantId, tenantId), eq(enrollments.courseId, courseId), eq(enrollments.role, 'instructor'), eq(enrollments.status, 'active')))
    .all()
    .map((r) => r.userId);
}

export function requestHelp(db: Db, clock: Clock, learner: Learner, activity: ActivityRow, message: string): EventRow {
  return inTransaction(db, (tx) =>
    appendEvent(tx, clock, {
      tenantId: learner.tenantId,
      type: 'help.requested',
      actorId: learner.userId,
      subject: { type: 'activity', id: activity.id },
      courseId: activity.courseId,
      data: { activity_id: activity.id, course_id: activity.courseId, user_id: learner.userId, message },
      recipients: instructorsOf(tx, learner.tenantId, activity.courseId),
    }),
  );
}

export interface CompletionOutcome {
  state: ActivityStateRow;
  rewards: AppliedRewards;
}

/** How many required activities (of a module, of a course) the learner has not completed. */
function requiredLeft(tx: Db, userId: string, scope: SQL): number {
  const done = tx
    .select({ one: sql`1` })
    .from(activityStates)
    .where(and(eq(activityStates.userId, userId), eq(activityStates.activityId, activities.id), eq(activityStates.status, 'completed')));
  return countRows(tx, activities, and(scope, eq(activities.required, true), notExists(done)));
}


export function complete(db: Db, clock: Clock, learner: Learner, activity: ActivityRow, score: number | null): CompletionOutcome {
  const at = clock.now();
  const now = at.toISOString();
  return inTransaction(db, (tx) => {
    const current = stateOf(tx, learner.userId, activity.id);
    if (current?.status === 'completed') {
      // Completing again awards nothing; a better score is kept (a prerequisite's min_score may need it).
      const state =
        score !== null && (current.score === null || score > current.score)
          ? writeState(tx, learner, activity, current, { score, updatedAt: now })
          : current;
      const stats = learnerStatsOf(tx, learner.userId);
      const totalXp = stats?.totalXp ?? 0;
      return {
        state,
        rewards: {
          xpAwarded: 0,
          totalXp,
          level: stats?.level ?? levelForXp(totalXp),
          levelUp: false,
          streakDays: currentStreak(stats, localDay(at, timezoneOf(tx, learner.userId))),
          badges: [],
        },
      };
    }
    requireUnlocked(tx, learner, activity);
    // Compliance: an activity with min_seat_seconds waits for the learner's credited seat time (409 saying how much remains).
    requireSeatTime(tx, clock, { tenantId: learner.tenantId, userId: learner.userId, activityId: activity.id });
    const fromShelf = current?.savedAt != null;
    let state = writeState(tx, learner, activity, current, {
      status: 'completed',
      completedAt: now,
      startedAt: current?.startedAt ?? now,
      score,
      completedFromShelf: fromShelf,
      ...(fromShelf ? { shelfDays: daysSince(current!.savedAt!, at), savedAt: null, remindAt: null } : {}),
      updatedAt: now,
    });
    // A required activity that leaves its module (or course) completed is the one that completed
    // it: before, it was itself missing. "Completed" is the engine's rule (every required activity
    // completed), counted here in one query each instead of a second run of the whole course state.
    const moduleDone = activity.required && requiredLeft(tx, learner.userId, eq(activities.moduleId, activity.moduleId)) === 0;
    const courseDone = moduleDone && requiredLeft(tx, learner.userId, eq(activities.courseId, activity.courseId)) === 0;
    const rewards = applyRewards(tx, {
      tenantId: learner.tenantId,
      userId: learner.userId,
      activity,
      at,
      completed: { moduleId: moduleDone ? activity.moduleId : null, courseId: courseDone ? activity.courseId : null },
    });
    state = writeState(tx, learner, activity, state, { xpAwarded: rewards.xpAwarded });
    const toLearner = { tenantId: learner.tenantId, actorId: learner.userId, courseId: activity.courseId, recipients: [learner.userId] };
    appendEvent(tx, clock, {
      ...toLearner,
      type: 'activity.completed',
      subject: { type: 'activity', id: activity.id },
      data: {
        activity_id: activity.id,
        module_id: activity.moduleId,
        course_id: activity.courseId,
        user_id: learner.userId,
        score,
        xp_awarded: rewards.xpAwarded,
        completed_at: now,
      },
    });
    for (const award of rewards.badges) {
      appendEvent(tx, clock, {
        ...toLearner,
        type: 'badge.awarded',
        subject: { type: 'user', id: learner.userId },
        data: { user_id: learner.userId, badge: award.badge, scope_id: award.scopeId, course_id: activity.courseId },
      });
    }
    if (rewards.levelUp) {
      appendEvent(tx, clock, {
        ...toLearner,
        type: 'level.reached',
        subject: { type: 'user', id: learner.userId },
        data: { user_id: learner.userId, level: rewards.level, total_xp: rewards.totalXp },
      });
    }
    return { state, rewards };
  });
}
