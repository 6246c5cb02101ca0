// Gradebook: assignments (LTI AGS line items: resource links of an offering with grade metadata),
// one current grade per student and assignment, the history of every grade change, and the
// per-offering settings (category weights, letter scale). An offering is a course.
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courses } from './courses';

export const gradingTypes = ['points', 'percent', 'pass_fail', 'letter'] as const;
export type GradingType = (typeof gradingTypes)[number];

export const gradebookAssignments = sqliteTable(
  'gradebook_assignments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    label: text('label').notNull(),
    /** The LTI resource link this line item belongs to; unique within the offering. */
    resourceLinkId: text('resource_link_id').notNull(),
    tag: text('tag'),
    resourceId: text('resource_id'),
    /** The course activity graded here. Activities arrive later: the foreign key is added with them. */
    activityId: text('activity_id'),
    scoreMaximum: real('score_maximum').notNull(),
    weight: real('weight').notNull().default(1),
    category: text('category').notNull(),
    dueAt: text('due_at'),
    gradingType: text('grading_type', { enum: gradingTypes }).notNull().default('points'),
    position: integer('position').notNull(),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    // The tenant is in the key so that queries filtering by tenant and offering use this index, not the tenant one.
    index('gradebook_assignments_course_position_idx').on(t.courseId, t.tenantId, t.position, t.id),
    uniqueIndex('gradebook_assignments_course_link_uq').on(t.courseId, t.resourceLinkId),
    index('gradebook_assignments_tenant_idx').on(t.tenantId),
    index('gradebook_assignments_activity_idx').on(t.activityId),
    index('gradebook_assignments_created_by_idx').on(t.createdBy),
  ],
);

export const gradebookGrades = sqliteTable(
  'gradebook_grades',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** Denormalised from the assignment so that a whole offering's grades are one index range. */
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    assignmentId: text('assignment_id')
      .notNull()
      .references(() => gradebookAssignments.id, { onDelete: 'cascade' }),
    studentId: text('student_id')
      .notNull()
      .references(() => users.id),
    score: real('score').notNull(),
    comment: text('comment'),
    gradedBy: text('graded_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('gradebook_grades_assignment_student_uq').on(t.assignmentId, t.studentId),
    // Covers the summary and CSV scans (offering → student → assignment → score) without touching the
    // table; the tenant is in the key so that tenant-and-offering filters pick this index.
    index('gradebook_grades_course_student_idx').on(t.courseId, t.tenantId, t.studentId, t.assignmentId, t.score),
    index('gradebook_grades_student_idx').on(t.studentId),
    index('gradebook_grades_graded_by_idx').on(t.gradedBy),
    index('gradebook_grades_tenant_idx').on(t.tenantId),
  ],
);

/**
 * Each student's grades of an offering packed into one row, kept by triggers on
 * `gradebook_grades` (migrations 0008 and 0038) in the same transaction as every grade write, so it is never
 * stale whoever writes. The summary and the spreadsheet read 1,000 of these rows instead of
 * scanning 100,000 grades (see bench/RESULTS.md, Gradebook). `assignment_ids` are the student's
 * graded assignment ids end to end (36 characters each) and `scores` a JSON array of the scores
 * in the same order.
 */
export const gradebookStudentScores = sqliteTable(
  'gradebook_student_scores',
  {
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    studentId: text('student_id')
      .notNull()
      .references(() => users.id),
    assignmentIds: text('assignment_ids').notNull(),
    scores: text('scores').notNull(),
  },
  // Stored as its key (WITHOUT ROWID, migration 0038: drizzle has no word for it; a migration that
  // rebuilds this table must keep it).
  (t) => [
    primaryKey({ columns: [t.courseId, t.tenantId, t.studentId] }),
    index('gradebook_student_scores_tenant_idx').on(t.tenantId),
    index('gradebook_student_scores_student_idx').on(t.studentId),
  ],
);

export const gradebookGradeHistory = sqliteTable(
  'gradebook_grade_history',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    assignmentId: text('assignment_id')
      .notNull()
      .references(() => gradebookAssignments.id, { onDelete: 'cascade' }),
    studentId: text('student_id')
      .notNull()
      .references(() => users.id),
    /** Null when the change created the grade. */
    oldScore: real('old_score'),
    newScore: real('new_score').notNull(),
    oldComment: text('old_comment'),
    newComment: text('new_comment'),
    changedBy: text('changed_by')
      .notNull()
      .references(() => users.id),
    changedAt: text('changed_at').notNull(),
  },
  (t) => [
    index('gradebook_grade_history_grade_idx').on(t.assignmentId, t.studentId, t.changedAt),
    index('gradebook_grade_history_student_idx').on(t.studentId),
    index('gradebook_grade_history_changed_by_idx').on(t.changedBy),
    index('gradebook_grade_history_tenant_idx').on(t.tenantId),
  ],
);

/** One row per offering whose instructors changed the defaults; absent means the defaults apply. */
export const gradebookSettings = sqliteTable(
  'gradebook_settings',
  {
    courseId: text('course_id')
      .primaryKey()
      .references(() => courses.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** JSON object: category name → weight. */
    categoryWeights: text('category_weights', { mode: 'json' }).$type<Record<string, number>>().notNull(),
    /** JSON array of {letter, min_percent}, highest threshold first, ending at 0. */
    letterScale: text('letter_scale', { mode: 'json' }).$type<{ letter: string; min_percent: number }[]>().notNull(),
    updatedBy: text('updated_by')
      .notNull()
      .references(() => users.id),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('gradebook_settings_tenant_idx').on(t.tenantId), index('gradebook_settings_updated_by_idx').on(t.updatedBy)],
);
