// Grades: a student's score on an assignment, recorded with its change history and a
// `grade.recorded` event, read one by one, per offering, or per student with their standing.
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { gradebookAssignments, gradebookGradeHistory, gradebookGrades } from '../../db/schema';
import { appendEvent } from '../events/log';
import { notFound, unprocessable, type FieldError } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { countRows } from '../lib/sql';
import { isStudentOfRecord } from '../memberships/service';
import { assignmentOrder, type AssignmentRow } from './assignments';
import type { Offering, StudentRef } from './service';
import { getSettings } from './settings';
import { letterFor, WeightedPercent } from './statistics';

export type GradeRow = typeof gradebookGrades.$inferSelect;
export type GradeChangeRow = typeof gradebookGradeHistory.$inferSelect;

export function scoreProblems(assignment: Pick<AssignmentRow, 'scoreMaximum' | 'gradingType'>, score: number): FieldError[] {
  const max = assignment.scoreMaximum;
  if (!Number.isFinite(score) || score < 0 || score > max) {
    return [{ path: 'score', message: `must be between 0 and ${max} (the assignment's score_maximum)` }];
  }
  if (assignment.gradingType === 'pass_fail' && score !== 0 && score !== max) {
    return [{ path: 'score', message: `a pass_fail assignment takes 0 (fail) or ${max} (pass)` }];
  }
  return [];
}

const p = sql.placeholder;

/** recordGrade's statements, prepared once per database: a grade is the gradebook's hot write (AGS scores, bench/lti.ts). */
function gradeStatements(db: Db) {
  return preparedFor(db, 'gradebook:record-grade', () => ({
    existing: db
      .select()
      .from(gradebookGrades)
      .where(and(eq(gradebookGrades.assignmentId, p('assignmentId')), eq(gradebookGrades.studentId, p('studentId'))))
      .prepare(),
    update: db
      .update(gradebookGrades)
      .set({ score: sql`${p('score')}`, comment: sql`${p('comment')}`, gradedBy: sql`${p('gradedBy')}`, updatedAt: sql`${p('updatedAt')}` })
      .where(eq(gradebookGrades.id, p('id')))
      .returning()
      .prepare(),
    insert: db
      .insert(gradebookGrades)
      .values({
        id: p('id'),
        tenantId: p('tenantId'),
        courseId: p('courseId'),
        assignmentId: p('assignmentId'),
        studentId: p('studentId'),
        score: p('score'),
        comment: p('comment'),
        gradedBy: p('gradedBy'),
        createdAt: p('createdAt'),
        updatedAt: p('updatedAt'),
      })
      .returning()
      .prepare(),
    history: db
      .insert(gradebookGradeHistory)
      .values({
        id: p('id'),
        tenantId: p('tenantId'),
        assignmentId: p('assignmentId'),
        studentId: p('studentId'),
        oldScore: p('oldScore'),
        newScore: p('newScore'),
        oldComment: p('oldComment'),
        newComment: p('newComment'),
        changedBy: p('changedBy'),
        changedAt: p('changedAt'),
      })
      .prepare(),
  }));
}

/**
 * Records a student's grade, creating or replacing it, and keeps the change in the history (who,
 * when, old and new score and comment) and in the event log (`grade.recorded`, in the student's
 * feed). A PUT that changes nothing records nothing.
 * `comment` undefined keeps the current comment; null clears it.
 */
export function recordGrade(
  db: Db,
  clock: Clock,
  assignment: AssignmentRow,
  studentId: string,
  gradedBy: string,
  input: { score: number; comment?: string | null },
): { grade: GradeRow; created: boolean } {
  const problems = scoreProblems(assignment, input.score);
  if (problems.length > 0) throw unprocessable('The score is out of range for this assignment', problems);
  if (!isStudentOfRecord(db, assignment.tenantId, assignment.courseId, studentId)) {
    throw unprocessable('Only students of the offering (active or completed) can be graded', [
      { path: 'student_id', message: 'is not a student of this offering (active or completed)' },
    ]);
  }
  const now = clock.now().toISOString();
  const statements = gradeStatements(db);
  return inTransaction(db, () => {
    const existing = statements.existing.get({ assignmentId: assignment.id, studentId });
    const comment = input.comment === undefined ? (existing?.comment ?? null) : input.comment;
    if (existing && existing.score === input.score && existing.comment === comment) return { grade: existing, created: false };
    const grade = existing
      ? statements.update.get({ id: existing.id, score: input.score, comment, gradedBy, updatedAt: now })!
      : statements.insert.get({
          id: newId(),
          tenantId: assignment.tenantId,
          courseId: assignment.courseId,
          assignmentId: assignment.id,
          studentId,
          score: input.score,
          comment,
          gradedBy,
          createdAt: now,
          updatedAt: now,
        })!;
    statements.history.run({
      id: newId(),
      tenantId: assignment.tenantId,
      assignmentId: assignment.id,
      studentId,
      oldScore: existing?.score ?? null,
      newScore: input.score,
      oldComment: existing?.comment ?? null,
      newComment: comment,
      changedBy: gradedBy,
      changedAt: now,
    });
    appendEvent(db, clock, {
      tenantId: assignment.tenantId,
      type: 'grade.recorded',
      actorId: gradedBy,
      subject: { type: 'grade', id: grade.id },
      courseId: assignment.courseId,
      data: { assignment_id: assignment.id, course_id: assignment.courseId, user_id: studentId, score: input.score, score_maximum: assignment.scoreMaximum },
      recipients: [studentId],
    });
    return { grade, created: !existing };
  });
}

export function getGrade(db: Db, assignment: AssignmentRow, studentId: string): GradeRow {
  const row = db
    .select()
    .from(gradebookGrades)
    .where(and(eq(gradebookGrades.assignmentId, assignment.id), eq(gradebookGrades.studentId, studentId)))
    .get();
  if (!row) throw notFound('Grade');
  return row;
}

/** Changes of one student's grade on one assignment, newest first. */
export function gradeHistory(db: Db, assignment: AssignmentRow, studentId: string, page: PageQuery) {
  const { limit, offset } = sqlPageBounds(page);
  const where = and(
    eq(gradebookGradeHistory.tenantId, assignment.tenantId),
    eq(gradebookGradeHistory.assignmentId, assignment.id),
    eq(gradebookGradeHistory.studentId, studentId),
  );
  const rows = db
    .select()
    .from(gradebookGradeHistory)
    .where(where)
    .orderBy(desc(gradebookGradeHistory.changedAt), desc(gradebookGradeHistory.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, gradebookGradeHistory, where);
  return { rows, total };
}

/** Grade rows of the offering, by student then assignment, optionally for one assignment or student. */
export function listGrades(db: Db, offering: Offering, filter: { assignmentId?: string; studentId?: string }, page: PageQuery) {
  const { limit, offset } = sqlPageBounds(page);
  const where = and(
    eq(gradebookGrades.tenantId, offering.tenantId),
    eq(gradebookGrades.courseId, offering.id),
    filter.assignmentId ? eq(gradebookGrades.assignmentId, filter.assignmentId) : undefined,
    filter.studentId ? eq(gradebookGrades.studentId, filter.studentId) : undefined,
  );
  const rows = db
    .select({ grade: gradebookGrades, scoreMaximum: gradebookAssignments.scoreMaximum })
    .from(gradebookGrades)
    .innerJoin(gradebookAssignments, eq(gradebookAssignments.id, gradebookGrades.assignmentId))
    .where(where)
    .orderBy(asc(gradebookGrades.studentId), asc(gradebookGrades.assignmentId))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, gradebookGrades, where);
  return { rows, total };
}

/** Every assignment of the offering with this student's grade (or none), and their standing. */
export function studentGrades(db: Db, offering: Offering, student: StudentRef) {
  const rows = db
    .select({ assignment: gradebookAssignments, grade: gradebookGrades })
    .from(gradebookAssignments)
    .leftJoin(
      gradebookGrades,
      and(eq(gradebookGrades.assignmentId, gradebookAssignments.id), eq(gradebookGrades.studentId, student.id)),
    )
    .where(and(eq(gradebookAssignments.tenantId, offering.tenantId), eq(gradebookAssignments.courseId, offering.id)))
    .orderBy(...assignmentOrder)
    .all();
  const settings = getSettings(db, offering);
  const standing = new WeightedPercent();
  for (const { assignment, grade } of rows) {
    if (grade) standing.add({ category: assignment.category, weight: assignment.weight, fraction: grade.score / assignment.scoreMaximum });
  }
  const percent = standing.percent(settings.categoryWeights);
  return { rows, weightedPercent: percent, letter: letterFor(percent, settings.letterScale) };
}
