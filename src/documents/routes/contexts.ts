// Where documents are filed: the contexts a caller may choose from, and one document's links to
// courses, modules and activities.
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, noContent } from '../../http/openapi';
import { pageBounds, pageOf, pageOfRows, paginate, paginationQuery } from '../../http/pagination';
import { documentAccess } from '../access';
import { courseListLimit } from '../../courses/policy';
import { availableContexts, getDocumentContext, linkContext, listDocumentContexts, resolveContext, unlinkContext } from '../contexts';
import { authorizeDocument } from '../policy';
import { presentAvailableContext, presentLinkedContext } from '../present';
import { availableContextSchema, contextParams, linkContextBody, linkedContextSchema } from '../schemas';
import { documentPath, documentRoute, tags } from './route';

export const contextRoutes = {
  available: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/contexts',
      operationId: 'listAvailableDocumentContexts',
      tags,
      summary: 'Contexts the caller may add documents to',
      description: 'Their personal space, then the courses they teach or are enrolled in (tenant admins: every course).',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(availableContextSchema), 'Contexts'), ...errorResponses(404) },
    }),
    (c) => {
      const q = c.req.valid('query');
      const all = availableContexts(c.var.deps.db, c.var.actor);
      const { limit, offset } = pageBounds(q);
      return c.json(paginate(c, q, all.slice(offset, offset + limit).map(presentAvailableContext), all.length), 200);
    },
  ),
  list: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/contexts',
      operationId: 'listDocumentContexts',
      tags,
      summary: 'Courses, modules and activities the document is linked to',
      description: 'Links whose course, module or activity has been deleted are left out.',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(linkedContextSchema), 'Linked contexts'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listDocumentContexts(c.var.deps.db, document, q, courseListLimit(c.var.actor)), presentLinkedContext), 200);
    },
  ),
  link: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/contexts',
      operationId: 'linkDocumentContext',
      tags,
      summary: 'Link the document to a course, module or activity (owner); 201 for a new link, 200 if already linked',
      description:
        'The course (or the module\'s or activity\'s course) must be one the caller may add documents to ' +
        '(GET /api/documents/contexts), else 422; so is a module or activity that does not exist in the caller\'s tenant.',
      request: { params: idParams, ...jsonBody(linkContextBody) },
      responses: {
        200: jsonContent(linkedContextSchema, 'The existing link'),
        201: jsonContent(linkedContextSchema, 'The new link'),
        ...errorResponses(403, 404, 422),
      },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const { id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, actor, id));
      const body = c.req.valid('json');
      const target = resolveContext(db, actor, { type: body.context_type, id: body.context_id });
      const { created, ...link } = linkContext(db, clock, actor, document, target);
      if (!created) return c.json(presentLinkedContext(link), 200);
      c.header('Location', `${documentPath(id)}/contexts/${link.type}/${link.id}`);
      return c.json(presentLinkedContext(link), 201);
    },
  ),
  get: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/contexts/{context_type}/{context_id}',
      operationId: 'getDocumentContext',
      tags,
      summary: 'One link of the document to a course, module or activity (the Location of a new link)',
      request: { params: contextParams },
      responses: { 200: jsonContent(linkedContextSchema, 'The link'), ...errorResponses(404) },
    }),
    (c) => {
      const { id, context_type, context_id } = c.req.valid('param');
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, id));
      return c.json(presentLinkedContext(getDocumentContext(c.var.deps.db, document, context_type, context_id, courseListLimit(c.var.actor))), 200);
    },
  ),
  unlink: documentRoute(
    authedRoute({
      method: 'delete',
      path: '/api/documents/{id}/contexts/{context_type}/{context_id}',
      operationId: 'unlinkDocumentContext',
      tags,
      summary: 'Unlink the document from a context (owner)',
      request: { params: contextParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const { id, context_type, context_id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, id));
      unlinkContext(db, document, { type: context_type, id: context_id });
      return c.body(null, 204);
    },
  ),
};
