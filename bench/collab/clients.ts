// The live-editing benchmark's clients: our REST API (documents, sign-in), stock y-websocket and
// Hocuspocus providers in this process, and a target per server that hands out documents and
// connects clients to them.
import { setTimeout as sleep } from 'node:timers/promises';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { ADMIN, type Kind } from './options';
import type { ServerProcess } from './servers';

// ---------------------------------------------------------------- our REST API

export async function api<T>(base: string, method: string, url: string, token?: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
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

/** Another engineer's documents routes may still be landing: wait (bounded) until creation works. */
export async function waitForDocumentsApi(base: string, token: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${base}/api/documents`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ title: 'bench probe' }),
    });
    if (res.status === 201) return;
    if (Date.now() > deadline) throw new Error(`POST /api/documents answers ${res.status}: ${await res.text()}`);
    await sleep(2_000);
  }
}

// ---------------------------------------------------------------- clients

export interface Client {
  doc: Y.Doc;
  text: Y.Text;
  synced: Promise<void>;
  /** Connections closed by the server or the network while the client wanted to be connected. */
  unexpectedCloses: number;
  destroy(): void;
}

export interface Target {
  kind: Kind;
  server: ServerProcess;
  /** Names of `n` documents that exist (ours: created through REST) and nobody has opened. */
  takeDocuments(n: number): string[];
  connect(documentName: string): Client;
}

export function withTimeout(promise: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

function yWebsocketClient(serverUrl: string, room: string, params: Record<string, string>): Client {
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

function hocuspocusClient(url: string, name: string): Client {
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

// ---------------------------------------------------------------- targets

export function peerTarget(server: ServerProcess, prefix: string): Target {
  let next = 0;
  return {
    kind: server.kind,
    server,
    takeDocuments: (n) => Array.from({ length: n }, () => `${prefix}-${next++}`),
    connect:
      server.kind === 'yws'
        ? (name) => yWebsocketClient(`ws://127.0.0.1:${server.port}`, name, {})
        : (name) => hocuspocusClient(`ws://127.0.0.1:${server.port}`, name),
  };
}

/** A fresh access token: they live 15 minutes, and a full run takes longer. */
export async function signIn(server: ServerProcess): Promise<string> {
  return (await api<{ access_token: string }>(`http://127.0.0.1:${server.port}`, 'POST', '/api/auth/token', undefined, ADMIN)).access_token;
}

/** Our server, its clients signing in with whatever `token()` holds when they connect. */
export function oursTarget(server: ServerProcess, token: () => string, pool: string[]): Target {
  return {
    kind: 'ours',
    server,
    takeDocuments: (n) => {
      if (pool.length < n) throw new Error('not enough pre-created documents');
      return pool.splice(0, n);
    },
    connect: (id) => yWebsocketClient(`ws://127.0.0.1:${server.port}/collab`, id, { token: token() }),
  };
}

