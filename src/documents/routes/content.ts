// A document's Markdown body replaced over REST; reads of the body are on GET /api/documents/{id}.
import { authedRoute, errorResponses, idParams, jsonBody, jsonContent } from '../../http/openapi';
import { documentAccess } from '../access';
import { replaceContent } from '../content';
import { authorizeDocument } from '../policy';
import { documentWithContent, replaceContentBody } from '../schemas';
import { documentServices } from '../service';
import { documentFor, documentRoute, tags } from './route';

export const contentRoutes = {
  replace: documentRoute(
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
      const { document, role } = authorizeDocument('edit', documentAccess(deps.db, c.var.actor, c.req.valid('param').id));
      const replaced = await replaceContent(documentServices(deps), document, c.req.valid('json').content, c.var.actor.userId);
      return c.json({ ...documentFor(c, replaced.document, role), content: replaced.text }, 200);
    },
  ),
};
