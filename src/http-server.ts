// The listening server: the Hono app over node:http plus the collab hub on the same port,
// with a shutdown that stops accepting, closes live documents (1001) and drains requests in flight.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { CollabHub } from '../collab/hub';
import type { AppEnv } from './context';
import { problemResponse } from './http/errors';

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
    const server = serve(
      { fetch: (request, env) => (app ? app.fetch(request, env) : starting()), port: opts.port, hostname: opts.host },
      (info: AddressInfo) => {
        resolve({ server, port: info.port, attach, close });
      },
    ) as Server;
    server.once('error', reject);
    server.on('upgrade', (request, socket, head) => {
      // A throw here would be an uncaught exception, the end of the process: whatever a client
      // sends, the most it can cost is its own connection.
      try {
        if (!app) socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n');
        else if (hub && CollabHub.handles(request.url)) hub.handleUpgrade(request, socket, head);
        else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
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
