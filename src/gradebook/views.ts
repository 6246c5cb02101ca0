// Whole-offering views: the gradebook (students of record × assignments, with each student's
// standing) and the offering's summary, computed set-based: a handful of queries per request,
// never one per student.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { gradebookAssignments, gradebookStudentScores } from '../../db/schema';
import { studentsOfRecord, type StudentOfRecord } from '../memberships/service';
import { assignmentOrder, type AssignmentRow } from './assignments';
import type { Offering, StudentRef } from './service';
import { getSettings, type GradebookSettings } from './settings';
import { describeScores, letterFor, WeightedPercent, type ScoreStatistics } from './statistics';

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
