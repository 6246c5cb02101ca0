// Live-editing test kit: the real HTTP server + hub on 127.0.0.1:0 around a test app, stock
// y-websocket providers (Node `ws`, BroadcastChannel off so every byte goes through the server),
// and raw sockets for protocol-level checks.
import type { Database } from 'better-sqlite3';
import { afterEach } from 'vitest';
import { WebSocket } from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import type { CollabHub, HubOptions } from '../../collab/hub';
import { createCollabHub } from '../../src/deps';
import { startHttpServer, type RunningServer } from '../../src/http-server';
import type { TestApp } from './app';

export interface CollabServer {
  port: number;
  hub: CollabHub;
  running: RunningServer;
  close(): Promise<void>;
}

export async function startCollabServer(t: TestApp, hubOptions: Partial<HubOptions> = {}): Promise<CollabServer> {
  const hub = createCollabHub(t.deps, hubOptions);
  const running = await startHttpServer({ app: t.app, hub, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 });
  return { port: running.port, hub, running, close: () => running.close() };
}

export interface Editor {
  provider: WebsocketProvider;
  doc: Y.Doc;
  text: Y.Text;
  destroy(): void;
}

export function connectEditor(port: number, documentId: string, token: string): Editor {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`ws://127.0.0.1:${port}/collab`, documentId, doc, {
    params: { token },
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    disableBc: true,
    maxBackoffTime: 200,
  });
  return {
    provider,
    doc,
    text: doc.getText('content'),
    destroy: () => {
      provider.destroy();
      doc.destroy();
    },
  };
}

/** Resolves once the provider has completed the sync handshake. */
/**
 * Stock editors a test file opens (on the server that `port` names once it runs), each destroyed
 * after the test that opened it. Call at the top level of the file.
 */
export function editorsOf(port: () => number) {
  const open: Editor[] = [];
  afterEach(() => {
    while (open.length) open.pop()!.destroy();
  });
  return {
    open(documentId: string, user: { token: string }): Editor {
      const editor = connectEditor(port(), documentId, user.token);
      open.push(editor);
      return editor;
    },
    /** Destroys one before the test ends. */
    close(editor: Editor): void {
      open.splice(open.indexOf(editor), 1);
      editor.destroy();
    },
  };
}

export function synced(editor: Editor, timeoutMs = 5_000): Promise<void> {
  if (editor.provider.synced) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('provider did not sync')), timeoutMs);
    editor.provider.once('sync', (isSynced: boolean) => {
      if (isSynced) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** Polls until `check` holds; for asserting on what arrives over the network. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface RawClient {
  ws: WebSocket;
  messages: Uint8Array[];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A bare WebSocket to the hub, for close codes and hand-made frames (`autoPong: false`: a dead peer). */
export function rawClient(port: number, path: string, options: { maxPayload?: number; autoPong?: boolean } = {}): RawClient {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { maxPayload: options.maxPayload, autoPong: options.autoPong ?? true });
  const messages: Uint8Array[] = [];
  ws.on('message', (data: Buffer) => messages.push(new Uint8Array(data)));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  ws.on('error', () => {});
  return { ws, messages, opened, closed };
}

export { syncUpdateMessage } from './yjs-attacks';

/** An update inserting `text` at the start, made on a scratch document. */
export function insertUpdate(text: string): Uint8Array {
  const doc = new Y.Doc();
  doc.getText('content').insert(0, text);
  return Y.encodeStateAsUpdate(doc);
}

/**
 * Makes every log insert for `documentId` fail (as a full disk or an I/O error would), through a
 * trigger on the real table; returns the function that heals it.
 */
export function failUpdateWrites(sqlite: Database, documentId: string): () => void {
  // Trigger names are identifiers: derived from the id, which is a UUID we created.
  const name = `fail_updates_${documentId.replace(/-/g, '_')}`;
  sqlite.exec(
    `CREATE TRIGGER ${name} BEFORE INSERT ON document_updates WHEN NEW.document_id = '${documentId}' ` +
      `BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END`,
  );
  return () => sqlite.exec(`DROP TRIGGER IF EXISTS ${name}`);
}
