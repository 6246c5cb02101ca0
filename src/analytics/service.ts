// Analytics: performance summaries. A learner's own figures come from the course-state engine (a
// learner has few courses); a course's figures for its instructors are read set-wise, a handful of
// grouped queries whatever the class size (no query per learner), following the same rules as the
// engine: progress is completed required activities over required activities, a module is
// completed when all its required activities are (one requiring none counts as completed).
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, activityStates, courseModules, courseSections, enrollments, events } from '../../db/schema';
import { currentStreak, learnerStatsOf, levelForXp, timezoneOf } from '../activities/rewards';
import { localDay } from '../lib/timezone';
import { learnerCourseSeatTime, secondsOf } from '../compliance/service';
import { studentGrades } from '../gradebook/grades';
import { getOffering } from '../gradebook/service';
import { loadGradebook } from '../gradebook/views';
import { describeScores } from '../gradebook/statistics';
import type { Clock } from '../lib/clock';
import { DAY_MS } from '../lib/time';
import { courseIdsOfRecord, studentOfRecord, studentsOfRecord } from '../memberships/service';
import { learnerCourseStates } from '../sequencing/state';

const round1 = (v: number) => Math.round(v * 10) / 10;
const percentOf = (part: number, whole: number) => (whole === 0 ? 0 : round1((part / whole) * 100));

/** Progress strictly below this is no progress at all: percents are kept to one decimal. */
const NO_PROGRESS_BELOW = 0.1;

// ---------------------------------------------------------------- a learner's own figures

export interface LearnerSummary {
  userId: string;
  courseId: string | null;
  courses: number;
  completedRequired: number;
  totalRequired: number;
  completionRate: number;
  activitiesCompleted: number;
  xpEarned: number;
  totalXp: number;
  level: number;
  streakDays: number;
  longestStreak: number;
  averageGrade: number | null;
  seatTime: { requiredSeconds: number; creditedSeconds: number; remainingSeconds: number; compliant: boolean };
  lastActivityAt: string | null;
}

/**
 * A learner's figures in one course, or across their courses (students of, active or completed).
 * Completion rate: completed required activities over required ones. XP: earned in the scope, and
 * their total and level. Streak: as it stands today in their time zone. Average grade: the mean of
 * their weighted percents in the scope's gradebooks where they have one. Seat time: credited in the
 * scope, against the requirements of its activities.
 */
export function learnerSummary(db: Db, clock: Clock, q: { tenantId: string; userId: string; courseId?: string; only?: readonly string[] | null }): LearnerSummary {
  // Without a course: those they are (or were, completing them) a student of (of `only`, when given).
  const courseIds = q.courseId ? [q.courseId] : courseIdsOfRecord(db, q.tenantId, q.userId).filter((id) => !q.only || q.only.includes(id));
  const states = learnerCourseStates(db, { tenantId: q.tenantId, userId: q.userId, courseIds });
  let completedRequired = 0;
  let totalRequired = 0;
  let activitiesCompleted = 0;
  let xpEarned = 0;
  let lastActivityAt: string | null = null;
  const seat = { requiredSeconds: 0, remainingSeconds: 0, creditedMs: 0 };
  const grades: number[] = [];
  for (const [courseId, state] of states) {
    completedRequired += state.completedRequired;
    totalRequired += state.totalRequired;
    xpEarned += state.xpEarned;
    for (const n of state.nodes) if (n.nodeType === 'activity' && n.status === 'completed') activitiesCompleted++;
    if (state.lastActivityAt && (lastActivityAt === null || state.lastActivityAt > lastActivityAt)) lastActivityAt = state.lastActivityAt;
    const s = learnerCourseSeatTime(db, q.userId, courseId);
    seat.requiredSeconds += s.requiredSeconds;
    seat.remainingSeconds += s.remainingSeconds;
    seat.creditedMs += s.creditedMs;
    const { weightedPercent } = studentGrades(db, getOffering(db, q.tenantId, courseId), { id: q.userId, name: '', email: '' });
    if (weightedPercent !== null) grades.push(weightedPercent);
  }
  const stats = learnerStatsOf(db, q.userId);
  const totalXp = stats?.totalXp ?? 0;
  return {
    userId: q.userId,
    courseId: q.courseId ?? null,
    courses: states.size,
    completedRequired,
    totalRequired,
    completionRate: percentOf(completedRequired, totalRequired),
    activitiesCompleted,
    xpEarned,
    totalXp,
    level: stats?.level ?? levelForXp(totalXp),
    streakDays: currentStreak(stats, localDay(clock.now(), timezoneOf(db, q.userId))),
    longestStreak: stats?.longestStreak ?? 0,
    averageGrade: grades.length === 0 ? null : Math.round((grades.reduce((a, b) => a + b, 0) / grades.length) * 100) / 100,
    seatTime: {
      requiredSeconds: seat.requiredSeconds,
      creditedSeconds: secondsOf(seat.creditedMs),
      remainingSeconds: seat.remainingSeconds,
      compliant: seat.remainingSeconds === 0,
    },
    lastActivityAt,
  };
}

// ---------------------------------------------------------------- a course's figures

export interface AtRiskOptions {
  /** Progress strictly below this percentage; default: the median progress of the active learners, at least 0.1 (no progress is always at risk). */
  progressBelow?: number;
  /** No activity for at least this many days (default 7). */
  inactiveDays: number;
}

export interface AtRiskLearner {
  userId: string;
  name: string;
  email: string;
  progressPercent: number;
  lastActivityAt: string | null;
  daysInactive: number;
}

export interface CourseSummary {
  courseId: string;
  enrollments: Record<'active' | 'completed' | 'dropped', number> & { total: number };
  progress: { learners: number; averagePercent: number | null; medianPercent: number | null; completedCourse: number };
  modules: { moduleId: string; title: string; requiredActivities: number; started: number; completed: number; completionRate: number }[];
  grades: {
    graded: number;
    ungraded: number;
    meanPercent: number | null;
    medianPercent: number | null;
    distribution: { letter: string; count: number }[];
  };
  atRisk: { progressBelow: number; inactiveDays: number; count: number; learners: AtRiskLearner[] };
  engagement: {
    deepLinkClicks: number;
    learnersClicking: number;
    helpRequests: number;
    skips: number;
    skipReasons: { reason: string | null; count: number }[];
  };
}

function median(sorted: number[]): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  return n % 2 === 1 ? sorted[n >> 1]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

/**
 * The instructor's summary of a course. Learners: students whose enrollment is active or
 * completed ("of record"); at risk: active ones whose progress is below the threshold and whose
 * last activity (the latest change to any of their activity states, or their enrolment when they
 * have none) is at least `inactiveDays` old by the clock. Engagement counts what learners of record
 * did: deep-link clicks, help requests (events), skips and their reasons.
 */
export function courseSummary(db: Db, clock: Clock, q: { tenantId: string; courseId: string }, atRisk: AtRiskOptions): CourseSummary {
  const { tenantId, courseId } = q;
  const byStatus = { active: 0, completed: 0, dropped: 0 };
  for (const r of db
    .select({ status: enrollments.status, n: count() })
    .from(enrollments)
    .where(and(eq(enrollments.tenantId, tenantId), eq(enrollments.courseId, courseId), eq(enrollments.role, 'student')))
    .groupBy(enrollments.status)
    .all())
    byStatus[r.status] = r.n;

  const roster = studentsOfRecord(db, tenantId, courseId);
  const rowOf = new Map(roster.map((r, i) => [r.userId, i]));

  const modules = db
    .select({ id: courseModules.id, title: courseModules.title })
    .from(courseModules)
    .leftJoin(courseSections, eq(courseSections.id, courseModules.sectionId))
    .where(eq(courseModules.courseId, courseId))
    .orderBy(sql`${courseModules.sectionId} is not null`, asc(courseSections.position), asc(courseModules.position))
    .all();
  const moduleIndex = new Map(modules.map((m, i) => [m.id, i]));
  const requiredIn = new Int32Array(modules.length);
  for (const r of db
    .select({ moduleId: activities.moduleId, n: count() })
    .from(activities)
    .where(and(eq(activities.courseId, courseId), eq(activities.required, true)))
    .groupBy(activities.moduleId)
    .all()) {
    const m = moduleIndex.get(r.moduleId);
    if (m !== undefined) requiredIn[m] = r.n;
  }
  let totalRequired = 0;
  for (const n of requiredIn) totalRequired += n;

  // Each activity's module (by index) and whether it is required.
  const activityInfo = new Map<string, { module: number; required: boolean }>();
  for (const a of db
    .select({ id: activities.id, moduleId: activities.moduleId, required: activities.required })
    .from(activities)
    .where(eq(activities.courseId, courseId))
    .all()) {
    const m = moduleIndex.get(a.moduleId);
    if (m !== undefined) activityInfo.set(a.id, { module: m, required: a.required });
  }

  // One read of the course's learner states, one packed row per learner (in index order, no sort):
  // each state as its status's first letter and the activity id, with the learner's clicks, skips
  // and latest change. Cheaper than grouping by learner and module in SQL, which needs a join and a sort.
  const learners = roster.length;
  const done = new Int32Array(learners);
  const last: (string | null)[] = new Array(learners).fill(null);
  const started = new Int32Array(modules.length);
  const moduleDone = new Int32Array(modules.length);
  let clicks = 0;
  let skips = 0;
  let learnersClicking = 0;
  const requiredDoneIn = new Int32Array(modules.length);
  const touchedIn = new Uint8Array(modules.length);
  const packed = db.all(sql`
    select ${activityStates.userId} as user_id,
      group_concat(substr(coalesce(${activityStates.status}, '-'), 1, 1) || ${activityStates.activityId}) as states,
      sum(${activityStates.clicks}) as clicks, sum(${activityStates.status} = 'skipped') as skipped, max(${activityStates.updatedAt}) as latest
    from ${activityStates} where ${activityStates.courseId} = ${courseId}
    group by ${activityStates.userId}`) as { user_id: string; states: string; clicks: number; skipped: number; latest: string }[];
  for (const row of packed) {
    const r = rowOf.get(row.user_id);
    if (r === undefined) continue; // not a learner of record (dropped, or staff)
    requiredDoneIn.fill(0);
    touchedIn.fill(0);
    for (const state of row.states.split(',')) {
      const info = activityInfo.get(state.slice(1));
      if (!info) continue;
      const status = state[0];
      if (status !== '-') touchedIn[info.module] = 1;
      if (status === 'c' && info.required) requiredDoneIn[info.module] = requiredDoneIn[info.module]! + 1;
    }
    for (let m = 0; m < modules.length; m++) {
      done[r] = done[r]! + requiredDoneIn[m]!;
      if (touchedIn[m]) started[m] = started[m]! + 1;
      if (requiredIn[m]! > 0 && requiredDoneIn[m] === requiredIn[m]) moduleDone[m] = moduleDone[m]! + 1;
    }
    last[r] = row.latest;
    clicks += row.clicks;
    if (row.clicks > 0) learnersClicking++;
    skips += row.skipped;
  }
  // A module requiring nothing counts as completed (as in the course state).
  for (let m = 0; m < modules.length; m++) if (requiredIn[m] === 0) moduleDone[m] = learners;

  const progress = Array.from(done, (d) => percentOf(d, totalRequired));
  const sortedAll = [...progress].sort((a, b) => a - b);
  const completedCourse = totalRequired === 0 ? 0 : done.filter((d) => d === totalRequired).length;

  // At risk: among active learners.
  const activeRows = roster.map((r, i) => (r.enrollmentStatus === 'active' ? i : -1)).filter((i) => i >= 0);
  const activeSorted = activeRows.map((i) => progress[i]!).sort((a, b) => a - b);
  // The default is the median, but never below the figures' resolution (0.1): when half the class
  // or more has not started, the median is 0 and "below 0" would flag no one, least of all the
  // learners with no progress at all, whom the default must always flag.
  const progressBelow = atRisk.progressBelow ?? Math.max(median(activeSorted) ?? 0, NO_PROGRESS_BELOW);
  const nowMs = clock.now().getTime();
  const inactiveSince = nowMs - atRisk.inactiveDays * DAY_MS;
  const risky: AtRiskLearner[] = [];
  for (const i of activeRows) {
    if (!(progress[i]! < progressBelow)) continue;
    const lastAt = last[i] ?? null;
    const since = Date.parse(lastAt ?? roster[i]!.enrolledAt);
    if (since > inactiveSince) continue;
    risky.push({
      userId: roster[i]!.userId,
      name: roster[i]!.name,
      email: roster[i]!.email,
      progressPercent: progress[i]!,
      lastActivityAt: lastAt,
      daysInactive: Math.floor((nowMs - since) / DAY_MS),
    });
  }
  risky.sort((a, b) => a.progressPercent - b.progressPercent || b.daysInactive - a.daysInactive || a.name.localeCompare(b.name));

  const reasonCounts = new Map<string | null, number>();
  for (const r of db
    .select({ userId: activityStates.userId, reason: activityStates.skipReason, n: count() })
    .from(activityStates)
    .where(and(eq(activityStates.courseId, courseId), eq(activityStates.status, 'skipped')))
    .groupBy(activityStates.userId, activityStates.skipReason)
    .all())
    if (rowOf.has(r.userId)) reasonCounts.set(r.reason, (reasonCounts.get(r.reason) ?? 0) + r.n);
  const reasons = [...reasonCounts]
    .map(([reason, n]) => ({ reason, count: n }))
    .sort((a, b) => b.count - a.count || (a.reason ?? '').localeCompare(b.reason ?? ''));

  const helpRequests =
    db
      .select({ n: count() })
      .from(events)
      .innerJoin(enrollments, and(eq(enrollments.courseId, courseId), eq(enrollments.userId, events.actorId)))
      .where(
        and(eq(events.tenantId, tenantId), eq(events.type, 'help.requested'), eq(events.courseId, courseId), studentOfRecord),
      )
      .get()?.n ?? 0;

  // The gradebook's own standing of each student (weighted percent and letter), counted by letter.
  const gradebook = loadGradebook(db, getOffering(db, tenantId, courseId), roster);
  const percents = gradebook.students.map((s) => s.weightedPercent).filter((p): p is number => p !== null);
  const gradeStats = describeScores(Float64Array.from(percents));
  const letters = new Map(gradebook.settings.letterScale.map((l) => [l.letter, 0]));
  for (const st of gradebook.students) if (st.letter !== null) letters.set(st.letter, (letters.get(st.letter) ?? 0) + 1);

  return {
    courseId,
    enrollments: { ...byStatus, total: byStatus.active + byStatus.completed + byStatus.dropped },
    progress: {
      learners,
      averagePercent: learners === 0 ? null : round1(progress.reduce((a, b) => a + b, 0) / learners),
      medianPercent: median(sortedAll),
      completedCourse,
    },
    modules: modules.map((m, i) => ({
      moduleId: m.id,
      title: m.title,
      requiredActivities: requiredIn[i]!,
      started: started[i]!,
      completed: moduleDone[i]!,
      completionRate: percentOf(moduleDone[i]!, learners),
    })),
    grades: {
      graded: percents.length,
      ungraded: gradebook.students.length - percents.length,
      meanPercent: gradeStats.mean === null ? null : Math.round(gradeStats.mean * 100) / 100,
      medianPercent: gradeStats.median,
      distribution: gradebook.settings.letterScale.map((l) => ({ letter: l.letter, count: letters.get(l.letter) ?? 0 })),
    },
    atRisk: { progressBelow, inactiveDays: atRisk.inactiveDays, count: risky.length, learners: risky },
    engagement: { deepLinkClicks: clicks, learnersClicking, helpRequests, skips, skipReasons: reasons },
  };
}
