// Competencies of a framework: flat by code or as a tree, and one by one (admins change them).
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../../http/pagination';
import { authorizeCompetencies } from '../policy';
import { presentCompetency, presentFramework, treeJsonText } from '../present';
import { cascadeQuery, competencyBody, competencyPatch, competencySchema, treeSchema } from '../schemas';
import { createCompetency, deleteCompetency, frameworkTree, getCompetency, getFramework, listCompetencies, updateCompetency } from '../service';
import { countOf, tags } from './common';

export const competencyRoutes = newRouter()
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
      const text = treeJsonText(presentFramework(framework, countOf(c, framework.id)), frameworkTree(db, framework));
      // Written as text (see treeJsonText), so typed as the route's JSON answer by hand.
      return c.body(text, 200, { 'Content-Type': 'application/json' }) as never;
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
  );
