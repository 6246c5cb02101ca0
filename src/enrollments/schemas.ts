// Request and response shapes of enrollments.
import { z } from '@hono/zod-openapi';
import { enrollmentRequestStatuses, enrollmentRoles, enrollmentStatuses } from '../../db/schema';
import { timestamp, uuid, uuidParam } from '../http/openapi';
import { multiLineText } from '../http/text';
import { paginationQuery } from '../http/pagination';

export const MAX_BULK_ENROLL = 5_000;

export const enrollmentRole = z.enum(enrollmentRoles);
export const enrollmentStatus = z.enum(enrollmentStatuses);

export const enrollmentSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    user_id: uuid(),
    role: enrollmentRole,
    status: enrollmentStatus,
    enrolled_at: timestamp,
    updated_at: timestamp,
    completed_at: timestamp.nullable(),
    dropped_at: timestamp.nullable(),
    user: z.object({ id: uuid(), name: z.string(), email: z.string() }),
  })
  .openapi('Enrollment');

export const listEnrollmentsQuery = paginationQuery.extend({
  course_id: uuid({ message: 'course_id must be a UUID' }).optional(),
  user_id: uuid({ message: 'user_id must be a UUID' }).optional(),
  status: enrollmentStatus.optional(),
  role: enrollmentRole.optional(),
});

export const courseParams = z.object({ course_id: uuidParam('course_id') });
export const courseUserParams = z.object({ course_id: uuidParam('course_id'), user_id: uuidParam('user_id') });
export const enrollmentParams = z.object({ enrollment_id: uuidParam('enrollment_id') });

export const enrollBody = z
  .object({
    user_id: uuid().optional().openapi({ description: 'Who to enrol; absent: the caller (self-enrolment)' }),
    role: enrollmentRole.optional().openapi({ description: 'Default student; only instructors and admins give other roles' }),
  })
  .strict()
  .openapi('Enroll');

export const bulkEnrollBody = z
  .object({
    user_ids: z
      .array(uuid())
      .min(1, 'name at least one user')
      .max(MAX_BULK_ENROLL, `at most ${MAX_BULK_ENROLL} users per call`),
    role: enrollmentRole.optional(),
  })
  .strict()
  .openapi('BulkEnroll');

export const skipReason = z.enum(['unknown_user', 'already_enrolled', 'deleted_user']);

export const bulkEnrollResult = z
  .object({
    enrolled: z.array(enrollmentSchema),
    skipped: z.array(z.object({ user_id: uuid(), reason: skipReason })),
  })
  .openapi('BulkEnrollResult');

export const progressSchema = z
  .object({
    enrollment_id: uuid(),
    percent: z.number().openapi({ description: 'completed / total_required × 100, rounded; 0 when nothing is required' }),
    completed: z.number().int(),
    total_required: z.number().int(),
    xp: z.number().int(),
    last_activity_at: timestamp.nullable(),
    modules: z.array(z.object({ module_id: uuid(), percent: z.number() })),
  })
  .openapi('EnrollmentProgress');

// ---------------------------------------------------------------- enrolment requests

export const enrollmentRequestSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    user_id: uuid(),
    status: z.enum(enrollmentRequestStatuses),
    message: z.string().nullable(),
    created_at: timestamp,
    decided_at: timestamp.nullable(),
    decided_by: uuid().nullable(),
    reason: z.string().nullable().openapi({ description: 'Why it was denied, as the instructor put it' }),
  })
  .openapi('EnrollmentRequest');

export const requestCourseParams = z.object({ id: uuidParam('id', 'The course') });
export const requestParams = z.object({ id: uuidParam('id', 'The course'), request_id: uuidParam('request_id') });

export const createEnrollmentRequestBody = z
  .object({ message: multiLineText().max(2_000).optional().openapi({ description: 'A word to the instructors' }) })
  .strict()
  .openapi('CreateEnrollmentRequest');

export const denyEnrollmentRequestBody = z
  .object({ reason: multiLineText().max(2_000).optional().openapi({ description: 'Told to the member' }) })
  .strict()
  .openapi('DenyEnrollmentRequest');

export const listEnrollmentRequestsQuery = paginationQuery.extend({ status: z.enum(enrollmentRequestStatuses).optional() });
