// Gradebook use cases: assignments of an offering (resource links with grade metadata), grades
// with their change history, per-offering settings, and the whole-offering views (summary,
// spreadsheet) computed set-based: a handful of queries per request, never one per student.
// An offering is a course; every query is scoped to the caller's tenant.
import { and, asc, desc, eq, getTableColumns, gt, isNull, max, ne, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  activities,
  courses,
  enrollments,
  gradebookAssignments,
  gradebookGradeHistory,
  gradebookGrades,
  gradebookStudentScores,
  gradebookSettings,
  users,
  type GradingType,
  type CourseStatus,
} from '../../db/schema';
import type { Clock } from '../lib/clock';
import { deleteAlignmentsTo } from '../competencies/cleanup';
import { getCourse } from '../courses/service';
import { isStudentOfRecord, studentsOfRecord, type StudentOfRecord } from '../memberships/service';
import { appendEvent } from '../events/log';
import { conflict, notFound, unprocessable, type FieldError } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, isUniqueViolation, sqlLimit } from '../lib/sql';
import { preparedFor, rowsNamed } from '../lib/prepared';
import {
  DEFAULT_LETTER_SCALE,
  describeScores,
  letterFor,
  WeightedPercent,
  type LetterThreshold,
  type ScoreStatistics,
} from './statistics';

export type AssignmentRow = typeof gradebookAssignments.$inferSelect;
export type GradeRow = typeof gradebookGrades.$inferSelect;
export type GradeChangeRow = typeof gradebookGradeHistory.$inferSelect;

export interface Offering {
  id: string;
  tenantId: string;
  slug: string;
  /** The course's status: a draft is seen only by its members (and admins), as the course policy says. */
  status: CourseStatus;
}

// ---------------------------------------------------------------- offerings and students

/** The offering: a live course of the caller's tenant; 404 otherwise, whatever other tenants hold. */
export function getOffering(db: Db, tenantId: string, offeringId: string): Offering {
  const course = getCourse(db, tenantId, offeringId);
  return { id: course.id, tenantId: course.tenantId, slug: course.slug, status: course.status };
}

export interface StudentRef {
  id: string;
  name: string;
  email: string;
}

/**
 * A student of the offering, whatever the enrollment's status: a student who completed or dropped
 * the course still has grades to read. 404 for anyone never enrolled as a student.
 */
export function getStudent(db: Db, offering: Offering, studentId: string): StudentRef {
  const row = db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(enrollments)
    .innerJoin(users, eq(users.id, enrollments.userId))
    .where(
      and(
        eq(enrollments.tenantId, offering.tenantId),
        eq(enrollments.courseId, offering.id),
        eq(enrollments.role, 'student'),
        eq(enrollments.userId, studentId),
      ),
    )
    .get();
  if (!row) throw notFound('Student');
  return row;
}

// ---------------------------------------------------------------- assignments

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

const assignmentOrder = [asc(gradebookAssignments.position), asc(gradebookAssignments.id)];

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

// ---------------------------------------------------------------- grades

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
  return inTransaction(db, (tx) => {
    const existing = tx
      .select()
      .from(gradebookGrades)
      .where(and(eq(gradebookGrades.assignmentId, assignment.id), eq(gradebookGrades.studentId, studentId)))
      .get();
    const comment = input.comment === undefined ? (existing?.comment ?? null) : input.comment;
    if (existing && existing.score === input.score && existing.comment === comment) return { grade: existing, created: false };
    const grade = existing
      ? tx
          .update(gradebookGrades)
          .set({ score: input.score, comment, gradedBy, updatedAt: now })
          .where(eq(gradebookGrades.id, existing.id))
          .returning()
          .get()!
      : tx
          .insert(gradebookGrades)
          .values({
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
          })
          .returning()
          .get();
    tx.insert(gradebookGradeHistory)
      .values({
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
      })
      .run();
    appendEvent(tx, clock, {
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
  const total = db.select({ n: countAll }).from(gradebookGradeHistory).where(where).get()?.n ?? 0;
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
  const total = db.select({ n: countAll }).from(gradebookGrades).where(where).get()?.n ?? 0;
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

// ---------------------------------------------------------------- settings

export interface GradebookSettings {
  categoryWeights: Record<string, number>;
  letterScale: LetterThreshold[];
  updatedAt: string | null;
}

export function getSettings(db: Db, offering: Offering): GradebookSettings {
  const row = db
    .select()
    .from(gradebookSettings)
    .where(and(eq(gradebookSettings.courseId, offering.id), eq(gradebookSettings.tenantId, offering.tenantId)))
    .get();
  if (!row) return { categoryWeights: {}, letterScale: DEFAULT_LETTER_SCALE.map((s) => ({ ...s })), updatedAt: null };
  return { categoryWeights: row.categoryWeights, letterScale: row.letterScale, updatedAt: row.updatedAt };
}

/** Rules a well-formed settings body must still meet; each broken one is a field error (422). */
export function settingsProblems(input: { categoryWeights: Record<string, number>; letterScale: LetterThreshold[] }): FieldError[] {
  const problems: FieldError[] = [];
  const weights = Object.entries(input.categoryWeights);
  if (weights.length > 100) problems.push({ path: 'category_weights', message: 'at most 100 categories' });
  for (const [name, w] of weights) {
    if (!Number.isFinite(w) || w < 0) problems.push({ path: `category_weights.${name}`, message: 'must be a number ≥ 0' });
  }
  if (weights.length > 0 && weights.every(([, w]) => w === 0)) {
    problems.push({ path: 'category_weights', message: 'at least one category must weigh more than 0' });
  }
  const scale = input.letterScale;
  const seen = new Set<string>();
  scale.forEach((step, i) => {
    if (!(step.min_percent >= 0 && step.min_percent <= 100)) {
      problems.push({ path: `letter_scale.${i}.min_percent`, message: 'must be within 0..100' });
    }
    if (i > 0 && !(step.min_percent < scale[i - 1]!.min_percent)) {
      problems.push({ path: `letter_scale.${i}.min_percent`, message: 'the scale must be sorted by min_percent, highest first, without ties' });
    }
    if (seen.has(step.letter)) problems.push({ path: `letter_scale.${i}.letter`, message: `letter ${step.letter} appears twice` });
    seen.add(step.letter);
  });
  if (scale.length > 0 && scale[scale.length - 1]!.min_percent !== 0) {
    problems.push({ path: `letter_scale.${scale.length - 1}.min_percent`, message: 'the last step must start at 0 so that every percent gets a letter' });
  }
  return problems;
}

/** Replaces the offering's settings; an omitted part takes its default (no weighting, A–F scale). */
export function putSettings(
  db: Db,
  clock: Clock,
  offering: Offering,
  updatedBy: string,
  input: { categoryWeights?: Record<string, number>; letterScale?: LetterThreshold[] },
): GradebookSettings {
  const categoryWeights = input.categoryWeights ?? {};
  const letterScale = input.letterScale ?? DEFAULT_LETTER_SCALE.map((s) => ({ ...s }));
  const problems = settingsProblems({ categoryWeights, letterScale });
  if (problems.length > 0) throw unprocessable('The gradebook settings are not acceptable', problems);
  const updatedAt = clock.now().toISOString();
  db.insert(gradebookSettings)
    .values({ courseId: offering.id, tenantId: offering.tenantId, categoryWeights, letterScale, updatedBy, updatedAt })
    .onConflictDoUpdate({ target: gradebookSettings.courseId, set: { categoryWeights, letterScale, updatedBy, updatedAt } })
    .run();
  return { categoryWeights, letterScale, updatedAt };
}

// ---------------------------------------------------------------- whole-offering views

export interface GradebookStudentRow extends StudentRef {
  gradedCount: number;
  weightedPercent: number | null;
  letter: string | null;
}

export interface Gradebook {
  settings: GradebookSettings;
  assignments: AssignmentRow[];
  students: GradebookStudentRow[];
  /** Scores by student row then assignment column (students.length × assignments.length); NaN is no grade. */
  scores: Float64Array;
}

/** Ids are UUIDs (`newId()`), so a run of them splits at fixed offsets. */
const UUID_LENGTH = 36;

/**
 * The offering's whole gradebook in four queries (settings, assignments, roster, grades): students
 * of record × assignments, with each student's weighted percent and letter. Its rows are the
 * students of record by name (ASCII case ignored), as memberships' studentsOfRecord reads them (or
 * `ofRecord`, when the caller has read them already). Grades of dropped students stay stored but
 * are left out here.
 */
export function loadGradebook(db: Db, offering: Offering, ofRecord: StudentOfRecord[] = studentsOfRecord(db, offering.tenantId, offering.id)): Gradebook {
  const settings = getSettings(db, offering);
  const assignments = db
    .select()
    .from(gradebookAssignments)
    .where(and(eq(gradebookAssignments.tenantId, offering.tenantId), eq(gradebookAssignments.courseId, offering.id)))
    .orderBy(...assignmentOrder)
    .all();
  const roster: StudentRef[] = ofRecord.map(({ userId, name, email }) => ({ id: userId, name, email }));
  // One row per student (kept by triggers on the grades: see `gradebookStudentScores`): handing
  // 100,000 grades to JavaScript one by one, or even packing them per student at read time, costs
  // several times what reading 1,000 packed rows does. Scores are exact (SQLite writes 17 digits).
  const packed = db
    .select({ studentId: gradebookStudentScores.studentId, assignmentIds: gradebookStudentScores.assignmentIds, scores: gradebookStudentScores.scores })
    .from(gradebookStudentScores)
    .where(and(eq(gradebookStudentScores.courseId, offering.id), eq(gradebookStudentScores.tenantId, offering.tenantId)))
    .values() as [string, string, string][];

  const columns = assignments.length;
  const rowOf = new Map(roster.map((s, i) => [s.id, i]));
  // Within a student the index yields grades by assignment id, so each id is usually the next one in
  // id order (checked in place, without slicing); a gap or any other order falls back to a lookup.
  const byId = assignments.map((a, column) => ({ id: a.id, column })).sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const rankOf = new Map(byId.map((a, rank) => [a.id, rank]));
  // A student graded on every assignment (the usual case) packs exactly this string.
  const everyId = byId.map((a) => a.id).join('');
  const scores = new Float64Array(roster.length * columns).fill(Number.NaN);
  for (const [studentId, ids, scoreList] of packed) {
    const r = rowOf.get(studentId);
    if (r === undefined) continue; // dropped
    const values = JSON.parse(scoreList) as number[];
    if (ids === everyId) {
      for (let k = 0; k < values.length; k++) scores[r * columns + byId[k]!.column] = values[k]!;
      continue;
    }
    let next = 0;
    for (let k = 0; k < values.length; k++) {
      const at = k * UUID_LENGTH;
      let rank: number | undefined = next;
      if (next >= byId.length || !ids.startsWith(byId[next]!.id, at)) rank = rankOf.get(ids.slice(at, at + UUID_LENGTH));
      if (rank === undefined) continue;
      scores[r * columns + byId[rank]!.column] = values[k]!;
      next = rank + 1;
    }
  }

  const students = roster.map((student, r) => {
    const standing = new WeightedPercent();
    let gradedCount = 0;
    for (let c = 0; c < columns; c++) {
      const score = scores[r * columns + c]!;
      if (Number.isNaN(score)) continue;
      const a = assignments[c]!;
      gradedCount++;
      standing.add({ category: a.category, weight: a.weight, fraction: score / a.scoreMaximum });
    }
    const weightedPercent = standing.percent(settings.categoryWeights);
    return { ...student, gradedCount, weightedPercent, letter: letterFor(weightedPercent, settings.letterScale) };
  });
  return { settings, assignments, students, scores };
}

export interface AssignmentSummary extends ScoreStatistics {
  assignment: AssignmentRow;
  missing: number;
}

export interface OfferingSummary {
  gradebook: Gradebook;
  assignments: AssignmentSummary[];
  distribution: { letter: string; count: number }[];
  ungradedStudents: number;
}

/** Per assignment statistics over the students of record, per student standing, and the class distribution. */
export function summarizeOffering(db: Db, offering: Offering): OfferingSummary {
  const gradebook = loadGradebook(db, offering);
  const { assignments, students, scores, settings } = gradebook;
  const columns = assignments.length;
  const column = new Float64Array(students.length);
  const perAssignment = assignments.map((assignment, c) => {
    let n = 0;
    for (let r = 0; r < students.length; r++) {
      const score = scores[r * columns + c]!;
      if (!Number.isNaN(score)) column[n++] = score;
    }
    return { assignment, ...describeScores(column.subarray(0, n)), missing: students.length - n };
  });
  const counts = new Map(settings.letterScale.map((s) => [s.letter, 0]));
  let ungradedStudents = 0;
  for (const s of students) {
    if (s.letter === null) ungradedStudents++;
    else counts.set(s.letter, (counts.get(s.letter) ?? 0) + 1);
  }
  return {
    gradebook,
    assignments: perAssignment,
    distribution: settings.letterScale.map((s) => ({ letter: s.letter, count: counts.get(s.letter) ?? 0 })),
    ungradedStudents,
  };
}
