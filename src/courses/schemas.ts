// Request and response shapes of courses, sections and modules.
import { z } from '@hono/zod-openapi';
import { courseStatuses } from '../../db/schema';
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
  })
  .openapi('Course');

export const createCourseBody = z
  .object({ title, slug: slug.optional(), description: description.optional() })
  .strict()
  .openapi('CreateCourse');

export const updateCourseBody = z
  .object({ title: title.optional(), slug: slug.optional(), description: description.optional() })
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
