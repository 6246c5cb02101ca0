// Competencies over HTTP: frameworks (CRUD, CASE import and export), competencies as a tree,
// ranked search, alignments to course content, and mastery: the caller's progress (also at the
// specification's own path /competencies/progress), their summary per framework, a learner's
// progress in a course, and a course's mastery summary for its instructors.
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { courseAccess } from '../courses/service';
import { notFound } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { paginate, pageOf, pageOfRows, paginationQuery, type PageQuery } from '../http/pagination';
import { activeCourseIdsAs, membershipOf, isStudentOf } from '../memberships/service';
import { exportCasePackage, importCasePackage } from './case';
import { MASTERY_DESCRIPTION } from './mastery';
import { courseLearnerProgress, courseMastery, learnerProgress, masterySummary } from './reports';
import { authorizeCompetencies, authorizeCourseCompetencies } from './policy';
import { presentAlignment, presentCompetency, presentCourseMastery, presentFramework, presentProgress, presentTree } from './present';
import {
  alignmentBody,
  alignmentParams,
  alignmentSchema,
  caseImportBody,
  casePackageSchema,
  cascadeQuery,
  competencyBody,
  competencyPatch,
  competencySchema,
  courseMasterySchema,
  courseProgressQuery,
  frameworkBody,
  frameworkPatch,
  frameworkSchema,
  frameworkSummarySchema,
  importResultSchema,
  progressItemSchema,
  progressQuery,
  searchHitSchema,
  searchQuery,
  treeSchema,
} from './schemas';
import {
  competencyCounts,
  createAlignment,
  createCompetency,
  createFramework,
  deleteAlignment,
  deleteCompetency,
  deleteFramework,
  findTarget,
  frameworkCompetencies,
  frameworkTree,
  getAlignment,
  getCompetency,
  getFramework,
  listAlignments,
  listCompetencies,
  listFrameworks,
  searchCompetencies,
  updateCompetency,
  updateFramework,
} from './service';
import { isTenantAdmin } from '../auth/access';

const tags: [ApiTag] = ['Competencies'];

const countOf = (c: Context<AppEnv>, frameworkId: string) => competencyCounts(c.var.deps.db, [frameworkId]).get(frameworkId) ?? 0;

/** A page of a list computed in memory. */
const pageOfList = <R, T>(c: Context<AppEnv>, q: PageQuery, all: R[], present: (r: R) => T) =>
  pageOfRows(c, q, { rows: all.slice((q.page - 1) * q.per_page, q.page * q.per_page), total: all.length }, present);

const progressRoute = (path: '/competencies/progress' | '/api/competencies/progress', operationId: string, summary: string) =>
  authedRoute({
    method: 'get',
    path,
    operationId,
    tags,
    summary,
    description: `Every competency of the tenant (or of \`framework_id\`), with the caller's score and status over all the courses they take as a student. ${MASTERY_DESCRIPTION}`,
    request: { query: progressQuery },
    responses: { 200: jsonContent(pageOf(progressItemSchema), 'Progress per competency, by framework then code'), ...errorResponses(404) },
  });

function progressHandler(c: Context<AppEnv>, q: { framework_id?: string; status?: string } & PageQuery) {
  const { db, clock } = c.var.deps;
  const actor = c.var.actor;
  authorizeCompetencies(actor, 'read');
  if (q.framework_id) getFramework(db, actor.tenantId, q.framework_id);
  const all = learnerProgress(db, { tenantId: actor.tenantId, userId: actor.userId, now: clock.now().toISOString(), frameworkId: q.framework_id ?? null });
  return pageOfList(c, q, q.status ? all.filter((p) => p.status === q.status) : all, presentProgress);
}

export const competenciesRouter = newRouter()
  .openapi(progressRoute('/competencies/progress', 'getCompetencyProgress', "The caller's progress per competency (the specification's path)"), (c) =>
    c.json(progressHandler(c, c.req.valid('query')), 200),
  )
  .openapi(progressRoute('/api/competencies/progress', 'getMyCompetencyProgress', "The caller's progress per competency"), (c) =>
    c.json(progressHandler(c, c.req.valid('query')), 200),
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/mastery-summary',
      operationId: 'getCompetencyMasterySummary',
      tags,
      summary: "The caller's mastered / in progress / not started counts, per framework",
      description: MASTERY_DESCRIPTION,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(frameworkSummarySchema), 'One row per framework of the tenant, by title') },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'read');
      const q = c.req.valid('query');
      const counts = masterySummary(db, { tenantId: actor.tenantId, userId: actor.userId, now: clock.now().toISOString() });
      const frameworks = listFrameworks(db, actor.tenantId, q);
      return c.json(
        paginate(
          c,
          q,
          frameworks.rows.map((f) => {
            const s = counts.get(f.id);
            return { framework_id: f.id, title: f.title, total: s?.total ?? 0, mastered: s?.mastered ?? 0, in_progress: s?.inProgress ?? 0, not_started: s?.notStarted ?? 0 };
          }),
          frameworks.total,
        ),
        200,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/search',
      operationId: 'searchCompetencies',
      tags,
      summary: 'Competencies by code or title',
      description: 'Case-insensitive; ranked: exact code, then code prefix, then title prefix, then any code or title containing q; by code within a rank.',
      request: { query: searchQuery },
      responses: { 200: jsonContent(pageOf(searchHitSchema), 'Matches, best first') },
    }),
    (c) => {
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'read');
      const q = c.req.valid('query');
      const page = searchCompetencies(c.var.deps.db, actor.tenantId, { q: q.q, frameworkId: q.framework_id }, q);
      return c.json(pageOfRows(c, q, page, (r) => ({ ...presentCompetency(r.competency), rank: Number(r.rank) })), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/frameworks',
      operationId: 'listCompetencyFrameworks',
      tags,
      summary: 'Competency frameworks of the tenant',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(frameworkSchema), 'Frameworks by title') },
    }),
    (c) => {
      authorizeCompetencies(c.var.actor, 'read');
      const q = c.req.valid('query');
      const page = listFrameworks(c.var.deps.db, c.var.actor.tenantId, q);
      return c.json(pageOfRows(c, q, page, (f) => presentFramework(f, page.counts.get(f.id) ?? 0)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/competencies/frameworks',
      operationId: 'createCompetencyFramework',
      tags,
      summary: 'Create a framework (admin)',
      request: jsonBody(frameworkBody),
      responses: { 201: jsonContent(frameworkSchema, 'The framework'), ...errorResponses(403) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'manage');
      const framework = createFramework(db, clock, actor.tenantId, actor.userId, c.req.valid('json'));
      c.header('Location', `/api/competencies/frameworks/${framework.id}`);
      return c.json(presentFramework(framework, 0), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/competencies/frameworks/import',
      operationId: 'importCompetencyFramework',
      tags,
      summary: 'Import a framework from an IMS CASE 1.0 JSON package (admin)',
      description:
        'CFDocument becomes the framework, each CFItem a competency (humanCodingScheme its code, fullStatement its title), and each ' +
        'isChildOf association places an item under its parent (an item or the CFDocument). A re-import of the same CFDocument identifier ' +
        'updates the framework and its competencies in place by CASE identifier (alignments stay). A package that does not hold together ' +
        '(a missing identifier or fullStatement, a repeated code, an association naming an unknown item, a second parent, a cycle) is 422 ' +
        'naming the offending item, and nothing is imported. 201 for a new framework, 200 for a re-import.',
      request: jsonBody(caseImportBody),
      responses: {
        200: jsonContent(importResultSchema, 'The framework, updated'),
        201: jsonContent(importResultSchema, 'The framework, created'),
        ...errorResponses(403, 422),
      },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'manage');
      const result = importCasePackage(db, clock, actor.tenantId, actor.userId, c.req.valid('json'));
      const body = {
        framework: presentFramework(result.framework, countOf(c, result.framework.id)),
        created: result.created,
        updated: result.updated,
        not_in_package: result.notInPackage,
      };
      if (result.isNew) {
        c.header('Location', `/api/competencies/frameworks/${result.framework.id}`);
        return c.json(body, 201);
      }
      return c.json(body, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/frameworks/{id}',
      operationId: 'getCompetencyFramework',
      tags,
      summary: 'One framework',
      request: { params: idParams },
      responses: { 200: jsonContent(frameworkSchema, 'The framework'), ...errorResponses(404) },
    }),
    (c) => {
      authorizeCompetencies(c.var.actor, 'read');
      const framework = getFramework(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id);
      return c.json(presentFramework(framework, countOf(c, framework.id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/competencies/frameworks/{id}',
      operationId: 'updateCompetencyFramework',
      tags,
      summary: 'Change a framework (admin)',
      request: { params: idParams, ...jsonBody(frameworkPatch) },
      responses: { 200: jsonContent(frameworkSchema, 'The framework'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeCompetencies(c.var.actor, 'manage');
      const updated = updateFramework(db, clock, framework, c.req.valid('json'));
      return c.json(presentFramework(updated, countOf(c, updated.id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/competencies/frameworks/{id}',
      operationId: 'deleteCompetencyFramework',
      tags,
      summary: 'Delete a framework (admin); 409 while it holds competencies, unless cascade=true',
      request: { params: idParams, query: cascadeQuery },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeCompetencies(c.var.actor, 'manage');
      deleteFramework(db, framework, c.req.valid('query').cascade ?? false);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/frameworks/{id}/case',
      operationId: 'exportCompetencyFramework',
      tags,
      summary: 'The framework as an IMS CASE 1.0 JSON package',
      description: 'Imported items keep their CASE identifiers and URIs; competencies made here use their ids and URLs of this server. Every item has one isChildOf association (to its parent, or to the CFDocument).',
      request: { params: idParams },
      responses: { 200: jsonContent(casePackageSchema, 'The package'), ...errorResponses(404) },
    }),
    (c) => {
      const { db, config } = c.var.deps;
      authorizeCompetencies(c.var.actor, 'read');
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      return c.json(exportCasePackage(framework, frameworkCompetencies(db, framework), config.publicUrl.replace(/\/$/, '')), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/frameworks/{id}/competencies',
      operationId: 'listFrameworkCompetencies',
      tags,
      summary: "A framework's competencies, flat, by code",
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(competencySchema), 'Competencies'), ...errorResponses(404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      authorizeCompetencies(c.var.actor, 'read');
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listCompetencies(db, framework, q), presentCompetency), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/competencies/frameworks/{id}/competencies',
      operationId: 'createCompetency',
      tags,
      summary: 'Add a competency to a framework (admin)',
      description: 'parent_id must be a competency of the same framework (422); a code already used in the framework is 409.',
      request: { params: idParams, ...jsonBody(competencyBody) },
      responses: { 201: jsonContent(competencySchema, 'The competency'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeCompetencies(c.var.actor, 'manage');
      const body = c.req.valid('json');
      const competency = createCompetency(db, clock, framework, {
        code: body.code,
        title: body.title,
        description: body.description,
        parentId: body.parent_id,
        masteryThreshold: body.mastery_threshold,
      });
      c.header('Location', `/api/competencies/${competency.id}`);
      return c.json(presentCompetency(competency), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/frameworks/{id}/tree',
      operationId: 'getCompetencyTree',
      tags,
      summary: "A framework's competencies as a nested tree, each level by code",
      request: { params: idParams },
      responses: { 200: jsonContent(treeSchema, 'The tree'), ...errorResponses(404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      authorizeCompetencies(c.var.actor, 'read');
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      return c.json({ framework: presentFramework(framework, countOf(c, framework.id)), competencies: presentTree(frameworkTree(db, framework)) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/{id}',
      operationId: 'getCompetency',
      tags,
      summary: 'One competency',
      request: { params: idParams },
      responses: { 200: jsonContent(competencySchema, 'The competency'), ...errorResponses(404) },
    }),
    (c) => {
      authorizeCompetencies(c.var.actor, 'read');
      return c.json(presentCompetency(getCompetency(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/competencies/{id}',
      operationId: 'updateCompetency',
      tags,
      summary: 'Change a competency (admin)',
      description: 'A parent in another framework, or one that would make a cycle, is 422; a code already used in the framework is 409.',
      request: { params: idParams, ...jsonBody(competencyPatch) },
      responses: { 200: jsonContent(competencySchema, 'The competency'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const competency = getCompetency(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeCompetencies(c.var.actor, 'manage');
      const body = c.req.valid('json');
      const updated = updateCompetency(db, clock, competency, {
        code: body.code,
        title: body.title,
        description: body.description,
        parentId: body.parent_id,
        masteryThreshold: body.mastery_threshold,
      });
      return c.json(presentCompetency(updated), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/competencies/{id}',
      operationId: 'deleteCompetency',
      tags,
      summary: 'Delete a competency (admin); 409 while it has children or alignments, unless cascade=true',
      request: { params: idParams, query: cascadeQuery },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const competency = getCompetency(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeCompetencies(c.var.actor, 'manage');
      deleteCompetency(db, competency, c.req.valid('query').cascade ?? false);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/competencies/{id}/alignments',
      operationId: 'listCompetencyAlignments',
      tags,
      summary: "What evidences a competency: the alignments in the courses the caller teaches (admins: all)",
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(alignmentSchema), 'Alignments, oldest first'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const actor = c.var.actor;
      const competency = getCompetency(db, actor.tenantId, c.req.valid('param').id);
      let courseIds: string[] | null = null;
      if (!isTenantAdmin(actor)) {
        courseIds = activeCourseIdsAs(db, actor.tenantId, actor.userId, 'instructor');
        if (courseIds.length === 0) authorizeCourseCompetencies(actor, { kind: 'alignments' }, { course: { status: 'published' }, membership: undefined });
      }
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listAlignments(db, competency, courseIds, q), (r) => presentAlignment(r.alignment, r.title)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/competencies/{id}/alignments',
      operationId: 'createCompetencyAlignment',
      tags,
      summary: "Align an activity, module or assignment to the competency (instructors of its course)",
      description: 'The target must be an activity, module or gradebook assignment of the tenant (422 otherwise); the caller must teach its course (403). The same target twice is 409.',
      request: { params: idParams, ...jsonBody(alignmentBody) },
      responses: { 201: jsonContent(alignmentSchema, 'The alignment'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const competency = getCompetency(db, actor.tenantId, c.req.valid('param').id);
      const body = c.req.valid('json');
      const target = findTarget(db, actor.tenantId, body.target_type, body.target_id);
      authorizeCourseCompetencies(actor, { kind: 'alignments' }, { course: { status: 'published' }, membership: membershipOf(db, actor.tenantId, target.courseId, actor.userId) });
      const alignment = createAlignment(db, clock, competency, target, { weight: body.weight, createdBy: actor.userId });
      c.header('Location', `/api/competencies/${competency.id}/alignments/${alignment.id}`);
      return c.json(presentAlignment(alignment, target.title), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/competencies/{id}/alignments/{alignment_id}',
      operationId: 'deleteCompetencyAlignment',
      tags,
      summary: 'Remove an alignment (instructors of its course)',
      request: { params: alignmentParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const actor = c.var.actor;
      const { id, alignment_id } = c.req.valid('param');
      const alignment = getAlignment(db, getCompetency(db, actor.tenantId, id), alignment_id);
      authorizeCourseCompetencies(actor, { kind: 'alignments' }, { course: { status: 'published' }, membership: membershipOf(db, actor.tenantId, alignment.courseId, actor.userId) });
      deleteAlignment(db, alignment);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/competencies/progress',
      operationId: 'getCourseCompetencyProgress',
      tags,
      summary: "A learner's progress on the competencies aligned in a course (the caller's, or user_id for its instructors)",
      description: `The competencies aligned to the course's content and their ancestors, scored from this course's evidence only. ${MASTERY_DESCRIPTION}`,
      request: { params: idParams, query: courseProgressQuery },
      responses: { 200: jsonContent(pageOf(progressItemSchema), 'Progress per competency, by framework then code'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const q = c.req.valid('query');
      const learnerId = q.user_id ?? actor.userId;
      const { course } = authorizeCourseCompetencies(actor, { kind: 'learner', learnerId }, courseAccess(db, actor, c.req.valid('param').id));
      if (learnerId !== actor.userId && !isStudentOf(db, actor.tenantId, course.id, learnerId)) throw notFound('Learner in this course');
      const all = courseLearnerProgress(db, { tenantId: actor.tenantId, userId: learnerId, courseId: course.id, now: clock.now().toISOString() });
      return c.json(pageOfList(c, q, all, presentProgress), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/competency-mastery',
      operationId: 'getCourseCompetencyMastery',
      tags,
      summary: "Per competency aligned in the course: its students mastered / in progress / not started (instructors)",
      description: `Over the course's students (active or completed enrollments), each aligned competency and its ancestors, from this course's evidence. ${MASTERY_DESCRIPTION}`,
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(courseMasterySchema), 'Per competency, by framework then code'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const { course } = authorizeCourseCompetencies(actor, { kind: 'summary' }, courseAccess(db, actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfList(c, q, courseMastery(db, { tenantId: actor.tenantId, courseId: course.id, now: clock.now().toISOString() }), presentCourseMastery), 200);
    },
  );

