// The live-editing benchmark's clients: our REST API (documents, sign-in), stock y-websocket and
// Hocuspocus providers in this process (built by providers.ts), and a target per server that hands
// out documents and connects clients to them.
import { setTimeout as sleep } from 'node:timers/promises';
import { hocuspocusClient, yWebsocketClient, type Client } from './providers';
import { ADMIN, type Kind } from './options';
import type { ServerProcess } from './servers';

export { inBatches, withTimeout, type Client } from './providers';

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

export interface Target {
  kind: Kind;
  server: ServerProcess;
  /** Names of `n` documents that exist (ours: created through REST) and nobody has opened. */
  takeDocuments(n: number): string[];
  connect(documentName: string): Client;
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

