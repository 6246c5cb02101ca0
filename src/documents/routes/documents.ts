// Documents themselves: the list, creation, counts and suggestions, and one document's metadata,
// trash, copy and the caller's favorite flag.
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent, noContent } from '../../http/openapi';
import { pageOf, pageOfRows, paginate, paginationQuery } from '../../http/pagination';
import { documentAccess } from '../access';
import { currentMarkdown } from '../content';
import { isFavorite, toggleFavorite } from '../favorites';
import { authorizeDocument } from '../policy';
import { presentDocument, presentSuggestion } from '../present';
import {
  categoryCountSchema,
  copyDocumentBody,
  courseCountSchema,
  createDocumentBody,
  deleteDocumentQuery,
  documentSchema,
  documentWithContent,
  favoriteSchema,
  getDocumentQuery,
  listDocumentsQuery,
  suggestionsQuery,
  suggestionsSchema,
  updateDocumentBody,
} from '../schemas';
import {
  categoryCounts,
  copyDocument,
  courseCounts,
  createDocument,
  documentServices,
  eraseDocument,
  listDocuments,
  restoreDocument,
  suggest,
  trashDocument,
  updateDocument,
} from '../service';
import type { ContextRef } from '../types';
import { documentFor, documentPath, documentRoute, tags } from './route';

export const documentRoutes = {
  list: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents',
      operationId: 'listDocuments',
      tags,
      summary: 'Documents the caller can see',
      description:
        'Documents shared with the caller or their groups, most recently changed first. Filters: `category`, ' +
        '`context_type` + `context_id` (`course`, `module` or `activity`; `personal`: linked to no existing context), `favorite`, `trashed` (the trash ' +
        'instead of live documents: those the caller owns, who may restore or erase them), `q` (words matched as prefixes in titles and bodies).',
      request: { query: listDocumentsQuery },
      responses: { 200: jsonContent(pageOf(documentSchema), 'A page of documents') },
    }),
    (c) => {
      const q = c.req.valid('query');
      const context: ContextRef | { type: 'personal' } | undefined =
        q.context_type === 'personal' ? { type: 'personal' } : q.context_type ? { type: q.context_type, id: q.context_id! } : undefined;
      const { rows, total } = listDocuments(
        c.var.deps.db,
        c.var.actor,
        { category: q.category, context, favorite: q.favorite, trashed: q.trashed, q: q.q || undefined },
        q,
      );
      return c.json(paginate(c, q, rows.map((d) => presentDocument(d, d)), total), 200);
    },
  ),
  create: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents',
      operationId: 'createDocument',
      tags,
      summary: 'Create a document; the caller owns it',
      description: 'Optional Markdown `content` (up to 5 MiB of request body) and `context` (an item of GET /api/documents/contexts).',
      request: jsonBody(createDocumentBody),
      responses: { 201: jsonContent(documentSchema, 'The new document'), ...errorResponses(422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const context = body.context && body.context.context_type !== 'personal' ? { type: body.context.context_type, id: body.context.context_id! } : null;
      const doc = await createDocument(documentServices(c.var.deps), c.var.actor, {
        title: body.title,
        category: body.category,
        content: body.content,
        context,
      });
      c.header('Location', documentPath(doc.id));
      return c.json(presentDocument(doc, { role: 'owner', favorite: false }), 201);
    },
  ),
  categories: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/categories',
      operationId: 'listDocumentCategories',
      tags,
      summary: 'Categories of the visible documents, with counts',
      description: 'Over documents the caller can see, outside the trash; uncategorised documents count under `null`, last.',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(categoryCountSchema), 'Categories') },
    }),
    (c) => {
      const q = c.req.valid('query');
      const { rows, total } = categoryCounts(c.var.deps.db, c.var.actor, q);
      return c.json(paginate(c, q, rows, total), 200);
    },
  ),
  courses: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/courses',
      operationId: 'listDocumentCourses',
      tags,
      summary: 'Courses with the number of visible documents linked to each',
      description: 'A document counts once per course, whether linked to the course or to one of its modules or activities.',
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(courseCountSchema), 'Courses') },
    }),
    (c) => {
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, courseCounts(c.var.deps.db, c.var.actor, q), (r) => ({ course_id: r.courseId, title: r.title, slug: r.slug, count: r.count })), 200);
    },
  ),
  suggestions: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/suggestions',
      operationId: 'getDocumentSuggestions',
      tags,
      summary: 'Up to 10 search suggestions',
      description:
        'Full-text search (SQLite FTS5) over titles and bodies of the visible documents outside the trash: every word ' +
        'of `q` must match as a prefix; best first (bm25, title hits weigh more; scored over the 1,000 newest visible ' +
        'matches when there are more); each with a snippet of the body as safe HTML (hits in `<mark>`).',
      request: { query: suggestionsQuery },
      responses: { 200: jsonContent(suggestionsSchema, 'Suggestions') },
    }),
    (c) => {
      const { q } = c.req.valid('query');
      return c.json({ data: suggest(c.var.deps.db, c.var.actor, q).map(presentSuggestion) }, 200);
    },
  ),
  get: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}',
      operationId: 'getDocument',
      tags,
      summary: 'A document (with `?include=content`: its Markdown body)',
      description: 'A document in the trash (`trashed_at` set) is shown to its owners only; to everyone else it is 404.',
      request: { params: idParams, query: getDocumentQuery },
      responses: { 200: jsonContent(documentWithContent, 'The document'), ...errorResponses(404, 409) },
    }),
    (c) => {
      const { document, role } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id, { includeTrashed: true }));
      const include = c.req.valid('query').include;
      return c.json(
        { ...documentFor(c, document, role), ...(include === 'content' ? { content: currentMarkdown(documentServices(c.var.deps), document) } : {}) },
        200,
      );
    },
  ),
  update: documentRoute(
    authedRoute({
      method: 'patch',
      path: '/api/documents/{id}',
      operationId: 'updateDocument',
      tags,
      summary: 'Rename or recategorise a document (owner)',
      request: { params: idParams, ...jsonBody(updateDocumentBody) },
      responses: { 200: jsonContent(documentSchema, 'The document'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const { document, role } = authorizeDocument('manage', documentAccess(db, c.var.actor, c.req.valid('param').id));
      return c.json(documentFor(c, updateDocument(db, clock, document, c.req.valid('json')), role), 200);
    },
  ),
  remove: documentRoute(
    authedRoute({
      method: 'delete',
      path: '/api/documents/{id}',
      operationId: 'deleteDocument',
      tags,
      summary: 'Move a document to the trash; `?permanent=true` erases one already there (owner)',
      description: 'Trashing a trashed document, or erasing one not in the trash, is 409.',
      request: { params: idParams, query: deleteDocumentQuery },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, clock, auth } = c.var.deps;
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, c.req.valid('param').id, { includeTrashed: true }));
      if (c.req.valid('query').permanent) eraseDocument(documentServices(c.var.deps), document);
      else trashDocument(db, clock, auth, document);
      return c.body(null, 204);
    },
  ),
  restore: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/restore',
      operationId: 'restoreDocument',
      tags,
      summary: 'Take a document out of the trash (owner)',
      request: { params: idParams },
      responses: { 200: jsonContent(documentSchema, 'The restored document'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const { document, role } = authorizeDocument('manage', documentAccess(db, c.var.actor, c.req.valid('param').id, { includeTrashed: true }));
      return c.json(documentFor(c, restoreDocument(db, document), role), 200);
    },
  ),
  copy: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/copy',
      operationId: 'copyDocument',
      tags,
      summary: 'Fork a document: a new one owned by the caller, with the same body and `forked_from` set',
      description: 'Body optional: `{title?}` (default "Copy of <title>"). The copy starts without collaborators or context links.',
      request: {
        params: idParams,
        body: { required: false, content: { 'application/json': { schema: copyDocumentBody } } },
      },
      responses: { 201: jsonContent(documentSchema, 'The copy'), ...errorResponses(404, 409, 413, 415) },
    }),
    async (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const body = c.req.valid('json') ?? {};
      const copy = await copyDocument(documentServices(c.var.deps), c.var.actor, document, body.title);
      c.header('Location', documentPath(copy.id));
      return c.json(presentDocument(copy, { role: 'owner', favorite: false }), 201);
    },
  ),
  getFavorite: documentRoute(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/favorite',
      operationId: 'getDocumentFavorite',
      tags,
      summary: "Whether the document is in the caller's favorites",
      request: { params: idParams },
      responses: { 200: jsonContent(favoriteSchema, 'Favorite flag'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      return c.json({ favorite: isFavorite(c.var.deps.db, c.var.actor.userId, document) }, 200);
    },
  ),
  toggleFavorite: documentRoute(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/favorite',
      operationId: 'toggleDocumentFavorite',
      tags,
      summary: "Toggle the document in the caller's favorites; answers the new state",
      request: { params: idParams },
      responses: { 200: jsonContent(favoriteSchema, 'Favorite flag'), ...errorResponses(404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const { document } = authorizeDocument('read', documentAccess(db, c.var.actor, c.req.valid('param').id));
      return c.json({ favorite: toggleFavorite(db, clock, c.var.actor.userId, document) }, 200);
    },
  ),
};
