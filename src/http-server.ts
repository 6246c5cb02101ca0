// The listening server: the Hono app over node:http plus the collab hub on the same port,
// with a shutdown that stops accepting, closes live documents (1001) and drains requests in flight.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { CollabHub } from '../collab/hub';
import type { AppEnv } from './context';

export interface RunningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export function startHttpServer(opts: {
  app: OpenAPIHono<AppEnv>;
  hub?: CollabHub;
  port: number;
  host: string;
  shutdownTimeoutMs?: number;
}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: opts.app.fetch, port: opts.port, hostname: opts.host }, (info: AddressInfo) => {
      resolve({ server, port: info.port, close });
    }) as Server;
    server.once('error', reject);
    server.on('upgrade', (request, socket, head) => {
      // A throw here would be an uncaught exception, the end of the process: whatever a client
      // sends, the most it can cost is its own connection.
      try {
        if (opts.hub && CollabHub.handles(request.url)) opts.hub.handleUpgrade(request, socket, head);
        else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      } catch {
        socket.destroy();
      }
    });

    let closing: Promise<void> | undefined;
    function close(): Promise<void> {
      closing ??= (async () => {
        const stopped = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        await opts.hub?.close();
        const force = setTimeout(() => server.closeAllConnections(), opts.shutdownTimeoutMs ?? 10_000);
        force.unref();
        await stopped;
        clearTimeout(force);
      })();
      return closing;
    }
  });
}
