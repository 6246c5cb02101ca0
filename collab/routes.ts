// `GET /collab/{document_id}` in the API reference. The WebSocket upgrade itself is taken by the
// hub on the HTTP server's `upgrade` event; a plain GET reaching the app is told to upgrade.
import { z } from '@hono/zod-openapi';
import { AppError, problemSchema } from '../src/http/errors';
import { newRouter, publicRoute, uuidParam } from '../src/http/openapi';

export const collabRouter = newRouter().openapi(
  publicRoute({
    method: 'get',
    path: '/collab/{document_id}',
    operationId: 'connectDocumentCollab',
    tags: ['Live editing'],
    summary: 'Live co-editing over WebSocket (y-websocket protocol)',
    description:
      'Upgrade to a WebSocket with `?token=<access JWT or API key>`. Speaks the standard y-websocket protocol ' +
      '(y-protocols sync and awareness) on a Y.Doc whose Y.Text `content` holds the Markdown. Close codes: 4401 ' +
      'unauthenticated, 4403 no access, 4404 unknown document, 1009 message too large, 1007 malformed message, ' +
      '1008 rate limit, 1011 a change could not be saved (reconnect: the client resends it), 1001 server shutting down. Viewers and commenters receive updates; their own updates are ' +
      'refused with the permission-denied auth message and never stored.',
    request: {
      params: z.object({ document_id: uuidParam('document_id') }),
      query: z.object({ token: z.string().optional().openapi({ description: 'Access JWT or API key' }) }),
    },
    responses: {
      101: { description: 'Switching protocols to WebSocket' },
      426: { description: 'A plain HTTP request: upgrade to WebSocket', content: { 'application/problem+json': { schema: problemSchema } } },
    },
  }),
  () => {
    throw new AppError('upgrade_required', 'This endpoint speaks WebSocket: connect with a y-websocket client', {
      headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
    });
  },
);
