// Gradebook assignments: an offering's line items (resource links with grade metadata), in
// column order; an assignment may be graded on an activity of its own offering.
import { and, asc, eq, getTableColumns, gt, isNull, max, ne, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { activities, courses, gradebookAssignments, gradebookGrades, type GradingType } from '../../db/schema';
import { deleteAlignmentsTo } from '../competencies/cleanup';
import { conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor, rowsNamed } from '../lib/prepared';
import { countAll, isUniqueViolation, sqlLimit } from '../lib/sql';
import type { Offering } from './service';

export type AssignmentRow = typeof gradebookAssignments.$inferSelect;

export interface AssignmentFields {
  label: string;
  resourceLinkId: string;
  tag: string | null;
  resourceId: string | null;
  activityId: string | null;
  position: number;
  scoreMaximum: number;
  weight: number;
  category: string;
  dueAt: string | null;
  gradingType: GradingType;
}

export type NewAssignment = Omit<AssignmentFields, 'resourceLinkId' | 'position'> &
  Partial<Pick<AssignmentFields, 'resourceLinkId' | 'position'>>;

const linkTaken = (resourceLinkId: string) =>
  conflict(`resource_link_id ${resourceLinkId} is already used by another assignment of this offering`);

/** Assignments in the gradebook's column order. */
export const assignmentOrder = [asc(gradebookAssignments.position), asc(gradebookAssignments.id)];

const assignmentColumns = getTableColumns(gradebookAssignments);

export function listAssignments(db: Db, offering: Offering, page: PageQuery) {
  const { limit, offset } = pageBounds(page);
  const statements = preparedFor(db, 'gradebook:assignments:list', () => {
    const p = sql.placeholder;
    const where = and(eq(gradebookAssignments.tenantId, p('tenantId')), eq(gradebookAssignments.courseId, p('courseId')));
    return {
      rows: db.select(assignmentColumns).from(gradebookAssignments).where(where).orderBy(...assignmentOrder).limit(sqlLimit(p('limit'))).offset(sqlLimit(p('offset'))).prepare(),
      count: db.select({ n: countAll }).from(gradebookAssignments).where(where).prepare(),
    };
  });
  const params = { tenantId: offering.tenantId, courseId: offering.id };
  const rows = rowsNamed<AssignmentRow>(assignmentColumns, statements.rows.values({ ...params, limit, offset }));
  const total = statements.count.get(params)?.n ?? 0;
  return { rows, total };
}

/** An assignment of a live offering in the caller's tenant, with that offering; 404 otherwise. */
export function getAssignment(db: Db, tenantId: string, id: string): { assignment: AssignmentRow; offering: Offering } {
  const row = db
    .select({ assignment: gradebookAssignments, slug: courses.slug, status: courses.status })
    .from(gradebookAssignments)
    .innerJoin(courses, eq(courses.id, gradebookAssignments.courseId))
    .where(and(eq(gradebookAssignments.id, id), eq(gradebookAssignments.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Assignment');
  const { assignment, slug, status } = row;
  return { assignment, offering: { id: assignment.courseId, tenantId: assignment.tenantId, slug, status } };
}

/**
 * An assignment may only be graded on an activity of its own offering: anything else (unknown,
 * another course's, another tenant's) is 422 naming activity_id, saying no more than that. The
 * activities table is read directly, as the activities area itself writes gradebook ties.
 */
function requireActivityOf(tx: Db, offering: Offering, activityId: string | null | undefined): void {
  if (activityId == null) return;
  const found = tx
    .select({ id: activities.id })
    .from(activities)
    .where(and(eq(activities.id, activityId), eq(activities.tenantId, offering.tenantId), eq(activities.courseId, offering.id)))
    .get();
  if (!found) {
    throw unprocessable('activity_id does not name an activity of this offering', [
      { path: 'activity_id', message: 'no such activity in this offering' },
    ]);
  }
}

export function createAssignment(db: Db, clock: Clock, offering: Offering, createdBy: string, input: NewAssignment): AssignmentRow {
  const id = newId();
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    requireActivityOf(tx, offering, input.activityId);
    const position =
      input.position ??
      (tx
        .select({ last: max(gradebookAssignments.position) })
        .from(gradebookAssignments)
        .where(eq(gradebookAssignments.courseId, offering.id))
        .get()?.last ?? -1) + 1;
    // A resource link of its own unless the caller ties the line item to an existing one.
    const resourceLinkId = input.resourceLinkId ?? id;
    try {
      return tx
        .insert(gradebookAssignments)
        .values({ ...input, id, resourceLinkId, position, tenantId: offering.tenantId, courseId: offering.id, createdBy, createdAt: now, updatedAt: now })
        .returning()
        .get();
    } catch (err) {
      if (isUniqueViolation(err)) throw linkTaken(resourceLinkId);
      throw err;
    }
  });
}

/**
 * Changes an assignment. Its existing grades must stay valid: lowering score_maximum below a
 * recorded score, or making pass_fail an assignment with partial scores, is a 409. A new
 * activity_id must name an activity of the offering (422).
 */
export function updateAssignment(
  db: Db,
  clock: Clock,
  offering: Offering,
  assignment: AssignmentRow,
  changes: Partial<AssignmentFields>,
): AssignmentRow {
  return inTransaction(db, (tx) => {
    requireActivityOf(tx, offering, changes.activityId);
    const scoreMaximum = changes.scoreMaximum ?? assignment.scoreMaximum;
    const gradingType = changes.gradingType ?? assignment.gradingType;
    if (scoreMaximum !== assignment.scoreMaximum || gradingType !== assignment.gradingType) {
      const invalid = gradingType === 'pass_fail'
        ? and(ne(gradebookGrades.score, 0), ne(gradebookGrades.score, scoreMaximum))
        : gt(gradebookGrades.score, scoreMaximum);
      const n = tx
        .select({ n: countAll })
        .from(gradebookGrades)
        .where(and(eq(gradebookGrades.assignmentId, assignment.id), invalid))
        .get()?.n ?? 0;
      if (n > 0) {
        throw conflict(
          gradingType === 'pass_fail'
            ? `${n} recorded grade(s) are neither 0 nor ${scoreMaximum}; change them before making the assignment pass_fail`
            : `${n} recorded grade(s) exceed ${scoreMaximum}; change them before lowering score_maximum`,
        );
      }
    }
    try {
      return tx
        .update(gradebookAssignments)
        .set({ ...changes, updatedAt: clock.now().toISOString() })
        .where(eq(gradebookAssignments.id, assignment.id))
        .returning()
        .get()!;
    } catch (err) {
      if (isUniqueViolation(err) && changes.resourceLinkId) throw linkTaken(changes.resourceLinkId);
      throw err;
    }
  });
}

/** Deletes the assignment with its grades and their history (foreign keys cascade), and the competency alignments to it. */
export function deleteAssignment(db: Db, assignment: AssignmentRow): void {
  inTransaction(db, (tx) => {
    deleteAlignmentsTo(tx, [assignment.id]);
    tx.delete(gradebookAssignments).where(eq(gradebookAssignments.id, assignment.id)).run();
  });
}
