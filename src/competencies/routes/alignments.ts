// Alignments: what evidences a competency in the courses the caller teaches (instructors align
// activities, modules and assignments of their courses).
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../../http/pagination';
import { activeCourseIdsAs, membershipOf } from '../../memberships/service';
import { alignmentListing, authorizeCourseCompetencies } from '../policy';
import { presentAlignment } from '../present';
import { alignmentBody, alignmentParams, alignmentSchema } from '../schemas';
import { createAlignment, deleteAlignment, findTarget, getAlignment, getCompetency, listAlignments } from '../service';
import { tags } from './common';

export const alignmentRoutes = newRouter()
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
      const courseIds = alignmentListing(actor, () => activeCourseIdsAs(db, actor.tenantId, actor.userId, 'instructor'));
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
      authorizeCourseCompetencies(actor, { kind: 'alignments' }, { course: { id: target.courseId, status: 'published' }, membership: membershipOf(db, actor.tenantId, target.courseId, actor.userId) });
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
      authorizeCourseCompetencies(actor, { kind: 'alignments' }, { course: { id: alignment.courseId, status: 'published' }, membership: membershipOf(db, actor.tenantId, alignment.courseId, actor.userId) });
      deleteAlignment(db, alignment);
      return c.body(null, 204);
    },
  );
