// Request and response shapes of courses, sections and modules.
import { z } from '@hono/zod-openapi';
import { courseStatuses, selfEnrollModes } from '../../db/schema';
import { timestamp, uuid } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, singleLineText } from '../http/text';

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const MAX_SLUG_LENGTH = 100;

const title = singleLineText().trim().min(1, 'must not be empty').max(200);
const description = multiLineText().max(20_000).nullable();
const slug = singleLineText()
  .max(MAX_SLUG_LENGTH)
  .regex(SLUG_PATTERN, 'must be lowercase letters, digits and single hyphens, e.g. intro-to-statistics');
/** Where to insert; past the end means at the end. */
const position = z.number().int().min(0, 'must be 0 or more');

export const courseStatus = z.enum(courseStatuses);

export const courseEnrollmentSchema = z
  .object({
    self_enroll: z.enum(selfEnrollModes).openapi({
      description:
        'closed (the default): only instructors and admins enrol people; open: any member of the tenant enrols themselves as a student; ' +
        'approval: members ask (POST /api/courses/{id}/enrollment-requests) and an instructor approves or denies',
    }),
    capacity: z.number().int().nullable().openapi({ description: 'At most this many students (active or completed) through self-enrolment and approvals; null: no limit' }),
    opens_at: timestamp.nullable().openapi({ description: 'Self-enrolment and requests are taken from this moment; null: at once' }),
    closes_at: timestamp.nullable().openapi({ description: 'and until this moment; null: no end' }),
  })
  .openapi('CourseEnrollmentPolicy');

export const courseSchema = z
  .object({
    id: uuid(),
    title: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    status: courseStatus,
    created_by: uuid(),
    created_at: timestamp,
    updated_at: timestamp,
    published_at: timestamp.nullable(),
    enrollment: courseEnrollmentSchema,
  })
  .openapi('Course');

const enrollmentPolicyBody = z
  .object({
    self_enroll: z.enum(selfEnrollModes).optional(),
    capacity: z.number().int().min(1, 'must be 1 or more').max(1_000_000).nullable().optional(),
    opens_at: z.iso.datetime({ offset: true }).nullable().optional(),
    closes_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .strict()
  .openapi({ description: 'Only the fields given change; null clears capacity or a date' });

export const createCourseBody = z
  .object({ title, slug: slug.optional(), description: description.optional() })
  .strict()
  .openapi('CreateCourse');

export const updateCourseBody = z
  .object({ title: title.optional(), slug: slug.optional(), description: description.optional(), enrollment: enrollmentPolicyBody.optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateCourse');

export const listCoursesQuery = paginationQuery.extend({ status: courseStatus.optional() });

export const slugParams = z.object({
  slug: singleLineText()
    .min(1)
    .max(MAX_SLUG_LENGTH)
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'intro-to-statistics' }),
});

export const sectionSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    title: z.string(),
    position: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Section');

export const createSectionBody = z.object({ title, position: position.optional() }).strict().openapi('CreateSection');

export const moduleSchema = z
  .object({
    id: uuid(),
    course_id: uuid(),
    section_id: uuid().nullable(),
    title: z.string(),
    description: z.string().nullable(),
    position: z.number().int().openapi({ description: 'Place within its section, or among the modules that have no section' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Module');

export const createModuleBody = z
  .object({ title, description: description.optional(), section_id: uuid().nullable().optional(), position: position.optional() })
  .strict()
  .openapi('CreateModule');

export const updateModuleBody = z
  .object({
    title: title.optional(),
    description: description.optional(),
    section_id: uuid().nullable().optional().openapi({ description: 'Move to this section (null: out of any section)' }),
    position: position.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateModule');

export const reorderModulesBody = z
  .object({
    section_id: uuid().nullable().optional(),
    module_ids: z.array(uuid()).max(10_000),
  })
  .strict()
  .openapi('ReorderModules');
