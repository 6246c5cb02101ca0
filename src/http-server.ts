// The listening server: the Hono app over node:http plus the collab hub on the same port,
// with a shutdown that stops accepting, closes live documents (1001) and drains requests in flight.
import type { AddressInfo, Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import { RequestError, getRequestListener } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { CollabHub } from '../collab/hub';
import type { AppEnv } from './context';
import { problemResponse, rawProblemResponse } from './http/errors';

/** Node's own answers to requests it cannot parse, as problems: its statuses for each case. */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection, or one with a response under way, can take no answer.
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, code, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_header_fields_too_large', 'The request headers are larger than the server accepts']
      : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
        ? [413, 'payload_too_large', 'The chunk extensions of the request body are larger than the server accepts']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'request_timeout', 'The request was not received in time']
          : [400, 'bad_request', 'The request is not well-formed HTTP/1.1'];
  socket.end(rawProblemResponse(status, code, detail));
}

/** Requests the adapter cannot make a Request of (a Host header that is no host, a backslash in the path). */
const unreadableRequest = (err: unknown): Response =>
  err instanceof RequestError ? problemResponse(400, 'bad_request', `The request cannot be read: ${err.message}`) : problemResponse(500, 'internal');

export interface RunningServer {
  server: Server;
  port: number;
  /** Starts serving the app (and the hub) on a server started without them. */
  attach(app: OpenAPIHono<AppEnv>, hub?: CollabHub): void;
  close(): Promise<void>;
}

/**
 * Binds the port. Without an app (the server's own start) it answers 503 until `attach`: the port
 * is taken before the first start creates anything, so that a busy port fails before the database
 * is written, and nothing is served from a database still being prepared.
 */
export function startHttpServer(opts: {
  app?: OpenAPIHono<AppEnv>;
  hub?: CollabHub;
  port: number;
  host: string;
  shutdownTimeoutMs?: number;
}): Promise<RunningServer> {
  let app = opts.app;
  let hub = opts.hub;
  const starting = () =>
    problemResponse(503, 'service_unavailable', 'The server is starting; try again in a moment', undefined, { 'Retry-After': '1' });
  return new Promise((resolve, reject) => {
    const listener = getRequestListener((request, env) => (app ? app.fetch(request, env) : starting()), {
      hostname: opts.host,
      errorHandler: unreadableRequest,
    });
    const server = createServer(listener);
    server.listen(opts.port, opts.host, () => {
      resolve({ server, port: (server.address() as AddressInfo).port, attach, close });
    });
    server.once('error', reject);
    server.on('clientError', answerClientError);
    server.on('upgrade', (request, socket, head) => {
      // A throw here would be an uncaught exception, the end of the process: whatever a client
      // sends, the most it can cost is its own connection.
      try {
        if (!app) socket.end(rawProblemResponse(503, 'service_unavailable', 'The server is starting; try again in a moment', { 'Retry-After': '1' }));
        else if (hub && CollabHub.handles(request.url)) hub.handleUpgrade(request, socket, head);
        else socket.end(rawProblemResponse(404, 'not_found', 'Nothing here takes an upgrade'));
      } catch {
        socket.destroy();
      }
    });

    function attach(next: OpenAPIHono<AppEnv>, nextHub?: CollabHub): void {
      hub = nextHub;
      app = next;
    }

    let closing: Promise<void> | undefined;
    function close(): Promise<void> {
      closing ??= (async () => {
        const stopped = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        await hub?.close();
        const force = setTimeout(() => server.closeAllConnections(), opts.shutdownTimeoutMs ?? 10_000);
        force.unref();
        await stopped;
        clearTimeout(force);
      })();
      return closing;
    }
  });
}
