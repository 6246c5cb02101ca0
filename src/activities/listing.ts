// A learner's activities across the courses they are actively enrolled in, ordered by the one
// priority function (priority.ts): `GET /api/activities` and the dashboard's next up. Availability
// comes from the course-state engine, computed for all the learner's courses in one call, which also
// gives each activity's sort keys (from the course graph it keeps in memory) and the learner's mark
// on it; only the page's rows are then read in full.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { activities, activityStates } from '../../db/schema';
import { learnerCourseState, learnerCourseStates, type LearnerCourseState } from '../sequencing/state';
import { compareByPriority, isOverdue, priorityScore, type LearnerActivityStatus, type PrioritizedActivity } from './priority';
import { activeCourseIdsAs } from '../memberships/service';
import type { LinkRow } from './lti-links';
import { reachableCourseIds } from '../courses/policy';
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

/**
 * One page of the learner's activities across their active courses (or one of them), in priority
 * order, with the total. Everything is sorted on its keys alone; only the page's rows are read in full.
 */
export function learnerActivityPage(
  db: Db,
  now: number,
  learner: { tenantId: string; userId: string; courseIds?: readonly string[] | null },
  filter: { courseId?: string; status?: ActivityStatusFilter },
  page: { offset: number; limit: number },
): { items: LearnerActivity[]; total: number } {
  const courseIds = reachableCourseIds(learner, activeCourseIdsAs(db, learner.tenantId, learner.userId, 'student', filter.courseId));
  if (courseIds.length === 0) return { items: [], total: 0 };
  const courseStates = learnerCourseStates(db, { tenantId: learner.tenantId, userId: learner.userId, courseIds });
  // The sort keys come with the course graph the engine keeps in memory, the learner's marks with its answer.
  const all: Light[] = [];
  for (const [courseId, courseState] of courseStates) {
    for (const activity of courseState.activities) {
      const node = courseState.byId.get(activity.id);
      const a: Light = {
        id: activity.id,
        courseId,
        priority: activity.priority,
        required: activity.required,
        dueAt: activity.dueAt,
        status: node?.progress ?? 'not_started',
        available: node?.available ?? false,
      };
      if (matches(a, filter.status)) all.push(a);
    }
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

/** `links`: the LTI links of the page's activities (linksOf). */
export const presentLearnerActivity = (a: LearnerActivity, now: number, links: ReadonlyMap<string, LinkRow>) => ({
  ...presentActivity(a.row, links.get(a.row.id)),
  state: presentState(a.state),
  available: a.available,
  locked: isLocked(a),
  overdue: isOverdue(a, now),
  priority_score: Math.round(priorityScore(a, now) * 1000) / 1000,
});
