// Activities: the things a learner does in a module (read, watch, take a quiz...). Instructors
// create, change, move and delete them; positions are dense (0..n-1) within the module and every
// change that moves positions reads and writes inside one IMMEDIATE transaction, as modules do.
// Deleting an activity takes with it every learner's state on it and the sequencing edges that
// touch it, and unties gradebook assignments graded on it; deleting a module does that for each of
// its activities (moduleCleanup, run inside the module's deletion).
import { and, asc, eq, gt, gte, inArray, isNull, lt, lte, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, activityStates, courseModules, courses, gradebookAssignments, type ActivityType } from '../../db/schema';
import type { Actor } from '../auth/authenticator';
import type { CourseModuleRow } from '../courses/structure';
import type { ModuleCleanup } from '../context';
import type { CourseRow } from '../courses/service';
import { notFound } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { countRows } from '../lib/sql';
import { membershipOf } from '../memberships/service';
import { deleteAlignmentsTo } from '../competencies/cleanup';
import { deleteEdgesTouching } from '../sequencing/edges';
import type { ActivityAccess } from './policy';

export type ActivityRow = typeof activities.$inferSelect;
export type ActivityStateRow = typeof activityStates.$inferSelect;

/** An activity with its (live) course and the caller's enrollment in that course, for the policy. */
export interface LoadedActivity extends ActivityAccess {
  activity: ActivityRow;
  course: CourseRow;
}

/** An activity of a live course of the caller's tenant (404 otherwise), with the caller's enrollment. */
export function activityAccess(db: Db, actor: Pick<Actor, 'tenantId' | 'userId'>, id: string): LoadedActivity {
  const row = db
    .select({ activity: activities, course: courses })
    .from(activities)
    .innerJoin(courses, eq(courses.id, activities.courseId))
    .where(and(eq(activities.id, id), eq(activities.tenantId, actor.tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Activity');
  return { ...row, membership: membershipOf(db, actor.tenantId, row.course.id, actor.userId) };
}

/** A module of a live course of the caller's tenant (404 otherwise), with its course and the caller's enrollment. */
export function moduleAccess(db: Db, actor: Pick<Actor, 'tenantId' | 'userId'>, id: string) {
  const row = db
    .select({ module: courseModules, course: courses })
    .from(courseModules)
    .innerJoin(courses, eq(courses.id, courseModules.courseId))
    .where(and(eq(courseModules.id, id), eq(courseModules.tenantId, actor.tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Module');
  return { ...row, membership: membershipOf(db, actor.tenantId, row.course.id, actor.userId) };
}

const inModule = (moduleId: string) => eq(activities.moduleId, moduleId);
const moduleCount = (tx: Db, moduleId: string): number => countRows(tx, activities, inModule(moduleId));

/** The module's activities in order; without a page, all of them. */
export function listModuleActivities(db: Db, moduleId: string, page?: PageQuery): { rows: ActivityRow[]; total: number } {
  const query = db.select().from(activities).where(inModule(moduleId)).orderBy(asc(activities.position));
  if (!page) {
    const rows = query.all();
    return { rows, total: rows.length };
  }
  const { limit, offset } = sqlPageBounds(page);
  return { rows: query.limit(limit).offset(offset).all(), total: moduleCount(db, moduleId) };
}

export interface ActivityFields {
  title: string;
  type: ActivityType;
  priority?: number;
  xp?: number;
  dueAt?: string | null;
  required?: boolean;
  deepLinkUrl?: string | null;
  estimatedMinutes?: number | null;
  minSeatSeconds?: number | null;
}

/** Due dates are stored as UTC ISO strings, so that they compare as text and as time alike. */
const utc = (value: string | null | undefined) => (value == null ? value : new Date(value).toISOString());

export function createActivity(
  db: Db,
  clock: Clock,
  module: CourseModuleRow,
  createdBy: string,
  input: ActivityFields & { position?: number },
): ActivityRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const count = moduleCount(tx, module.id);
    const position = Math.min(input.position ?? count, count);
    if (position < count) {
      tx.update(activities)
        .set({ position: sql`${activities.position} + 1` })
        .where(and(inModule(module.id), gte(activities.position, position)))
        .run();
    }
    return tx
      .insert(activities)
      .values({
        id: newId(),
        tenantId: module.tenantId,
        courseId: module.courseId,
        moduleId: module.id,
        title: input.title,
        type: input.type,
        priority: input.priority ?? 50,
        xp: input.xp ?? 10,
        dueAt: utc(input.dueAt) ?? null,
        required: input.required ?? true,
        deepLinkUrl: input.deepLinkUrl ?? null,
        estimatedMinutes: input.estimatedMinutes ?? null,
        minSeatSeconds: input.minSeatSeconds ?? null,
        position,
        createdBy,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
  });
}

export type ActivityChanges = Partial<ActivityFields> & { position?: number };

export function updateActivity(db: Db, clock: Clock, activity: ActivityRow, changes: ActivityChanges): ActivityRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    // Re-read under the write lock: the position may have moved since the caller loaded it.
    const current = tx.select().from(activities).where(eq(activities.id, activity.id)).get();
    if (!current) throw notFound('Activity');
    let position = current.position;
    if (changes.position !== undefined) {
      position = Math.min(changes.position, moduleCount(tx, current.moduleId) - 1);
      const scope = inModule(current.moduleId);
      if (position < current.position) {
        tx.update(activities)
          .set({ position: sql`${activities.position} + 1` })
          .where(and(scope, gte(activities.position, position), lt(activities.position, current.position)))
          .run();
      } else if (position > current.position) {
        tx.update(activities)
          .set({ position: sql`${activities.position} - 1` })
          .where(and(scope, gt(activities.position, current.position), lte(activities.position, position)))
          .run();
      }
    }
    const set: Partial<ActivityRow> = { position, updatedAt: now };
    if (changes.title !== undefined) set.title = changes.title;
    if (changes.type !== undefined) set.type = changes.type;
    if (changes.priority !== undefined) set.priority = changes.priority;
    if (changes.xp !== undefined) set.xp = changes.xp;
    if (changes.dueAt !== undefined) set.dueAt = utc(changes.dueAt) ?? null;
    if (changes.required !== undefined) set.required = changes.required;
    if (changes.deepLinkUrl !== undefined) set.deepLinkUrl = changes.deepLinkUrl;
    if (changes.estimatedMinutes !== undefined) set.estimatedMinutes = changes.estimatedMinutes;
    if (changes.minSeatSeconds !== undefined) set.minSeatSeconds = changes.minSeatSeconds;
    return tx.update(activities).set(set).where(eq(activities.id, current.id)).returning().get()!;
  });
}

/** What goes with activities: learners' states, edges touching them, gradebook ties. Inside the caller's transaction. */
function removeActivities(tx: Db, ids: string[]): void {
  if (ids.length === 0) return;
  tx.delete(activityStates).where(inArray(activityStates.activityId, ids)).run();
  tx.update(gradebookAssignments).set({ activityId: null }).where(inArray(gradebookAssignments.activityId, ids)).run();
  deleteEdgesTouching(tx, ids);
  deleteAlignmentsTo(tx, ids);
  tx.delete(activities).where(inArray(activities.id, ids)).run();
}

export function deleteActivity(db: Db, activity: ActivityRow): void {
  inTransaction(db, (tx) => {
    const current = tx.select().from(activities).where(eq(activities.id, activity.id)).get();
    if (!current) throw notFound('Activity');
    removeActivities(tx, [current.id]);
    tx.update(activities)
      .set({ position: sql`${activities.position} - 1` })
      .where(and(inModule(current.moduleId), gt(activities.position, current.position)))
      .run();
  });
}

/** Registered in Deps.moduleCleanups (src/deps.ts): a module's activities go with it, and what each takes along. */
export const deleteModuleActivities: ModuleCleanup = (tx, module) => {
  const ids = tx.select({ id: activities.id }).from(activities).where(inModule(module.id)).all().map((r) => r.id);
  removeActivities(tx, ids);
};
