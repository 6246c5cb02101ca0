// Documents REST: metadata, trash, copies, sharing, contexts, favorites, counts, search
// suggestions, change history, named versions, diffs and revert. Bodies are Yjs documents held by
// the document store; live editing over WebSocket uses the same store and the same access check.
//
// Every `/{id}` route resolves the caller's role once (`documentAccess`) and asks the policy
// (`authorizeDocument`): a document of another tenant, one the caller holds no grant on, or one in
// the trash is 404, never 403, so existence never leaks to a non-collaborator. A collaborator
// lacking the right is 403.
// The fixed paths (`contexts`, `categories`, `courses`, `suggestions`) are registered before `/{id}`.
//
// A change that would take a body past DOCUMENT_MAX_BYTES is 413; a stored body (or version) that
// can no longer be loaded or encoded is 409 `document_unreadable` on every path that needs it.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, paginate, pageOfRows, paginationQuery, pageBounds } from '../http/pagination';
import { authorizeDocument, type DocumentRole } from './policy';
import { documentAccess } from './access';
import {
  presentAvailableContext,
  presentChange,
  presentCollaborator,
  presentDocument,
  presentLinkedContext,
  presentSuggestion,
  presentVersion,
} from './present';
import {
  availableContextSchema,
  categoryCountSchema,
  changeSchema,
  collaboratorParams,
  collaboratorSchema,
  contextParams,
  copyDocumentBody,
  courseCountSchema,
  createDocumentBody,
  deleteDocumentQuery,
  diffQuery,
  diffSchema,
  documentSchema,
  documentWithContent,
  favoriteSchema,
  getDocumentQuery,
  linkContextBody,
  linkedContextSchema,
  listDocumentsQuery,
  replaceContentBody,
  revertResultSchema,
  saveVersionBody,
  shareBody,
  suggestionsQuery,
  suggestionsSchema,
  updateDocumentBody,
  versionParams,
  versionSchema,
  versionWithContent,
} from './schemas';
import { availableContexts, getDocumentContext, linkContext, listDocumentContexts, resolveContext, unlinkContext, type ContextRef } from './contexts';
import { isFavorite, toggleFavorite } from './favorites';
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
  type DocumentRow,
} from './service';
import { getCollaborator, listCollaborators, shareDocument, unshareDocument } from './sharing';
import { currentMarkdown, replaceContent } from './content';
import { diffTexts, getVersion, listVersions, revertToVersion, saveVersion, unifiedDiff, versionSummary, versionText, type DiffSide } from './versions';

const tags: [ApiTag] = ['Documents'];

/** The document as the caller sees it: with their role and favorite flag. */
function documentFor(c: Context<AppEnv>, doc: DocumentRow, role: DocumentRole) {
  return presentDocument(doc, { role, favorite: isFavorite(c.var.deps.db, c.var.actor.userId, doc) });
}

const documentPath = (id: string) => `/api/documents/${id}`;

const router = newRouter();

export const documentsRouter = router
  // ---- collection and fixed paths ----
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  // ---- one document ----
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/documents/{id}/content',
      operationId: 'replaceDocumentContent',
      tags,
      summary: 'Replace the Markdown body (editors and owners)',
      description:
        'The body becomes `content`, applied to the live document as one change of minimal edits: connected editors ' +
        'receive it at once and keep their cursors and their own concurrent edits. It is recorded in the change history ' +
        'as the caller\'s. Answers the document with its content. A body over DOCUMENT_BODY_LIMIT_BYTES, or a result over ' +
        'DOCUMENT_MAX_BYTES, is 413. Writes to one document are taken in turn. A large document is diffed in a worker ' +
        'thread; 503 with Retry-After when too much such work is waiting.',
      request: { params: idParams, ...jsonBody(replaceContentBody) },
      responses: { 200: jsonContent(documentWithContent, 'The document with its new content'), ...errorResponses(403, 404, 409, 503) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const { document, role } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, id));
      const { content } = c.req.valid('json');
      const { text } = await replaceContent(documentServices(deps), document, content, c.var.actor.userId);
      const current = authorizeDocument('read', documentAccess(deps.db, c.var.actor, id)).document;
      return c.json({ ...documentFor(c, current, role), content: text }, 200);
    },
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/changes',
      operationId: 'listDocumentChanges',
      tags,
      summary: 'Change history: one entry per stored update, newest first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(changeSchema), 'Changes'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, c.var.deps.documents.listChanges(document.id, pageBounds(q)), presentChange), 200);
    },
  )
  // ---- sharing ----
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/collaborators',
      operationId: 'listDocumentCollaborators',
      tags,
      summary: 'Users and groups with a role on the document, owners first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(collaboratorSchema), 'Collaborators'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listCollaborators(c.var.deps.db, document, q), presentCollaborator), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/collaborators',
      operationId: 'addDocumentCollaborator',
      tags,
      summary: "Share with a user or group, or change their role (owner); 201 for a new grant, 200 for a change",
      description:
        'The principal must be a user or group of the tenant (else 422). Downgrading the last owner who is a person is 409.',
      request: { params: idParams, ...jsonBody(shareBody) },
      responses: {
        200: jsonContent(collaboratorSchema, 'The changed grant'),
        201: jsonContent(collaboratorSchema, 'The new grant'),
        ...errorResponses(403, 404, 409, 422),
      },
    }),
    (c) => {
      const { db, clock, auth } = c.var.deps;
      const { id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, id));
      const body = c.req.valid('json');
      const result = shareDocument(db, clock, auth, c.var.actor, document, {
        principalType: body.principal_type,
        principalId: body.principal_id,
        role: body.role,
      });
      const collaborator = presentCollaborator(result.collaborator);
      if (!result.created) return c.json(collaborator, 200);
      c.header('Location', `${documentPath(id)}/collaborators/${body.principal_type}/${body.principal_id}`);
      return c.json(collaborator, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/collaborators/{principal_type}/{principal_id}',
      operationId: 'getDocumentCollaborator',
      tags,
      summary: "One user's or group's role on the document (the Location of a new grant)",
      request: { params: collaboratorParams },
      responses: { 200: jsonContent(collaboratorSchema, 'The grant'), ...errorResponses(404) },
    }),
    (c) => {
      const { id, principal_type, principal_id } = c.req.valid('param');
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, id));
      return c.json(presentCollaborator(getCollaborator(c.var.deps.db, document, principal_type, principal_id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/documents/{id}/collaborators/{principal_type}/{principal_id}',
      operationId: 'removeDocumentCollaborator',
      tags,
      summary: 'Stop sharing with a user or group (owner); the last owner who is a person cannot be removed (409)',
      request: { params: collaboratorParams },
      responses: { 204: noContent, ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const { db, auth } = c.var.deps;
      const { id, principal_type, principal_id } = c.req.valid('param');
      const { document } = authorizeDocument('manage', documentAccess(db, c.var.actor, id));
      unshareDocument(db, auth, document, principal_type, principal_id);
      return c.body(null, 204);
    },
  )
  // ---- contexts and favorites ----
  .openapi(
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
      return c.json(pageOfRows(c, q, listDocumentContexts(c.var.deps.db, document, q), presentLinkedContext), 200);
    },
  )
  .openapi(
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
  )
  .openapi(
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
      return c.json(presentLinkedContext(getDocumentContext(c.var.deps.db, document, context_type, context_id)), 200);
    },
  )
  .openapi(
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
  )
  .openapi(
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
  )
  .openapi(
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
  )
  // ---- versions and diffs ----
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/versions',
      operationId: 'listDocumentVersions',
      tags,
      summary: 'Named versions, newest first',
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(versionSchema), 'Versions'), ...errorResponses(404) },
    }),
    (c) => {
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listVersions(c.var.deps.db, document, q), presentVersion), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/versions',
      operationId: 'createDocumentVersion',
      tags,
      summary: 'Save the current state as a named version (editors and owners)',
      request: { params: idParams, ...jsonBody(saveVersionBody) },
      responses: { 201: jsonContent(versionSchema, 'The version'), ...errorResponses(403, 404, 409, 413, 415, 503) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const { id } = c.req.valid('param');
      const { document } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, id));
      const version = await saveVersion(documentServices(deps), document, c.req.valid('json').name, c.var.actor.userId);
      c.header('Location', `${documentPath(id)}/versions/${version.id}`);
      return c.json(presentVersion(version), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/versions/{version_id}',
      operationId: 'getDocumentVersion',
      tags,
      summary: 'A named version with its Markdown',
      request: { params: versionParams },
      responses: { 200: jsonContent(versionWithContent, 'The version'), ...errorResponses(404, 409) },
    }),
    (c) => {
      const { id, version_id } = c.req.valid('param');
      const { document } = authorizeDocument('read', documentAccess(c.var.deps.db, c.var.actor, id));
      const version = getVersion(c.var.deps.db, document, version_id);
      return c.json({ ...presentVersion(versionSummary(version)), content: versionText(c.var.deps.db, version) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/versions/{version_id}/revert',
      operationId: 'revertDocumentVersion',
      tags,
      summary: 'Bring a version back (editors and owners)',
      description:
        'Saves the current state as "Before revert to <name>", then replaces the live body with the version\'s text ' +
        'as one new change, which connected editors receive at once.',
      request: { params: versionParams },
      responses: { 200: jsonContent(revertResultSchema, 'The reverted document'), ...errorResponses(403, 404, 409, 413, 503) },
    }),
    async (c) => {
      const deps = c.var.deps;
      const { id, version_id } = c.req.valid('param');
      const { document, role } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, id));
      const version = getVersion(deps.db, document, version_id);
      const { before, text } = await revertToVersion(documentServices(deps), document, version, c.var.actor.userId);
      const current = authorizeDocument('read', documentAccess(deps.db, c.var.actor, id)).document;
      return c.json(
        {
          document: { ...documentFor(c, current, role), content: text },
          before_revert_version: presentVersion(before),
        },
        200,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/diff',
      operationId: 'getDocumentDiff',
      tags,
      summary: 'Differences between two versions, or a version and the live body (`current`)',
      description:
        'JSON (default): `{stats:{insertions, deletions}, changes:[{op, text}]}` where the runs and the counts are of ' +
        '`granularity` units: words (default), lines or characters. `format=unified`: a unified diff as `text/plain`, ' +
        'the sides named by `from` and `to`, with the version names in the headers.',
      request: { params: idParams, query: diffQuery },
      responses: {
        200: {
          description: 'The diff',
          content: {
            'application/json': { schema: diffSchema },
            'text/plain': { schema: z.string().openapi({ description: 'A unified diff' }) },
          },
        },
        ...errorResponses(404, 409, 422),
      },
    }),
    (c) => {
      const deps = c.var.deps;
      const { document } = authorizeDocument('read', documentAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const q = c.req.valid('query');
      const side = (ref: string): DiffSide => {
        if (ref === 'current') return { label: 'current', text: currentMarkdown(documentServices(deps), document) };
        const version = getVersion(deps.db, document, ref);
        return { label: version.id, name: version.name, text: versionText(deps.db, version) };
      };
      const from = side(q.from);
      const to = side(q.to);
      if (q.format === 'unified') {
        return c.text(unifiedDiff(from, to), 200, { 'Content-Type': 'text/plain; charset=utf-8' });
      }
      return c.json({ from: q.from, to: q.to, granularity: q.granularity, ...diffTexts(from.text, to.text, q.granularity) }, 200);
    },
  );
