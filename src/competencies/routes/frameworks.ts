// Frameworks: list, create, change and delete them (admins), and IMS CASE 1.0 import and export.
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../../http/openapi';
import { bodyBytes } from '../../http/body';
import { pageOf, pageOfRows, paginationQuery } from '../../http/pagination';
import { exportCasePackage, importCasePackage, keptAsGiven } from '../case';
import { authorizeCompetencies } from '../policy';
import { presentFramework } from '../present';
import { caseImportBody, casePackageSchema, cascadeQuery, frameworkBody, frameworkPatch, frameworkSchema, importResultSchema } from '../schemas';
import { createFramework, deleteFramework, frameworkCompetencies, getFramework, listFrameworks, updateFramework } from '../service';
import { countOf, tags } from './common';
import { publicOrigin } from '../../http/public-url';

export const frameworkRoutes = newRouter()
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
        'naming the offending item, and nothing is imported; so is text that REST bodies refuse (control characters, lone surrogates) ' +
        'anywhere in the package, and a tree deeper than 64 levels. What has no column here (other CFDocument and CFItem members, every ' +
        'association with its identifier, CFDefinitions) is kept as given and exported again. The answer comes once the framework is ' +
        'stored, in one transaction: meanwhile reads see the framework as it was. 201 for a new framework, 200 for a re-import.',
      request: { body: { required: true, content: { 'application/json': { schema: caseImportBody } } } },
      responses: {
        200: jsonContent(importResultSchema, 'The framework, updated'),
        201: jsonContent(importResultSchema, 'The framework, created'),
        ...errorResponses(400, 403, 413, 422, 503),
      },
    }),
    async (c) => {
      const actor = c.var.actor;
      authorizeCompetencies(actor, 'manage');
      // The body's bytes: decoded (strictly UTF-8) and parsed with the package, off the event loop when large.
      const bytes = await bodyBytes(c.req.raw);
      const result = await importCasePackage(c.var.deps, actor.tenantId, actor.userId, bytes);
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
      description:
        'An imported framework leaves as it came: every CFDocument and CFItem member, every association of every type with its identifier, ' +
        'and the CFDefinitions, as given; only what was changed here differs (a changed item or document gets the time of its change as ' +
        'lastChangeDateTime; a competency moved or made here gets an isChildOf association of its own). Competencies made here use their ids ' +
        'and URLs of this server.',
      request: { params: idParams },
      responses: { 200: jsonContent(casePackageSchema, 'The package'), ...errorResponses(404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      authorizeCompetencies(c.var.actor, 'read');
      const framework = getFramework(db, c.var.actor.tenantId, c.req.valid('param').id);
      return c.json(exportCasePackage(framework, frameworkCompetencies(db, framework), keptAsGiven(db, framework), publicOrigin(c)) as never, 200);
    },
  );
