// A learner's activities across the courses they are actively enrolled in, ordered by the one
// priority function (priority.ts): `GET /api/activities` and the dashboard's next up. Availability
// comes from the course-state engine, computed for all the learner's courses in one call; the sort
// keys of the activities and the learner's states are two range reads on (course) and (user, course),
// and only the page's rows are then read in full.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, activityStates } from '../../db/schema';
import { learnerCourseState, learnerCourseStates, type LearnerCourseState } from '../sequencing/state';
import { compareByPriority, isOverdue, priorityScore, type LearnerActivityStatus, type PrioritizedActivity } from './priority';
import { preparedFor } from '../lib/prepared';
import { activeCourseIdsAs } from '../memberships/service';
import { presentActivity, presentState } from './present';
import type { ActivityRow, ActivityStateRow } from './service';

export interface LearnerActivity extends PrioritizedActivity {
  row: ActivityRow;
  state: ActivityStateRow | undefined;
}

export type ActivityStatusFilter = LearnerActivityStatus | 'locked' | 'available';

function combine(row: ActivityRow, state: ActivityStateRow | undefined, courseState: LearnerCourseState | undefined): LearnerActivity {
  return {
    id: row.id,
    priority: row.priority,
    required: row.required,
    dueAt: row.dueAt,
    status: state?.status ?? 'not_started',
    available: courseState?.byId.get(row.id)?.available ?? false,
    row,
    state,
  };
}

const isLocked = (a: PrioritizedActivity) => !a.available && a.status !== 'completed' && a.status !== 'skipped';

function matches(a: PrioritizedActivity, filter: ActivityStatusFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (filter === 'locked') return isLocked(a);
  if (filter === 'available') return a.available && a.status !== 'completed' && a.status !== 'skipped';
  return a.status === filter;
}

interface Light extends PrioritizedActivity {
  courseId: string;
}

/** The sort keys of a learner's activities and states, read without drizzle's row mapping (4,000 rows per request). */
function lightStatements(db: Db) {
  return preparedFor(db, 'activities:learner-light', () => {
    const p = sql.placeholder;
    const inCourses = (column: typeof activities.courseId | typeof activityStates.courseId) => sql`${column} in (select value from json_each(${p('courseIds')}))`;
    return {
      activities: db
        .select({ id: activities.id, courseId: activities.courseId, priority: activities.priority, required: activities.required, dueAt: activities.dueAt })
        .from(activities)
        // The course ids were chosen among the caller's tenant's courses (activeCourseIdsAs): the
        // course index alone serves this, where a tenant predicate would lead SQLite to the tenant index.
        .where(inCourses(activities.courseId))
        .prepare(),
      states: db
        .select({ activityId: activityStates.activityId, status: activityStates.status })
        .from(activityStates)
        .where(and(eq(activityStates.userId, p('userId')), inCourses(activityStates.courseId)))
        .prepare(),
    };
  });
}

/**
 * One page of the learner's activities across their active courses (or one of them), in priority
 * order, with the total. Everything is sorted on its keys alone; only the page's rows are read in full.
 */
export function learnerActivityPage(
  db: Db,
  now: number,
  learner: { tenantId: string; userId: string },
  filter: { courseId?: string; status?: ActivityStatusFilter },
  page: { offset: number; limit: number },
): { items: LearnerActivity[]; total: number } {
  const courseIds = activeCourseIdsAs(db, learner.tenantId, learner.userId, 'student', filter.courseId);
  if (courseIds.length === 0) return { items: [], total: 0 };
  const courseStates = learnerCourseStates(db, { tenantId: learner.tenantId, userId: learner.userId, courseIds });
  const params = { courseIds: JSON.stringify(courseIds), userId: learner.userId };
  const statements = lightStatements(db);
  const statuses = new Map<string, LearnerActivityStatus>();
  for (const [activityId, status] of statements.states.values(params) as [string, LearnerActivityStatus | null][]) {
    if (status) statuses.set(activityId, status);
  }
  const all: Light[] = [];
  for (const [id, courseId, priority, required, dueAt] of statements.activities.values(params) as [string, string, number, number, string | null][]) {
    const a: Light = {
      id,
      courseId,
      priority,
      required: required === 1,
      dueAt,
      status: statuses.get(id) ?? 'not_started',
      available: courseStates.get(courseId)?.byId.get(id)?.available ?? false,
    };
    if (matches(a, filter.status)) all.push(a);
  }
  all.sort(compareByPriority(now));
  const chosen = all.slice(page.offset, page.offset + page.limit);
  if (chosen.length === 0) return { items: [], total: all.length };
  const ids = chosen.map((a) => a.id);
  const rows = new Map(db.select().from(activities).where(inArray(activities.id, ids)).all().map((r) => [r.id, r]));
  const states = new Map(
    db
      .select()
      .from(activityStates)
      .where(and(eq(activityStates.userId, learner.userId), inArray(activityStates.activityId, ids)))
      .all()
      .map((s) => [s.activityId, s]),
  );
  return { items: chosen.map((a) => ({ ...a, row: rows.get(a.id)!, state: states.get(a.id) })), total: all.length };
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
