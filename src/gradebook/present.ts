// Gradebook rows → public JSON (snake_case); a drizzle row is never sent as it is.
import type { AssignmentRow } from './assignments';
import type { GradeChangeRow, GradeRow } from './grades';
import type { Offering, StudentRef } from './service';
import type { GradebookSettings } from './settings';
import type { OfferingSummary } from './views';
import { roundPercent } from './statistics';

export const gradeMetadataOf = (a: AssignmentRow) => ({
  score_maximum: a.scoreMaximum,
  weight: a.weight,
  category: a.category,
  due_at: a.dueAt,
  grading_type: a.gradingType,
});

export function presentAssignment(a: AssignmentRow) {
  return {
    id: a.id,
    offering_id: a.courseId,
    label: a.label,
    resource_link_id: a.resourceLinkId,
    tag: a.tag,
    resource_id: a.resourceId,
    activity_id: a.activityId,
    position: a.position,
    grade_metadata: gradeMetadataOf(a),
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

export function presentGrade(g: GradeRow, scoreMaximum: number) {
  return {
    id: g.id,
    offering_id: g.courseId,
    assignment_id: g.assignmentId,
    student_id: g.studentId,
    score: g.score,
    score_maximum: scoreMaximum,
    comment: g.comment,
    graded_by: g.gradedBy,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
  };
}

export function presentGradeChange(h: GradeChangeRow) {
  return {
    id: h.id,
    assignment_id: h.assignmentId,
    student_id: h.studentId,
    old_score: h.oldScore,
    new_score: h.newScore,
    old_comment: h.oldComment,
    new_comment: h.newComment,
    changed_by: h.changedBy,
    changed_at: h.changedAt,
  };
}

export function presentSettings(offering: Offering, s: GradebookSettings) {
  return {
    offering_id: offering.id,
    category_weights: s.categoryWeights,
    letter_scale: s.letterScale,
    updated_at: s.updatedAt,
  };
}

export const presentStudent = (s: StudentRef) => ({ id: s.id, name: s.name, email: s.email });

export function presentStudentGrades(
  offering: Offering,
  student: StudentRef,
  view: { rows: { assignment: AssignmentRow; grade: GradeRow | null }[]; weightedPercent: number | null; letter: string | null },
) {
  return {
    offering_id: offering.id,
    student: presentStudent(student),
    weighted_percent: view.weightedPercent,
    letter: view.letter,
    grades: view.rows.map(({ assignment, grade }) => ({
      assignment_id: assignment.id,
      label: assignment.label,
      grade_metadata: gradeMetadataOf(assignment),
      score: grade?.score ?? null,
      percent: grade ? roundPercent((100 * grade.score) / assignment.scoreMaximum) : null,
      comment: grade?.comment ?? null,
      graded_at: grade?.updatedAt ?? null,
    })),
  };
}

export function presentSummary(offering: Offering, summary: OfferingSummary) {
  const { gradebook } = summary;
  return {
    offering_id: offering.id,
    student_count: gradebook.students.length,
    assignment_count: gradebook.assignments.length,
    standard_deviation: 'population' as const,
    settings: { category_weights: gradebook.settings.categoryWeights, letter_scale: gradebook.settings.letterScale },
    assignments: summary.assignments.map((s) => ({
      assignment_id: s.assignment.id,
      label: s.assignment.label,
      category: s.assignment.category,
      score_maximum: s.assignment.scoreMaximum,
      weight: s.assignment.weight,
      count: s.count,
      missing: s.missing,
      mean: s.mean,
      median: s.median,
      min: s.min,
      max: s.max,
      stddev: s.stddev,
    })),
    students: gradebook.students.map((s) => ({
      ...presentStudent(s),
      graded_count: s.gradedCount,
      weighted_percent: s.weightedPercent,
      letter: s.letter,
    })),
    distribution: summary.distribution,
    ungraded_students: summary.ungradedStudents,
  };
}
