// Courses and their structure over HTTP: the catalogue (list, create, get by id or slug, update,
// publish, soft delete), sections, and modules with their order. Reading follows the course
// policy (see policy.ts); every change needs an instructor of the course or an admin.
import { z } from '@hono/zod-openapi';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, uuid } from '../http/openapi';
import { pageOf, pageOfRows, paginateJson, paginationQuery } from '../http/pagination';
import { authorizeCourse, canListAllCourses, courseListLimit } from './policy';
import { presentCourse, presentModule, presentSection } from './present';
import {
  courseSchema,
  createCourseBody,
  createModuleBody,
  createSectionBody,
  listCoursesQuery,
  moduleSchema,
  reorderModulesBody,
  sectionSchema,
  slugParams,
  updateCourseBody,
  updateModuleBody,
} from './schemas';
import {
  courseAccess,
  courseAccessOf,
  createCourse,
  getCourseBySlug,
  listCourses,
  publishCourse,
  softDeleteCourse,
  updateCourse,
} from './service';
import {
  createModule,
  createSection,
  deleteModule,
  getModule,
  getSection,
  listCourseModules,
  listSectionModules,
  listSections,
  reorderModules,
  updateModule,
} from './structure';

const tags: [ApiTag] = ['Courses'];
const structureTags: [ApiTag] = ['Course structure'];

const reorderResult = z
  .object({ section_id: uuid().nullable(), modules: z.array(moduleSchema) })
  .openapi('ModuleOrder');

export const coursesRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses',
      operationId: 'listCourses',
      tags,
      summary: "The caller's courses (enrolled or teaching, not dropped); admins: every course of the tenant",
      request: { query: listCoursesQuery },
      responses: { 200: jsonContent(pageOf(courseSchema), 'A page of courses, by title') },
    }),
    (c) => {
      const actor = c.var.actor;
      const q = c.req.valid('query');
      const { dataJson, total } = listCourses(c.var.deps.db, actor.tenantId, { userId: actor.userId, all: canListAllCourses(actor), only: courseListLimit(actor) }, q, q);
      return paginateJson<z.infer<typeof courseSchema>>(c, q, dataJson, total);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses',
      operationId: 'createCourse',
      tags,
      summary: 'Create a course (draft); the creator becomes its instructor',
      description:
        'Without `slug`, one is made from the title (lowercase ASCII, hyphens), with -2, -3… appended when taken. ' +
        'An explicit slug already used by a course of the tenant is a 409.',
      request: jsonBody(createCourseBody),
      responses: { 201: jsonContent(courseSchema, 'The new course'), ...errorResponses(403, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      authorizeCourse(actor, 'create');
      const body = c.req.valid('json');
      const course = createCourse(deps.db, deps.clock, { tenantId: actor.tenantId, createdBy: actor.userId, ...body });
      c.header('Location', `/api/courses/${course.id}`);
      return c.json(presentCourse(course), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/slug/{slug}',
      operationId: 'getCourseBySlug',
      tags,
      summary: 'One course by slug',
      request: { params: slugParams },
      responses: { 200: jsonContent(courseSchema, 'The course'), ...errorResponses(404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      const course = getCourseBySlug(db, actor.tenantId, c.req.valid('param').slug);
      authorizeCourse(actor, 'read', courseAccessOf(db, actor, course));
      return c.json(presentCourse(course), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}',
      operationId: 'getCourse',
      tags,
      summary: 'One course',
      request: { params: idParams },
      responses: { 200: jsonContent(courseSchema, 'The course'), ...errorResponses(404) },
    }),
    (c) => {
      const { course } = authorizeCourse(c.var.actor, 'read', courseAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      return c.json(presentCourse(course), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/courses/{id}',
      operationId: 'updateCourse',
      tags,
      summary: 'Update a course (instructor), its enrolment policy included',
      description:
        '`enrollment` sets who may enrol themselves: `self_enroll` `closed` (the default: instructors and admins enrol people), ' +
        '`open` (any member of the tenant, as a student) or `approval` (members ask, instructors approve: ' +
        '/api/courses/{id}/enrollment-requests); `capacity` (students, active or completed, that self-enrolment and approvals may ' +
        'reach), `opens_at` and `closes_at` bound it. Only the fields given change; null clears one. `closes_at` not after ' +
        '`opens_at` is a 422.',
      request: { params: idParams, ...jsonBody(updateCourseBody) },
      responses: { 200: jsonContent(courseSchema, 'The course'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      return c.json(presentCourse(updateCourse(deps.db, deps.clock, course, c.req.valid('json'))), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/courses/{id}',
      operationId: 'deleteCourse',
      tags,
      summary: 'Delete a course (instructor); soft: kept in the database, hidden from every list and lookup',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      softDeleteCourse(deps.db, deps.clock, deps.auth, course);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/publish',
      operationId: 'publishCourse',
      tags,
      summary: 'Publish a draft course (instructor); publishing a published course is a 409',
      request: { params: idParams },
      responses: { 200: jsonContent(courseSchema, 'The published course'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      return c.json(presentCourse(publishCourse(deps.db, deps.clock, course)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/sections',
      operationId: 'listCourseSections',
      tags: structureTags,
      summary: 'Sections of a course, in order',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(sectionSchema), 'A page of sections'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const { course } = authorizeCourse(c.var.actor, 'read', courseAccess(db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listSections(db, course, q), presentSection), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/sections',
      operationId: 'createCourseSection',
      tags: structureTags,
      summary: 'Create a section (instructor), at the end or at `position` (the others shift)',
      request: { params: idParams, ...jsonBody(createSectionBody) },
      responses: { 201: jsonContent(sectionSchema, 'The new section'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const section = createSection(deps.db, deps.clock, course, c.req.valid('json'));
      c.header('Location', `/api/sections/${section.id}`);
      return c.json(presentSection(section), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/modules',
      operationId: 'listCourseModules',
      tags: structureTags,
      summary: "All modules of a course in order: the course's own (no section) first, then each section's",
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(moduleSchema), 'A page of modules'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const { course } = authorizeCourse(c.var.actor, 'read', courseAccess(db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listCourseModules(db, course, q), presentModule), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/modules',
      operationId: 'createCourseModule',
      tags: structureTags,
      summary: 'Create a module (instructor) in the course or in one of its sections, at the end or at `position`',
      request: { params: idParams, ...jsonBody(createModuleBody) },
      responses: { 201: jsonContent(moduleSchema, 'The new module'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const body = c.req.valid('json');
      const module = createModule(deps.db, deps.clock, course, {
        title: body.title,
        description: body.description,
        sectionId: body.section_id,
        position: body.position,
      });
      c.header('Location', `/api/modules/${module.id}`);
      return c.json(presentModule(module), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/courses/{id}/modules/order',
      operationId: 'reorderCourseModules',
      tags: structureTags,
      summary: 'Reorder modules (instructor), atomically',
      description:
        'With `section_id`, `module_ids` must name exactly the modules of that section; without it, exactly the ' +
        "course's modules that are in no section. Anything missing, extra or repeated is a 422 naming it.",
      request: { params: idParams, ...jsonBody(reorderModulesBody) },
      responses: { 200: jsonContent(reorderResult, 'The modules in their new order'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const { course } = authorizeCourse(c.var.actor, 'manage', courseAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const body = c.req.valid('json');
      const sectionId = body.section_id ?? null;
      const modules = reorderModules(deps.db, deps.clock, course, sectionId, body.module_ids);
      return c.json({ section_id: sectionId, modules: modules.map(presentModule) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sections/{id}',
      operationId: 'getSection',
      tags: structureTags,
      summary: 'One section',
      request: { params: idParams },
      responses: { 200: jsonContent(sectionSchema, 'The section'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      const section = getSection(db, actor.tenantId, c.req.valid('param').id);
      authorizeCourse(actor, 'read', courseAccess(db, actor, section.courseId));
      return c.json(presentSection(section), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/sections/{id}/modules',
      operationId: 'listSectionModules',
      tags: structureTags,
      summary: 'Modules of one section, in order',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(moduleSchema), 'A page of modules'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      const section = getSection(db, actor.tenantId, c.req.valid('param').id);
      authorizeCourse(actor, 'read', courseAccess(db, actor, section.courseId));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listSectionModules(db, section, q), presentModule), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/modules/{id}',
      operationId: 'getModule',
      tags: structureTags,
      summary: 'One module',
      request: { params: idParams },
      responses: { 200: jsonContent(moduleSchema, 'The module'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const actor = c.var.actor;
      const module = getModule(db, actor.tenantId, c.req.valid('param').id);
      authorizeCourse(actor, 'read', courseAccess(db, actor, module.courseId));
      return c.json(presentModule(module), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/modules/{id}',
      operationId: 'updateModule',
      tags: structureTags,
      summary: 'Update a module (instructor): rename, describe, move to a position or to another section',
      request: { params: idParams, ...jsonBody(updateModuleBody) },
      responses: { 200: jsonContent(moduleSchema, 'The module'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const deps = c.var.deps;
      const actor = c.var.actor;
      const module = getModule(deps.db, actor.tenantId, c.req.valid('param').id);
      const { course } = authorizeCourse(actor, 'manage', courseAccess(deps.db, actor, module.courseId));
      const body = c.req.valid('json');
      const updated = updateModule(deps.db, deps.clock, course, module, {
        title: body.title,
        description: body.description,
        sectionId: body.section_id,
        position: body.position,
      });
      return c.json(presentModule(updated), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/modules/{id}',
      operationId: 'deleteModule',
      tags: structureTags,
      summary: 'Delete a module (instructor), with everything in it; the modules after it move up',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const deps = c.var.deps;
      const actor = c.var.actor;
      const module = getModule(deps.db, actor.tenantId, c.req.valid('param').id);
      authorizeCourse(actor, 'manage', courseAccess(deps.db, actor, module.courseId));
      deleteModule(deps.db, module, deps.moduleCleanups);
      return c.body(null, 204);
    },
  );
