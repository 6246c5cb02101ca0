// Bench helper, not a benchmark: the stock clients of the live-editing benchmark (y-websocket's
// WebsocketProvider over `ws`, @hocuspocus/provider), and small helpers for starting many, shared by
// the in-process harness (clients.ts) and the client processes (client-process.ts). No side effects
// on import: the client processes load it.
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';

export interface Client {
  doc: Y.Doc;
  text: Y.Text;
  synced: Promise<void>;
  /** Connections closed by the server or the network while the client wanted to be connected. */
  unexpectedCloses: number;
  destroy(): void;
}

export async function inBatches<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

export function yWebsocketClient(serverUrl: string, room: string, params: Record<string, string>): Client {
  const doc = new Y.Doc();
  // disableBc: without it, providers of one room in one process talk through lib0's
  // BroadcastChannel and the server would not be measured at all.
  const provider = new WebsocketProvider(serverUrl, room, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    disableBc: true,
    params,
  });
  let destroyed = false;
  const client: Client = {
    doc,
    text: doc.getText('content'),
    unexpectedCloses: 0,
    synced: new Promise((resolve) => {
      const onSync = (synced: boolean) => {
        if (!synced) return;
        provider.off('sync', onSync);
        resolve();
      };
      provider.on('sync', onSync);
    }),
    destroy() {
      destroyed = true;
      provider.destroy();
      doc.destroy();
    },
  };
  provider.on('connection-close', () => {
    if (!destroyed) client.unexpectedCloses += 1;
  });
  return client;
}

/** What bare clients show as their document: they have none (never edited; see bareClient). */
const NO_DOC = new Y.Doc();

/**
 * A bare `ws` client of the floor server (bench/collab-peer-server.ts floor): it sends one small
 * message and is "synced" once the echo is back; nothing else goes either way.
 */
export function bareClient(url: string, name: string): Client {
  const ws = new WebSocket(`${url}/${name}`, { perMessageDeflate: false });
  let destroyed = false;
  const client: Client = {
    doc: NO_DOC,
    text: NO_DOC.getText('content'),
    unexpectedCloses: 0,
    synced: new Promise((resolve, reject) => {
      ws.once('open', () => ws.send(Buffer.from(name)));
      ws.once('message', () => resolve());
      ws.on('error', reject);
    }),
    destroy() {
      destroyed = true;
      ws.terminate();
    },
  };
  ws.on('close', () => {
    if (!destroyed) client.unexpectedCloses += 1;
  });
  return client;
}

export function hocuspocusClient(url: string, name: string): Client {
  const doc = new Y.Doc();
  let destroyed = false;
  let resolveSynced!: () => void;
  // One socket per client, as for the y-websocket clients: an explicit socket (v3 would otherwise
  // build the same thing, but its typings only take the polyfill here) attached to one document.
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name, document: doc, onSynced: () => resolveSynced() });
  provider.attach();
  const client: Client = {
    doc,
    text: doc.getText('content'),
    unexpectedCloses: 0,
    synced: new Promise((resolve) => (resolveSynced = resolve)),
    destroy() {
      destroyed = true;
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
  socket.on('close', () => {
    if (!destroyed) client.unexpectedCloses += 1;
  });
  return client;
}
