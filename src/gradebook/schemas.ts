// Requests and responses of the gradebook. Shapes are checked here (a malformed request is a 400);
// rules that need the data or compare fields (score range, scale order) are the service's (422).
import { z } from '@hono/zod-openapi';
import { gradingTypes } from '../../db/schema';
import { timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, singleLineText } from '../http/text';

/** The gradebook's word for a course (LTI's "offering"): every offering_id is a course id. */
const OFFERING_IS_A_COURSE = 'The id of the course: an offering is a course (GET /api/courses/{id})';
const offeringIdParam = uuidParam('offering_id', OFFERING_IS_A_COURSE);
const offeringId = uuid().openapi({ description: OFFERING_IS_A_COURSE });

export const offeringParams = z.object({ offering_id: offeringIdParam });
export const studentParams = z.object({ offering_id: offeringIdParam, student_id: uuidParam('student_id') });
export const gradeParams = z.object({ id: uuidParam('id'), student_id: uuidParam('student_id') });

const gradingType = z.enum(gradingTypes).openapi({ description: 'How the score is read; every type stores a number in 0..score_maximum' });
const label = singleLineText().trim().min(1).max(200);
const optionalText = singleLineText().trim().min(1).max(255).nullable().optional();
const category = singleLineText().trim().min(1).max(100);
const dueAt = z.iso
  .datetime({ offset: true })
  .transform((v) => new Date(v).toISOString())
  .nullable()
  .optional();

export const gradeMetadataSchema = z
  .object({
    score_maximum: z.number(),
    weight: z.number(),
    category: z.string(),
    due_at: timestamp.nullable(),
    grading_type: gradingType,
  })
  .openapi('GradeMetadata');

export const assignmentSchema = z
  .object({
    id: uuid(),
    offering_id: offeringId,
    label: z.string(),
    resource_link_id: z.string(),
    tag: z.string().nullable(),
    resource_id: z.string().nullable(),
    activity_id: uuid().nullable(),
    position: z.number().int(),
    grade_metadata: gradeMetadataSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Assignment', { description: 'A resource link of the offering (an LTI AGS line item) with its grade metadata' });

const gradeMetadataInput = z
  .object({
    score_maximum: z.number().positive().max(1_000_000),
    weight: z.number().min(0).max(1_000_000).default(1),
    category: category.default('general'),
    due_at: dueAt,
    grading_type: gradingType.default('points'),
  })
  .strict();

export const createAssignmentBody = z
  .object({
    label,
    resource_link_id: singleLineText().trim().min(1).max(255).optional().openapi({ description: 'Defaults to the assignment id' }),
    tag: optionalText,
    resource_id: optionalText,
    activity_id: uuid().nullable().optional().openapi({ description: 'An activity of this offering it is graded on (else 422)' }),
    position: z.number().int().min(0).max(1_000_000).optional().openapi({ description: 'Defaults to after the last assignment' }),
    grade_metadata: gradeMetadataInput,
  })
  .strict()
  .openapi('CreateAssignment');

export const updateAssignmentBody = z
  .object({
    label: label.optional(),
    resource_link_id: singleLineText().trim().min(1).max(255).optional(),
    tag: optionalText,
    resource_id: optionalText,
    activity_id: uuid().nullable().optional().openapi({ description: 'An activity of the offering it is graded on (else 422); null unties it' }),
    position: z.number().int().min(0).max(1_000_000).optional(),
    grade_metadata: z
      .object({
        score_maximum: z.number().positive().max(1_000_000).optional(),
        weight: z.number().min(0).max(1_000_000).optional(),
        category: category.optional(),
        due_at: dueAt,
        grading_type: gradingType.optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateAssignment');

export const putGradeBody = z
  .object({
    score: z.number().openapi({ description: 'Within 0..score_maximum (422 otherwise); pass_fail takes 0 or score_maximum' }),
    comment: multiLineText().max(10_000).nullable().optional().openapi({ description: 'Omitted: the comment stays as it is; null clears it' }),
  })
  .strict()
  .openapi('PutGrade');

export const gradeSchema = z
  .object({
    id: uuid(),
    offering_id: offeringId,
    assignment_id: uuid(),
    student_id: uuid(),
    score: z.number(),
    score_maximum: z.number(),
    comment: z.string().nullable(),
    graded_by: uuid(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Grade');

export const gradeChangeSchema = z
  .object({
    id: uuid(),
    assignment_id: uuid(),
    student_id: uuid(),
    old_score: z.number().nullable().openapi({ description: 'Null when this change created the grade' }),
    new_score: z.number(),
    old_comment: z.string().nullable(),
    new_comment: z.string().nullable(),
    changed_by: uuid(),
    changed_at: timestamp,
  })
  .openapi('GradeChange');

export const listGradesQuery = paginationQuery.extend({
  format: z.enum(['json', 'csv']).default('json').openapi({ description: '`csv`: the whole gradebook as a students × assignments spreadsheet' }),
  assignment_id: uuid().optional(),
  student_id: uuid().optional(),
});

const studentSchema = z.object({ id: uuid(), name: z.string(), email: z.string() }).openapi('GradebookStudent');

export const studentGradesSchema = z
  .object({
    offering_id: offeringId,
    student: studentSchema,
    weighted_percent: z.number().nullable(),
    letter: z.string().nullable(),
    grades: z.array(
      z.object({
        assignment_id: uuid(),
        label: z.string(),
        grade_metadata: gradeMetadataSchema,
        score: z.number().nullable(),
        percent: z.number().nullable(),
        comment: z.string().nullable(),
        graded_at: timestamp.nullable(),
      }),
    ),
  })
  .openapi('StudentGrades');

const nullableNumber = z.number().nullable();

export const letterScaleSchema = z.array(z.object({ letter: z.string(), min_percent: z.number() })).openapi('LetterScale');

export const summarySchema = z
  .object({
    offering_id: offeringId,
    student_count: z.number().int(),
    assignment_count: z.number().int(),
    standard_deviation: z.literal('population').openapi({ description: 'stddev is the population standard deviation (divides by n)' }),
    settings: z.object({ category_weights: z.record(z.string(), z.number()), letter_scale: letterScaleSchema }),
    assignments: z.array(
      z.object({
        assignment_id: uuid(),
        label: z.string(),
        category: z.string(),
        score_maximum: z.number(),
        weight: z.number(),
        count: z.number().int(),
        missing: z.number().int(),
        mean: nullableNumber,
        median: nullableNumber,
        min: nullableNumber,
        max: nullableNumber,
        stddev: nullableNumber,
      }),
    ),
    students: z.array(
      studentSchema.extend({ graded_count: z.number().int(), weighted_percent: nullableNumber, letter: z.string().nullable() }),
    ),
    distribution: z.array(z.object({ letter: z.string(), count: z.number().int() })),
    ungraded_students: z.number().int().openapi({ description: 'Students without any grade that counts, hence no percent and no letter' }),
  })
  .openapi('GradebookSummary');

export const settingsSchema = z
  .object({
    offering_id: offeringId,
    category_weights: z.record(z.string(), z.number()),
    letter_scale: letterScaleSchema,
    updated_at: timestamp.nullable().openapi({ description: 'Null while the defaults apply' }),
  })
  .openapi('GradebookSettings');

/** Both parts, always: a PUT replaces the whole settings, and a part left out is a 422, never a silent reset. */
export const putSettingsBody = z
  .object({
    category_weights: z
      .record(singleLineText().trim().min(1).max(100), z.number())
      .openapi({ description: 'Category → weight (≥ 0). Empty ({}): categories are not weighted' }),
    letter_scale: z
      .array(z.object({ letter: singleLineText().trim().min(1).max(10), min_percent: z.number() }).strict())
      .min(1)
      .max(50)
      .openapi({ description: 'Highest threshold first, strictly descending, within 0..100, ending at 0. The default: A 90, B 80, C 70, D 60, F 0' }),
  })
  .strict()
  .openapi('PutGradebookSettings');
