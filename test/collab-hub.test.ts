// Live co-editing through the real server on an ephemeral port, with stock y-websocket clients.
import { connect } from 'node:net';
import { count, eq } from 'drizzle-orm';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as awarenessProtocol from 'y-protocols/awareness';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { encodeAwarenessEntries, type AwarenessEntry } from '../collab/hub';
import { Connection } from '../collab/hub/connection';
import { documentUpdates } from '../db/schema';
import { MISSING_ID, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { sharedDocument, storedUpdateCount } from './helpers/documents';
import {
  connectEditor,
  eventually,
  failUpdateWrites,
  insertUpdate,
  rawClient,
  startCollabServer,
  synced,
  syncUpdateMessage,
  type CollabServer,
  type Editor,
} from './helpers/collab';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let editor: TestUser;
let viewer: TestUser;
let stranger: TestUser;
const open: Editor[] = [];

function editorFor(documentId: string, user: TestUser | string): Editor {
  const e = connectEditor(server.port, documentId, typeof user === 'string' ? user : user.token);
  open.push(e);
  return e;
}

function closeEditor(e: Editor): void {
  open.splice(open.indexOf(e), 1);
  e.destroy();
}

const newDocument = (content = ''): Promise<string> =>
  sharedDocument(t, owner, [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ], content);

const storedCount = (documentId: string) => storedUpdateCount(t, documentId);

const storedData = (documentId: string) =>
  t.db
    .select({ data: documentUpdates.data })
    .from(documentUpdates)
    .where(eq(documentUpdates.documentId, documentId))
    .orderBy(documentUpdates.id)
    .all()
    .map((row) => row.data!);

/** The Yjs update carried by a y-websocket sync update message; null for any other message. */
function updateIn(message: Uint8Array): Uint8Array | null {
  const decoder = decoding.createDecoder(message);
  if (decoding.readVarUint(decoder) !== 0 || decoding.readVarUint(decoder) !== 2) return null;
  return decoding.readVarUint8Array(decoder);
}

/** Runs `after` right behind each of the store's applyUpdate calls, in the same event-loop turn. */
function behindEveryApply(store: TestApp['deps']['documents'], after: () => void) {
  const applyUpdate = store.applyUpdate.bind(store);
  return vi.spyOn(store, 'applyUpdate').mockImplementation((...args) => {
    applyUpdate(...args);
    after();
  });
}

const contentOf = async (documentId: string) =>
  (await t.call('GET', `/api/documents/${documentId}?include=content`, { as: owner })).body.content as string;

beforeAll(async () => {
  t = await makeTestApp();
  server = await startCollabServer(t, { pingIntervalMs: 60_000 });
  owner = await t.newUser();
  editor = await t.newUser();
  viewer = await t.newUser();
  stranger = await t.newUser();
});

afterEach(() => {
  vi.restoreAllMocks();
  while (open.length) open.pop()!.destroy();
});

afterAll(async () => {
  await server?.close();
  t?.close();
});

describe('live editing with y-websocket clients', () => {
  it('two editors converge on concurrent edits, and the store holds the result', async () => {
    const id = await newDocument('Hello');
    const a = editorFor(id, owner);
    const b = editorFor(id, editor);
    await Promise.all([synced(a), synced(b)]);
    expect(a.text.toString()).toBe('Hello');
    a.text.insert(0, 'A1 ');
    b.text.insert(b.text.length, ' B1');
    a.text.insert(a.text.length, ' A2');
    b.text.insert(0, 'B2 ');
    await eventually(() => a.text.toString() === b.text.toString() && a.text.length === 'Hello'.length + 12, 5_000, 'convergence');
    await eventually(async () => (await contentOf(id)) === a.text.toString(), 5_000, 'stored content');
    for (const part of ['A1 ', ' B1', ' A2', 'B2 ', 'Hello']) expect(a.text.toString()).toContain(part);

    // Once the last editor has left, the document leaves memory; what the disk holds is the same.
    const final = a.text.toString();
    for (const e of [a, b]) closeEditor(e);
    await eventually(() => !t.deps.documents.isLive(id), 5_000, 'document unloaded');
    expect(await contentOf(id)).toBe(final);
  });

  it('a late joiner receives the full state', async () => {
    const id = await newDocument();
    const a = editorFor(id, owner);
    await synced(a);
    a.text.insert(0, 'written before the second client arrived');
    await eventually(() => storedCount(id) > 0, 5_000, 'persisted edit');
    const late = editorFor(id, editor);
    await synced(late);
    await eventually(() => late.text.toString() === 'written before the second client arrived', 5_000, 'late state');
  });

  it("records live edits with their authors in the change history", async () => {
    const id = await newDocument();
    const a = editorFor(id, editor);
    await synced(a);
    a.text.insert(0, 'by the editor');
    await eventually(() => storedCount(id) > 0, 5_000, 'persisted edit');
    const changes = await t.call('GET', `/api/documents/${id}/changes`, { as: owner });
    expect(changes.status).toBe(200);
    expect(changes.body.data.map((c: { user_id: string }) => c.user_id)).toContain(editor.user.id);
  });

  it('indexes live edits for search without any REST write', async () => {
    const id = await newDocument();
    const a = editorFor(id, owner);
    await synced(a);
    a.text.insert(0, 'quetzalcoatl appears only in a live edit');
    await eventually(() => storedCount(id) > 0, 5_000, 'persisted edit');
    t.deps.search.flush();
    const found = await t.call('GET', '/api/documents/suggestions?q=quetzal', { as: owner });
    expect(found.status).toBe(200);
    expect(found.body.data.map((d: { id: string }) => d.id)).toContain(id);
  });

  it.each(['viewer', 'commenter'] as const)(
    "refuses a %s's edits with permission-denied and never stores them, while updates still reach them",
    async (role) => {
      const id = await newDocument('shared text');
      const reader = role === 'viewer' ? viewer : await t.newUser();
      if (role === 'commenter') {
        const shared = await t.call('POST', `/api/documents/${id}/collaborators`, {
          as: owner,
          body: { principal_type: 'user', principal_id: reader.user.id, role },
        });
        expect(shared.status).toBeLessThan(300);
      }
      const v = rawClient(server.port, `/collab/${id}?token=${reader.token}`);
      await v.opened;
      const before = storedCount(id);
      v.ws.send(syncUpdateMessage(insertUpdate(`${role} was here`)));
      await eventually(() => v.messages.some((m) => m[0] === 2), 5_000, 'permission denied message');
      const denied = decoding.createDecoder(v.messages.find((m) => m[0] === 2)!);
      expect(decoding.readVarUint(denied)).toBe(2);
      expect(decoding.readVarUint(denied)).toBe(0); // messagePermissionDenied
      expect(decoding.readVarString(denied)).toMatch(/read-only/);
      expect(storedCount(id)).toBe(before);
      expect(await contentOf(id)).toBe('shared text');

      // ...and what editors write still reaches them.
      const received = v.messages.length;
      const w = editorFor(id, editor);
      await synced(w);
      w.text.insert(0, 'editor update ');
      await eventually(() => v.messages.slice(received).some((m) => m[0] === 0), 5_000, `update at ${role}`);
      v.ws.close();
    },
  );

  it('a REST revert reaches a connected editor at once', async () => {
    const id = await newDocument('original text');
    const version = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'v1' } });
    expect(version.status).toBe(201);
    const a = editorFor(id, editor);
    await synced(a);
    a.text.insert(a.text.length, ' plus live edits');
    await eventually(async () => (await contentOf(id)) === 'original text plus live edits', 5_000, 'live edit stored');
    const revert = await t.call('POST', `/api/documents/${id}/versions/${version.body.id}/revert`, { as: owner });
    expect(revert.status).toBeLessThan(300);
    await eventually(() => a.text.toString() === 'original text', 5_000, 'revert at editor');
  });

  it('a named version saved after live edits holds them; the history names their author', async () => {
    const id = await newDocument('base');
    const a = editorFor(id, editor);
    await synced(a);
    const before = storedCount(id);
    a.text.insert(a.text.length, ' typed live');
    await eventually(() => storedCount(id) > before, 5_000, 'live edit stored');
    const saved = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'after typing' } });
    expect(saved.status).toBe(201);
    const version = await t.call('GET', `/api/documents/${id}/versions/${saved.body.id}`, { as: owner });
    expect(version.status).toBe(200);
    expect(version.body.content).toBe('base typed live');
    const changes = await t.call('GET', `/api/documents/${id}/changes`, { as: owner });
    expect(changes.body.data[0].user_id).toBe(editor.user.id);
  });

  it("relays awareness and removes a client's presence when it leaves", async () => {
    const id = await newDocument();
    const a = editorFor(id, owner);
    const b = editorFor(id, editor);
    await Promise.all([synced(a), synced(b)]);
    a.provider.awareness.setLocalStateField('user', { name: 'Ada', cursor: 3 });
    await eventually(() => b.provider.awareness.getStates().get(a.doc.clientID)?.user?.name === 'Ada', 5_000, 'presence');
    const aClientId = a.doc.clientID;
    a.provider.disconnect();
    await eventually(() => !b.provider.awareness.getStates().has(aClientId), 5_000, 'presence removed');
  });
});

describe('admission and close codes', () => {
  const closeCode = async (path: string) => (await rawClient(server.port, path).closed).code;

  it('4401 without a token, with a bad token, and with an expired token', async () => {
    const id = await newDocument();
    expect(await closeCode(`/collab/${id}`)).toBe(4401);
    expect(await closeCode(`/collab/${id}?token=not-a-token`)).toBe(4401);
    const expiring = await t.tokenFor(editor.user);
    t.clock.advance(16 * 60 * 1000);
    try {
      expect(await closeCode(`/collab/${id}?token=${expiring}`)).toBe(4401);
    } finally {
      t.clock.advance(-16 * 60 * 1000);
    }
  });

  it('4403 without access, 4404 for unknown, malformed, trashed and other-tenant documents', async () => {
    const id = await newDocument();
    expect(await closeCode(`/collab/${id}?token=${stranger.token}`)).toBe(4403);
    expect(await closeCode(`/collab/${MISSING_ID}?token=${owner.token}`)).toBe(4404);
    expect(await closeCode(`/collab/not-a-uuid?token=${owner.token}`)).toBe(4404);
    const other = await t.newTenant(`collab-${Date.now().toString(36)}`);
    expect(await closeCode(`/collab/${id}?token=${other.admin.token}`)).toBe(4404);
    const trashed = await newDocument();
    expect((await t.call('DELETE', `/api/documents/${trashed}`, { as: owner })).status).toBe(204);
    expect(await closeCode(`/collab/${trashed}?token=${owner.token}`)).toBe(4404);
  });

  it('a document id in capitals names the same document and room', async () => {
    const id = await newDocument();
    const lower = editorFor(id, owner);
    const upper = editorFor(id.toUpperCase(), editor);
    await Promise.all([synced(lower), synced(upper)]);
    upper.text.insert(0, 'shouted id');
    await eventually(() => lower.text.toString() === 'shouted id', 5_000, 'the lower-case peer hears it');
    expect(await contentOf(id)).toBe('shouted id');
    lower.provider.destroy();
    upper.provider.destroy();
  });

  it('survives request targets that do not parse, answering each and serving on', async () => {
    // Each of these once threw inside the upgrade handler: an uncaught exception, the process gone.
    const statusLine = async (target: string) => {
      const raw = rawUpgrade(server.port, target);
      raw.socket.setTimeout(3_000, () => raw.socket.destroy());
      await raw.closed;
      return raw.received().split('\r\n')[0];
    };
    expect(await statusLine('http://[/collab/x')).toBe('HTTP/1.1 404 Not Found');
    expect(await statusLine('http://a:b@[::1/collab/x')).toBe('HTTP/1.1 404 Not Found');
    // Malformed percent-encoding: no document has that id.
    expect(await closeCode(`/collab/%E0%A4%A?token=${owner.token}`)).toBe(4404);

    const id = await newDocument();
    const e = editorFor(id, owner);
    await synced(e);
    e.provider.destroy();
  });

  it('accepts an API key as the token', async () => {
    const id = await newDocument('via key');
    const key = await t.call('POST', '/api/api-keys', { as: editor, body: { name: 'collab' } });
    const e = editorFor(id, key.body.key as string);
    await synced(e);
    expect(e.text.toString()).toBe('via key');
  });

  it('a plain GET of the collab path is told to upgrade', async () => {
    const res = await t.call('GET', `/collab/${MISSING_ID}`);
    expect(res.status).toBe(426);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

/** An upgrade request over a bare TCP socket, which answers nothing unless told to. */
function rawUpgrade(port: number, target: string) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
  );
  return { socket, closed, received: () => received };
}

describe('faults stay with the faulty connection', () => {
  it('a bad frame on a refused connection (4401, 4404) ends that socket only', async () => {
    // A refused socket had no error listener: the frame error was an uncaught exception, the process gone.
    for (const target of [`/collab/${MISSING_ID}`, `/collab/${MISSING_ID}?token=${owner.token}`]) {
      const raw = rawUpgrade(server.port, target);
      await eventually(() => raw.received().includes('HTTP/1.1 101'), 5_000, 'upgraded');
      await eventually(() => raw.received().length > raw.received().indexOf('\r\n\r\n') + 4, 5_000, 'close frame');
      // Unmasked, and a reserved opcode: both are protocol errors from a client.
      raw.socket.write(Buffer.from([0x83, 0x01, 0x00]));
      await raw.closed;
    }
    const id = await newDocument();
    const e = editorFor(id, owner);
    await synced(e);
    e.provider.destroy();
  });


  it('closes a connection sending malformed or truncated frames (1007) and a text frame (1003); others go on', async () => {
    const id = await newDocument();
    const good = editorFor(id, owner);
    const watcher = editorFor(id, editor);
    await Promise.all([synced(good), synced(watcher)]);

    const garbage = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await garbage.opened;
    garbage.ws.send(new Uint8Array([0, 2, 200, 1, 2, 3]));
    expect((await garbage.closed).code).toBe(1007);

    const truncated = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await truncated.opened;
    truncated.ws.send(syncUpdateMessage(insertUpdate('never')).slice(0, 6));
    expect((await truncated.closed).code).toBe(1007);

    const unknownType = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await unknownType.opened;
    unknownType.ws.send(new Uint8Array([42]));
    expect((await unknownType.closed).code).toBe(1007);

    const text = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await text.opened;
    text.ws.send('hello');
    expect((await text.closed).code).toBe(1003);

    good.text.insert(0, 'still alive');
    await eventually(() => watcher.text.toString() === 'still alive', 5_000, 'others unaffected');
    expect(await contentOf(id)).toBe('still alive');
  });

  it('closes a connection whose message is over the limit with 1009; others go on', async () => {
    const small = await makeTestApp();
    const smallServer = await startCollabServer(small, { maxMessageBytes: 64 * 1024 });
    try {
      const me = await small.newUser();
      const created = await small.call('POST', '/api/documents', { as: me, body: { title: 'limits' } });
      const id = created.body.id as string;
      const good = connectEditor(smallServer.port, id, me.token);
      const watcher = connectEditor(smallServer.port, id, me.token);
      open.push(good, watcher);
      await Promise.all([synced(good), synced(watcher)]);
      const big = rawClient(smallServer.port, `/collab/${id}?token=${me.token}`);
      await big.opened;
      big.ws.send(syncUpdateMessage(insertUpdate('x'.repeat(100 * 1024))));
      expect((await big.closed).code).toBe(1009);
      good.text.insert(0, 'fine');
      await eventually(() => watcher.text.toString() === 'fine', 5_000, 'others unaffected');
    } finally {
      await smallServer.close();
      small.close();
    }
  });

  it('takes messages up to DOCUMENT_MAX_BYTES (5 MiB) plus 1 KiB of framing by default and closes one above it with 1009', async () => {
    const id = await newDocument();
    const watcher = editorFor(id, owner);
    await synced(watcher);
    // A 1 MiB paste is an ordinary message.
    const paste = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await paste.opened;
    paste.ws.send(syncUpdateMessage(insertUpdate('p'.repeat(1024 * 1024))));
    await eventually(() => watcher.text.length === 1024 * 1024, 10_000, 'the paste at the other client');
    expect(paste.ws.readyState).toBe(paste.ws.OPEN);
    paste.ws.close();
    // One byte over the default limit is not.
    const big = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await big.opened;
    big.ws.send(new Uint8Array(5 * 1024 * 1024 + 1024 + 1));
    expect((await big.closed).code).toBe(1009);
    expect(watcher.provider.wsconnected).toBe(true);
  });

  it('closes a connection that floods messages past its rate limit with 1008', async () => {
    const small = await makeTestApp();
    const smallServer = await startCollabServer(small, { messagesPerSecond: 5, messageBurst: 10 });
    try {
      const me = await small.newUser();
      const id = (await small.call('POST', '/api/documents', { as: me, body: { title: 'flood' } })).body.id as string;
      const flood = rawClient(smallServer.port, `/collab/${id}?token=${me.token}`);
      await flood.opened;
      const query = encoding.createEncoder();
      encoding.writeVarUint(query, 3);
      const message = encoding.toUint8Array(query);
      const good = connectEditor(smallServer.port, id, me.token);
      const watcher = connectEditor(smallServer.port, id, me.token);
      open.push(good, watcher);
      await Promise.all([synced(good), synced(watcher)]);
      for (let i = 0; i < 50; i++) flood.ws.send(message);
      expect((await flood.closed).code).toBe(1008);
      // The limit is per connection: the others of the same user and document go on.
      good.text.insert(0, 'unaffected');
      await eventually(() => watcher.text.toString() === 'unaffected', 5_000, 'others unaffected');
    } finally {
      await smallServer.close();
      small.close();
    }
  });

  it('drops a peer that stops answering pings; a peer that answers stays and keeps editing', async () => {
    const own = await makeTestApp();
    const ownServer = await startCollabServer(own, { pingIntervalMs: 100 });
    let live: Editor | undefined;
    try {
      const me = await own.newUser();
      const id = (await own.call('POST', '/api/documents', { as: me, body: { title: 'keep-alive' } })).body.id as string;
      live = connectEditor(ownServer.port, id, me.token);
      await synced(live);
      // Connected, then silent: it neither sends nor answers the hub's pings, like a peer whose
      // network went away without a close.
      const silent = rawClient(ownServer.port, `/collab/${id}?token=${me.token}`, { autoPong: false });
      await silent.opened;
      await eventually(() => ownServer.hub.connectionCount === 2, 2_000, 'both connected');
      // Terminated (no close frame) after one unanswered ping.
      await eventually(() => silent.ws.readyState === silent.ws.CLOSED, 3_000, 'silent peer dropped');
      expect((await silent.closed).code).toBe(1006);
      await eventually(() => ownServer.hub.connectionCount === 1, 2_000, 'dead peer released');
      // Several more ping rounds later the answering peer is still there and its edits still land.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(ownServer.hub.connectionCount).toBe(1);
      expect(live.provider.wsconnected).toBe(true);
      live.text.insert(0, 'still here');
      await eventually(
        async () => (await own.call('GET', `/api/documents/${id}?include=content`, { as: me })).body.content === 'still here',
        2_000,
        'edit stored',
      );
    } finally {
      live?.destroy();
      await ownServer.close();
      own.close();
    }
  });

  it('graceful shutdown closes every connection with 1001 and unloads documents', async () => {
    const own = await makeTestApp();
    const ownServer = await startCollabServer(own);
    const me = await own.newUser();
    const id = (await own.call('POST', '/api/documents', { as: me, body: { title: 'bye' } })).body.id as string;
    const c = rawClient(ownServer.port, `/collab/${id}?token=${me.token}`);
    await c.opened;
    await eventually(() => own.deps.documents.isLive(id), 2_000, 'document open');
    await ownServer.close();
    expect((await c.closed).code).toBe(1001);
    expect(own.deps.documents.liveCount).toBe(0);
    own.close();
  });

  it('a refused client that never answers its close neither holds a shutdown nor lingers', async () => {
    const own = await makeTestApp();
    const ownServer = await startCollabServer(own);
    const silent = rawUpgrade(ownServer.port, `/collab/${MISSING_ID}`);
    await eventually(() => silent.received().includes('HTTP/1.1 101'), 5_000, 'upgraded');
    let cutOff = false;
    void silent.closed.then(() => (cutOff = true));
    await ownServer.hub.close();
    // The hub cut it off itself: it neither waited for the client nor left it to the HTTP server's deadline.
    await eventually(() => cutOff, 1_000, 'refused socket cut off by the shutdown');
    await ownServer.close();
    own.close();
  });
});

describe('group commit', () => {
  it('stores every update of several editors as its own row, in order, before it is sent to any other client', async () => {
    const id = await newDocument();
    const writers = [owner, editor, owner].map((u) => rawClient(server.port, `/collab/${id}?token=${u.token}`));
    const watcher = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await Promise.all([...writers, watcher].map((c) => c.opened));
    // The log is read at the moment the hub hands each update to a socket.
    const storedWhenSent: boolean[] = [];
    // Broadcasts go out framed once for all (sendFrame): the message is the frame's payload.
    const sendFrame = Connection.prototype.sendFrame;
    vi.spyOn(Connection.prototype, 'sendFrame').mockImplementation(function (this: Connection, frame: Buffer) {
      const length = frame[1]! & 0x7f;
      const update = updateIn(new Uint8Array(frame.subarray(length === 126 ? 4 : length === 127 ? 10 : 2)));
      if (update) storedWhenSent.push(storedData(id).some((stored) => stored.equals(update)));
      sendFrame.call(this, frame);
    });
    let delivered = 0;
    watcher.ws.on('message', (data: Buffer) => {
      if (updateIn(new Uint8Array(data))) delivered += 1;
    });

    const perWriter = 5;
    const sent = writers.map((_, k) => {
      const doc = new Y.Doc();
      const updates: Uint8Array[] = [];
      doc.on('update', (u: Uint8Array) => updates.push(u));
      for (let i = 0; i < perWriter; i++) doc.getText('content').insert(doc.getText('content').length, `w${k}.${i} `);
      return { clientId: doc.clientID, updates };
    });
    // Interleaved and all in one tick, so that they reach the hub in few reads and share batches.
    for (let i = 0; i < perWriter; i++) writers.forEach((w, k) => w.ws.send(syncUpdateMessage(sent[k]!.updates[i]!)));

    await eventually(() => delivered === writers.length * perWriter, 5_000, 'every update at the watcher');
    // Each update went to every other connection (the other writers and the watcher), every time
    // after its row was committed.
    const others = writers.length;
    expect(storedWhenSent).toHaveLength(writers.length * perWriter * others);
    expect(storedWhenSent.every(Boolean)).toBe(true);
    const rows = storedData(id);
    expect(rows).toHaveLength(writers.length * perWriter);
    for (const { clientId } of sent) {
      // Each writer's updates, in log order, are its edits in the order it sent them.
      const clocks = rows.map((row) => Y.decodeUpdate(row).structs[0]!.id).filter((s) => s.client === clientId).map((s) => s.clock);
      expect(clocks).toEqual([...clocks].sort((x, y) => x - y));
      expect(clocks).toHaveLength(perWriter);
    }
    const content = await contentOf(id);
    for (let k = 0; k < writers.length; k++) for (let i = 0; i < perWriter; i++) expect(content).toContain(`w${k}.${i} `);
    for (const c of [...writers, watcher]) c.ws.close();
  });

  it('a REST read right behind a live edit, in the same event-loop turn, shows it', async () => {
    const id = await newDocument('start');
    const w = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await w.opened;
    const before = storedCount(id);
    let read: Promise<string> | undefined;
    let storedWhenRequested = -1;
    behindEveryApply(t.deps.documents, () => {
      storedWhenRequested = storedCount(id);
      read ??= contentOf(id);
    });
    // Whatever the route reads from the store must be in the log by the time it has read it.
    const store = t.deps.documents;
    const getText = store.getText.bind(store);
    const reads: { text: string; stored: number }[] = [];
    vi.spyOn(store, 'getText').mockImplementation((documentId) => {
      const text = getText(documentId);
      if (documentId === id) reads.push({ text, stored: storedCount(id) });
      return text;
    });
    w.ws.send(syncUpdateMessage(insertUpdate('live ')));
    await eventually(() => read !== undefined, 5_000, 'edit applied');
    // The edit was still queued when the request began, and the response shows it.
    expect(storedWhenRequested).toBe(before);
    expect(await read).toContain('live ');
    expect(reads.filter((r) => r.text.includes('live '))).toEqual([{ text: await read, stored: before + 1 }]);
    w.ws.close();
  });

  it('a change that cannot be saved closes every connection of its room with 1011; the next connection loads the document from disk', async () => {
    const id = await newDocument('saved text');
    const other = await newDocument('another room');
    const clients = [owner, editor, viewer].map((u) => rawClient(server.port, `/collab/${id}?token=${u.token}`));
    const elsewhere = rawClient(server.port, `/collab/${other}?token=${owner.token}`);
    await Promise.all([...clients, elsewhere].map((c) => c.opened));
    const before = storedCount(id);
    const otherBefore = storedCount(other);
    const heal = failUpdateWrites(t.deps.sqlite, id);
    try {
      // Sent together, so that both usually share one batch: the other room's edit is still stored.
      clients[0]!.ws.send(syncUpdateMessage(insertUpdate('never saved ')));
      elsewhere.ws.send(syncUpdateMessage(insertUpdate('saved elsewhere ')));
      for (const c of clients) expect(await c.closed).toEqual({ code: 1011, reason: 'could not save the change' });
    } finally {
      heal();
    }
    expect(storedCount(id)).toBe(before);
    await eventually(async () => storedCount(other) === otherBefore + 1, 5_000, 'the other room stored its edit');
    expect(t.deps.documents.isLive(id)).toBe(false);
    expect(await contentOf(id)).toBe('saved text');
    expect(elsewhere.ws.readyState).toBe(elsewhere.ws.OPEN);

    const fresh = editorFor(id, editor);
    await synced(fresh);
    expect(fresh.text.toString()).toBe('saved text');
    fresh.text.insert(fresh.text.length, ' and more');
    await eventually(async () => (await contentOf(id)) === 'saved text and more', 5_000, 'edit after the failure stored');
    elsewhere.ws.close();
  });

  it('editors whose change could not be saved reconnect, resend it and converge once writes work again', async () => {
    const id = await newDocument('base');
    const a = editorFor(id, owner);
    const b = editorFor(id, editor);
    await Promise.all([synced(a), synced(b)]);
    const closeCodes = new Map<Editor, number[]>([
      [a, []],
      [b, []],
    ]);
    for (const e of [a, b]) e.provider.on('connection-close', (event) => event && closeCodes.get(e)!.push(event.code));
    const heal = failUpdateWrites(t.deps.sqlite, id);
    try {
      a.text.insert(a.text.length, ' + edit');
      await eventually(() => [a, b].every((e) => closeCodes.get(e)!.includes(1011)), 5_000, 'both editors closed with 1011');
      expect(await contentOf(id)).toBe('base');
    } finally {
      heal();
    }
    await eventually(() => [a, b].every((e) => e.text.toString() === 'base + edit'), 10_000, 'convergence after reconnecting');
    await eventually(async () => (await contentOf(id)) === 'base + edit', 5_000, 'resent edit stored');
  });

  it('graceful shutdown stores and broadcasts an edit queued in the same turn before closing with 1001', async () => {
    const own = await makeTestApp();
    const ownServer = await startCollabServer(own);
    try {
      const me = await own.newUser();
      const id = (await own.call('POST', '/api/documents', { as: me, body: { title: 'last words' } })).body.id as string;
      const stored = () => own.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, id)).get()!.n;
      const writer = rawClient(ownServer.port, `/collab/${id}?token=${me.token}`);
      const watcher = rawClient(ownServer.port, `/collab/${id}?token=${me.token}`);
      await Promise.all([writer.opened, watcher.opened]);
      let closing: Promise<void> | undefined;
      const storedAroundClose: number[] = [];
      behindEveryApply(own.deps.documents, () => {
        if (closing) return;
        storedAroundClose.push(stored());
        closing = ownServer.close();
        storedAroundClose.push(stored());
      });
      writer.ws.send(syncUpdateMessage(insertUpdate('said just before the end')));
      expect((await watcher.closed).code).toBe(1001);
      await closing;
      // Queued when the shutdown began, stored by its first step.
      expect(storedAroundClose).toEqual([0, 1]);
      const received = new Y.Doc();
      for (const update of watcher.messages.map(updateIn)) if (update) Y.applyUpdate(received, update);
      expect(received.getText('content').toString()).toBe('said just before the end');
      expect(own.deps.documents.liveCount).toBe(0);
      expect(own.deps.documents.getText(id)).toBe('said just before the end');
    } finally {
      await ownServer.close();
      own.close();
    }
  });
});

describe('awareness protocol over a raw socket', () => {
  it('answers a query-awareness message with the current states', async () => {
    const id = await newDocument();
    const a = editorFor(id, owner);
    await synced(a);
    a.provider.awareness.setLocalStateField('user', { name: 'Grace' });
    const raw = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await raw.opened;
    await eventually(() => raw.messages.some((m) => m[0] === 1), 5_000, 'awareness on connect');
    const message = raw.messages.find((m) => m[0] === 1)!;
    const decoder = decoding.createDecoder(message);
    decoding.readVarUint(decoder);
    const remote = new awarenessProtocol.Awareness(new Y.Doc());
    awarenessProtocol.applyAwarenessUpdate(remote, decoding.readVarUint8Array(decoder), null);
    expect(remote.getStates().get(a.doc.clientID)).toEqual({ user: { name: 'Grace' } });
    remote.destroy();
    raw.ws.close();
  });

  /** An awareness message naming these clients with these states (its last `cut` bytes left off). */
  const awarenessFrame = (entries: AwarenessEntry[], cut = 0) => {
    const bytes = encodeAwarenessEntries(entries);
    const message = encoding.createEncoder();
    encoding.writeVarUint(message, 1);
    encoding.writeVarUint8Array(message, bytes.subarray(0, bytes.length - cut));
    return encoding.toUint8Array(message);
  };

  it("a connection cannot rename or remove another connection's presence", async () => {
    const id = await newDocument();
    const ada = editorFor(id, owner);
    const bob = editorFor(id, editor);
    await Promise.all([synced(ada), synced(bob)]);
    ada.provider.awareness.setLocalStateField('user', { name: 'Ada' });
    const adaId = ada.doc.clientID;
    await eventually(() => bob.provider.awareness.getStates().get(adaId)?.user?.name === 'Ada', 5_000, 'Ada present');
    const clock = ada.provider.awareness.meta.get(adaId)!.clock;

    const mallory = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await mallory.opened;
    mallory.ws.send(awarenessFrame([{ id: adaId, clock: clock + 1, state: '{"user":{"name":"Mallory pretending"}}' }]));
    mallory.ws.send(awarenessFrame([{ id: adaId, clock: clock + 2, state: 'null' }]));
    // Mallory's own presence goes through, after whatever the two above could have done.
    mallory.ws.send(awarenessFrame([{ id: 4242, clock: 1, state: '{"user":{"name":"Mallory"}}' }]));
    await eventually(() => bob.provider.awareness.getStates().get(4242)?.user?.name === 'Mallory', 5_000, "Mallory's own presence");
    expect(bob.provider.awareness.getStates().get(adaId)).toEqual({ user: { name: 'Ada' } });
    expect(ada.provider.awareness.getLocalState()).toEqual({ user: { name: 'Ada' } });
    mallory.ws.close();
    ada.provider.destroy();
    bob.provider.destroy();
  });

  it('removes a presence not renewed for 30 s (the hub-wide ticker) and tells the room', async () => {
    const id = await newDocument();
    const bob = editorFor(id, editor);
    await synced(bob);
    const silent = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await silent.opened;
    silent.ws.send(awarenessFrame([{ id: 5151, clock: 1, state: '{"user":{"name":"Silent"}}' }]));
    await eventually(() => bob.provider.awareness.getStates().get(5151)?.user?.name === 'Silent', 5_000, 'present');
    t.clock.advance(31_000);
    try {
      // Bob's own state is renewed now; the hub's one ticker looks every 3 s.
      bob.provider.awareness.setLocalStateField('user', { name: 'Bob' });
      await eventually(() => !bob.provider.awareness.getStates().has(5151), 10_000, 'silent presence timed out');
      expect(bob.provider.awareness.getLocalState()).toEqual({ user: { name: 'Bob' } });
    } finally {
      t.clock.advance(-31_000);
    }
    silent.ws.close();
    bob.provider.destroy();
  });

  it('bounds what one connection may put in the room: state size, client ids, and nothing from a malformed message', async () => {
    const id = await newDocument();
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const others = () => [...watcher.provider.awareness.getStates().keys()].filter((k) => k !== watcher.doc.clientID);

    // A state of 100 KiB (presence is a name and a cursor): 1009, and nobody sees it.
    const big = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await big.opened;
    big.ws.send(awarenessFrame([{ id: 9001, clock: 1, state: JSON.stringify({ blob: 'x'.repeat(100 * 1024) }) }]));
    expect((await big.closed).code).toBe(1009);

    // Seventeen client ids from one connection: 1008; the sixteen before stay its own and go with it.
    const many = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await many.opened;
    many.ws.send(awarenessFrame(Array.from({ length: 16 }, (_, i) => ({ id: 8000 + i, clock: 1, state: '{"user":{"name":"v"}}' }))));
    await eventually(() => others().length === 16, 5_000, 'sixteen presences');
    many.ws.send(awarenessFrame([{ id: 8100, clock: 1, state: '{"user":{"name":"one too many"}}' }]));
    expect((await many.closed).code).toBe(1008);
    await eventually(() => others().length === 0, 5_000, 'its presences removed with it');

    // A malformed message whose first entry is whole: 1007, and that entry is not applied (no ghost).
    const broken = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await broken.opened;
    broken.ws.send(awarenessFrame([{ id: 7000, clock: 1, state: '{"user":{"name":"GHOST"}}' }, { id: 7001, clock: 1, state: '{}' }], 1));
    expect((await broken.closed).code).toBe(1007);
    // A presence sent after it reaches the watcher after anything the broken one could have caused.
    const probe = rawClient(server.port, `/collab/${id}?token=${viewer.token}`);
    await probe.opened;
    probe.ws.send(awarenessFrame([{ id: 7500, clock: 1, state: '{"user":{"name":"probe"}}' }]));
    await eventually(() => others().includes(7500), 5_000, 'the probe presence');
    expect(others()).not.toContain(7000);
    probe.ws.close();
    watcher.provider.destroy();
  });
});

describe('health reports collab', () => {
  it('has collab true in health and features while the hub runs, and false once it shuts down', async () => {
    const health = await t.call('GET', '/api/health');
    expect(health.body.checks.collab).toBe('ok');
    const features = await t.call('GET', '/api/system/features', { as: owner });
    expect(features.body.features.collab).toBe(true);

    const own = await makeTestApp();
    try {
      expect((await own.call('GET', '/api/system/features', { as: own.admin })).body.features.collab).toBe(false);
      const ownServer = await startCollabServer(own);
      expect((await own.call('GET', '/api/system/features', { as: own.admin })).body.features.collab).toBe(true);
      await ownServer.close();
      expect((await own.call('GET', '/api/system/features', { as: own.admin })).body.features.collab).toBe(false);
      expect((await own.call('GET', '/api/health')).body.checks.collab).not.toBe('ok');
    } finally {
      own.close();
    }
  });
});
