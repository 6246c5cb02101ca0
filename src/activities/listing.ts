// A learner's activities across the courses they are actively enrolled in, ordered by the one
// priority function (priority.ts): `GET /api/activities` and the dashboard's next up. Availability
// comes from the course-state engine, computed for all the learner's courses in one call; the
// activities and the learner's states are two range reads on (course) and (course, user).
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, activityStates, courses, enrollments } from '../../db/schema';
import { learnerCourseState, learnerCourseStates, type LearnerCourseState } from '../sequencing/state';
import { compareByPriority, isOverdue, priorityScore, type LearnerActivityStatus, type PrioritizedActivity } from './priority';
import { presentActivity, presentState } from './present';
import type { ActivityRow, ActivityStateRow } from './service';

export interface LearnerActivity extends PrioritizedActivity {
  row: ActivityRow;
  state: ActivityStateRow | undefined;
}

export type ActivityStatusFilter = LearnerActivityStatus | 'locked' | 'available';

/** Courses (live) in which the user is an active student. */
function learnerCourseIds(db: Db, tenantId: string, userId: string, courseId?: string): string[] {
  return db
    .select({ id: enrollments.courseId })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(
      and(
        eq(enrollments.userId, userId),
        eq(enrollments.tenantId, tenantId),
        eq(enrollments.status, 'active'),
        eq(enrollments.role, 'student'),
        isNull(courses.deletedAt),
        courseId === undefined ? undefined : eq(enrollments.courseId, courseId),
      ),
    )
    .all()
    .map((r) => r.id);
}

const statusOf = (state: ActivityStateRow | undefined): LearnerActivityStatus => state?.status ?? 'not_started';

export function combine(row: ActivityRow, state: ActivityStateRow | undefined, courseState: LearnerCourseState | undefined): LearnerActivity {
  return {
    id: row.id,
    priority: row.priority,
    required: row.required,
    dueAt: row.dueAt,
    status: statusOf(state),
    available: courseState?.byId.get(row.id)?.available ?? false,
    row,
    state,
  };
}

const isLocked = (a: PrioritizedActivity) => !a.available && a.status !== 'completed' && a.status !== 'skipped';

function matches(a: LearnerActivity, filter: ActivityStatusFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (filter === 'locked') return isLocked(a);
  if (filter === 'available') return a.available && a.status !== 'completed' && a.status !== 'skipped';
  return a.status === filter;
}

/** Every activity of the learner's active courses (or one of them), in priority order. */
export function learnerActivities(
  db: Db,
  now: number,
  learner: { tenantId: string; userId: string },
  filter: { courseId?: string; status?: ActivityStatusFilter },
): LearnerActivity[] {
  const courseIds = learnerCourseIds(db, learner.tenantId, learner.userId, filter.courseId);
  if (courseIds.length === 0) return [];
  const states = learnerCourseStates(db, { tenantId: learner.tenantId, userId: learner.userId, courseIds });
  const rows = db
    .select()
    .from(activities)
    .where(and(inArray(activities.courseId, courseIds), eq(activities.tenantId, learner.tenantId)))
    .all();
  const stateRows = new Map(
    db
      .select()
      .from(activityStates)
      .where(and(inArray(activityStates.courseId, courseIds), eq(activityStates.userId, learner.userId)))
      .all()
      .map((s) => [s.activityId, s]),
  );
  return rows
    .map((row) => combine(row, stateRows.get(row.id), states.get(row.courseId)))
    .filter((a) => matches(a, filter.status))
    .sort(compareByPriority(now));
}

/** The learner's module activities in order, with their states and availability. */
export function learnerModuleActivities(db: Db, learner: { tenantId: string; userId: string }, courseId: string, rows: ActivityRow[]): LearnerActivity[] {
  if (rows.length === 0) return [];
  const courseState = learnerCourseState(db, { tenantId: learner.tenantId, courseId, userId: learner.userId });
  const stateRows = new Map(
    db
      .select()
      .from(activityStates)
      .where(and(inArray(activityStates.activityId, rows.map((r) => r.id)), eq(activityStates.userId, learner.userId)))
      .all()
      .map((s) => [s.activityId, s]),
  );
  return rows.map((row) => combine(row, stateRows.get(row.id), courseState));
}

export const presentLearnerActivity = (a: LearnerActivity, now: number) => ({
  ...presentActivity(a.row),
  state: presentState(a.state),
  available: a.available,
  locked: isLocked(a),
  overdue: isOverdue(a, now),
  priority_score: Math.round(priorityScore(a, now) * 1000) / 1000,
});
