// Templates REST: the tenant's document templates (list by category, create, read, replace,
// delete, category counts), rendering with variables, and instantiation into a new document.
// Another tenant's template is 404; the policy decides who creates and who manages.
import { documentServices } from '../documents/service';
import { presentDocument } from '../documents/present';
import { documentSchema } from '../documents/schemas';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { teachesAnyCourse } from '../memberships/service';
import { authorizeTemplate } from './policy';
import { presentTemplate } from './present';
import { instantiateBody, listTemplatesQuery, renderBody, renderedSchema, templateBody, templateCategorySchema, templateSchema } from './schemas';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  instantiateTemplate,
  listTemplates,
  render,
  replaceTemplate,
  templateCategories,
} from './service';

const tags: [ApiTag] = ['Templates'];

const router = newRouter();

export const templatesRouter = router
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/templates',
      operationId: 'listTemplates',
      tags,
      summary: "Templates of the caller's tenant, by name; `category` filters",
      request: { query: listTemplatesQuery },
      responses: { 200: jsonContent(pageOf(templateSchema), 'A page of templates') },
    }),
    (c) => {
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listTemplates(c.var.deps.db, c.var.actor.tenantId, { category: q.category }, q), presentTemplate), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/templates',
      operationId: 'createTemplate',
      tags,
      summary: 'Create a template (tenant admins and instructors)',
      description:
        'Every placeholder of `body` must be a declared variable; unescaped output ({{{ }}}, {{& }}), partials and ' +
        'delimiter changes are refused, as is a syntax error (422).',
      request: jsonBody(templateBody),
      responses: { 201: jsonContent(templateSchema, 'The template'), ...errorResponses(403, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      authorizeTemplate(actor, { action: 'create', teachesACourse: () => teachesAnyCourse(db, actor.tenantId, actor.userId) });
      const row = createTemplate(db, clock, actor, c.req.valid('json'));
      c.header('Location', `/api/templates/${row.id}`);
      return c.json(presentTemplate(row), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/templates/categories',
      operationId: 'listTemplateCategories',
      tags,
      summary: "Categories of the tenant's templates with their counts (uncategorised as null, last)",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(templateCategorySchema), 'Categories') },
    }),
    (c) => {
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, templateCategories(c.var.deps.db, c.var.actor.tenantId, q), (r) => r), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/templates/{id}',
      operationId: 'getTemplate',
      tags,
      summary: 'A template of the tenant',
      request: { params: idParams },
      responses: { 200: jsonContent(templateSchema, 'The template'), ...errorResponses(404) },
    }),
    (c) => c.json(presentTemplate(getTemplate(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/templates/{id}',
      operationId: 'replaceTemplate',
      tags,
      summary: 'Replace a template (tenant admins and its creator)',
      request: { params: idParams, ...jsonBody(templateBody) },
      responses: { 200: jsonContent(templateSchema, 'The template'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const template = getTemplate(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeTemplate(c.var.actor, { action: 'manage', template });
      return c.json(presentTemplate(replaceTemplate(db, clock, template, c.req.valid('json'))), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/templates/{id}',
      operationId: 'deleteTemplate',
      tags,
      summary: 'Delete a template (tenant admins and its creator); documents made from it stay',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const template = getTemplate(db, c.var.actor.tenantId, c.req.valid('param').id);
      authorizeTemplate(c.var.actor, { action: 'manage', template });
      deleteTemplate(db, template);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/templates/{id}/render',
      operationId: 'renderTemplate',
      tags,
      summary: 'Render a template with values',
      description:
        '`content` is the Markdown with the values as given; `html` is that Markdown as HTML with every value ' +
        'HTML-escaped and raw HTML disabled. Defaults fill what is not given. A variable the template does not declare, ' +
        'and every required variable missing, are named in one 422.',
      request: { params: idParams, ...jsonBody(renderBody) },
      responses: { 200: jsonContent(renderedSchema, 'The rendered template'), ...errorResponses(404, 422) },
    }),
    (c) => {
      const template = getTemplate(c.var.deps.db, c.var.actor.tenantId, c.req.valid('param').id);
      return c.json(render(template, c.req.valid('json').variables), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/templates/{id}/instantiate',
      operationId: 'instantiateTemplate',
      tags,
      summary: 'A new document from a template: the rendered Markdown as its body, the caller its owner',
      description: "`title` defaults to the template's name, the category is the template's, `context` links it (as for POST /api/documents), and `template_id` is recorded.",
      request: { params: idParams, ...jsonBody(instantiateBody) },
      responses: { 201: jsonContent(documentSchema, 'The new document'), ...errorResponses(404, 413, 422) },
    }),
    async (c) => {
      const { deps, actor } = c.var;
      const template = getTemplate(deps.db, actor.tenantId, c.req.valid('param').id);
      const body = c.req.valid('json');
      const context = body.context && body.context.context_type !== 'personal' ? { type: body.context.context_type, id: body.context.context_id! } : null;
      const doc = await instantiateTemplate(documentServices(deps), actor, template, { title: body.title, variables: body.variables, context });
      c.header('Location', `/api/documents/${doc.id}`);
      return c.json(presentDocument(doc, { role: 'owner', favorite: false }), 201);
    },
  );
