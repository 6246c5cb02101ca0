// Comments REST: threads of a document (list, open ones, create a thread or a reply) and one
// comment (change, delete, resolve or reopen its thread). The caller's role on the document comes
// from the documents area (`documentAccess`) and the comments policy judges it: no grant, another
// tenant's document or a trashed one is 404; a viewer reads but does not write (403). Anchors of
// a large document no one holds are resolved after a worker thread has sliced it: 503 with
// Retry-After when too much such work is waiting.
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { documentAccess } from '../documents/access';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { authorizeComment, type CommentAction } from './policy';
import { presentComment, presentThread } from './present';
import { commentSchema, createCommentBody, threadSchema, updateCommentBody } from './schemas';
import {
  commentView,
  createComment,
  deleteComment,
  findComment,
  listThreads,
  setThreadResolved,
  threadView,
  updateComment,
  type CommentServices,
} from './service';

const tags: [ApiTag] = ['Comments'];

const services = (c: Context<AppEnv>): CommentServices => ({ db: c.var.deps.db, clock: c.var.deps.clock, store: c.var.deps.documents });

/** The document and the caller's right on it, for `/api/documents/{id}/comments…`. */
function documentFor(c: Context<AppEnv>, documentId: string, action: CommentAction) {
  const access = documentAccess(c.var.deps.db, c.var.actor, documentId);
  authorizeComment(action, c.var.actor.userId, access?.role ?? null);
  return access!.document;
}

/** The comment, its document and the caller's right, for `/api/comments/{id}…`: 404 to whoever cannot read the document. */
function commentFor(c: Context<AppEnv>, id: string, action: CommentAction) {
  const comment = findComment(c.var.deps.db, c.var.actor.tenantId, id);
  const access = documentAccess(c.var.deps.db, c.var.actor, comment.documentId);
  authorizeComment(action, c.var.actor.userId, access?.role ?? null, comment);
  return { comment, document: access!.document };
}

const listResponses = { 200: jsonContent(pageOf(threadSchema), 'A page of threads'), ...errorResponses(404, 409, 503) };

const router = newRouter();

export const commentsRouter = router
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/comments/unresolved',
      operationId: 'listUnresolvedDocumentComments',
      tags,
      summary: 'Open threads of a document (readers of the document)',
      request: { params: idParams, query: paginationQuery },
      responses: listResponses,
    }),
    async (c) => {
      const document = documentFor(c, c.req.valid('param').id, 'read');
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, await listThreads(services(c), document, { unresolved: true }, q), presentThread), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/comments',
      operationId: 'listDocumentComments',
      tags,
      summary: 'Comment threads of a document, oldest first, with their replies (readers of the document)',
      description:
        'Each thread is its root comment with `replies`. An anchored root carries `anchor` with the text it covers ' +
        'in the document now (edits made since, live ones included, are followed), or `text: null` and ' +
        '`orphaned: true` once that text has been deleted.',
      request: { params: idParams, query: paginationQuery },
      responses: listResponses,
    }),
    async (c) => {
      const document = documentFor(c, c.req.valid('param').id, 'read');
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, await listThreads(services(c), document, {}, q), presentThread), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/documents/{id}/comments',
      operationId: 'createDocumentComment',
      tags,
      summary: 'Open a thread, or reply with `parent_id` (commenters, editors and owners)',
      description:
        '`anchor` (threads only) holds two Yjs relative positions on the Y.Text `content`, base64 of ' +
        '`Y.encodeRelativePosition`; it must cover some text. An anchor that does not decode, or that names a place ' +
        "of another document, is 422. The document's owners and the thread's participants find the comment in their feed.",
      request: { params: idParams, ...jsonBody(createCommentBody) },
      responses: { 201: jsonContent(commentSchema, 'The comment'), ...errorResponses(403, 404, 409, 422, 503) },
    }),
    async (c) => {
      const document = documentFor(c, c.req.valid('param').id, 'write');
      const input = c.req.valid('json');
      const svc = services(c);
      const row = await createComment(svc, c.var.actor, document, { body: input.body, parentId: input.parent_id, anchor: input.anchor });
      c.header('Location', `/api/comments/${row.id}`);
      return c.json(presentComment(commentView(svc, document, row)), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/comments/{id}',
      operationId: 'updateComment',
      tags,
      summary: "Change a comment's body (its author)",
      request: { params: idParams, ...jsonBody(updateCommentBody) },
      responses: { 200: jsonContent(commentSchema, 'The comment'), ...errorResponses(403, 404, 409, 422, 503) },
    }),
    async (c) => {
      const { comment, document } = commentFor(c, c.req.valid('param').id, 'edit');
      const svc = services(c);
      const row = await updateComment(svc, document, comment, c.req.valid('json').body);
      return c.json(presentComment(commentView(svc, document, row)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/comments/{id}',
      operationId: 'deleteComment',
      tags,
      summary: "Delete a comment (its author, or an owner of the document)",
      description: 'A root with replies stays in its thread, shown as deleted (`body: null`, `deleted: true`); a thread whose every comment is gone goes.',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const { comment } = commentFor(c, c.req.valid('param').id, 'delete');
      deleteComment(services(c), comment);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/comments/{id}/resolve',
      operationId: 'resolveCommentThread',
      tags,
      summary: 'Resolve the whole thread of a comment (commenters, editors and owners)',
      request: { params: idParams },
      responses: { 200: jsonContent(threadSchema, 'The thread'), ...errorResponses(403, 404, 409, 503) },
    }),
    async (c) => {
      const { comment, document } = commentFor(c, c.req.valid('param').id, 'resolve');
      const svc = services(c);
      const root = await setThreadResolved(svc, c.var.actor, document, comment, true);
      return c.json(presentThread(threadView(svc, document, root)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/comments/{id}/reopen',
      operationId: 'reopenCommentThread',
      tags,
      summary: 'Reopen the resolved thread of a comment (commenters, editors and owners)',
      request: { params: idParams },
      responses: { 200: jsonContent(threadSchema, 'The thread'), ...errorResponses(403, 404, 409, 503) },
    }),
    async (c) => {
      const { comment, document } = commentFor(c, c.req.valid('param').id, 'resolve');
      const svc = services(c);
      const root = await setThreadResolved(svc, c.var.actor, document, comment, false);
      return c.json(presentThread(threadView(svc, document, root)), 200);
    },
  );
