// Bench helper, not a benchmark: a reference collaboration server in its own process for
// bench/collab.ts, so that its RSS and CPU are its own. `yws` is @y/websocket-server 0.1.1's
// setupWSConnection (in memory: no YPERSISTENCE); `hocuspocus` is @hocuspocus/server 3 with no
// extensions (in memory); `floor` is a bare `ws` server that echoes each message and keeps nothing
// of its own per connection (the least any server holding a WebSocket per document can cost:
// bench/collab/idle.ts). All on 127.0.0.1, port 0; each prints `{"port":N,"pid":N}` once listening
// and exits on SIGTERM.
//   node --import tsx bench/collab-peer-server.ts yws|hocuspocus|floor
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as HocuspocusServer } from '@hocuspocus/server';
import { setupWSConnection } from '@y/websocket-server/utils';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

const kind = process.argv[2];

function listen(server: HttpServer): void {
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid })}\n`);
  });
}

let stop: () => Promise<void>;

if (kind === 'yws') {
  // As the package's own server.js, minus persistence and the host/port from the environment.
  delete process.env.YPERSISTENCE;
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', setupWSConnection);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('okay');
  });
  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  listen(server);
  stop = async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
} else if (kind === 'hocuspocus') {
  // v3's listen() binds to the configured port but ignores `address`: listen on loopback ourselves.
  const hocuspocus = new HocuspocusServer({ quiet: true, stopOnSignals: false });
  listen(hocuspocus.httpServer);
  stop = async () => {
    for (const client of hocuspocus.webSocketServer.clients) client.terminate();
    hocuspocus.httpServer.close();
  };
} else if (kind === 'floor') {
  // ws as the hub configures it (no permessage-deflate, no client tracking), one shared listener, the message echoed.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  const sockets = new Set<WebSocket>();
  function echo(this: WebSocket, data: RawData, isBinary: boolean): void {
    this.send(data, { binary: isBinary });
  }
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('message', echo);
  });
  const server = createServer((_req, res) => res.end('okay'));
  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  listen(server);
  stop = async () => {
    for (const ws of sockets) ws.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
} else {
  process.stderr.write('usage: collab-peer-server.ts yws|hocuspocus|floor\n');
  process.exit(2);
}

process.on('SIGTERM', () => {
  void stop().finally(() => process.exit(0));
});
