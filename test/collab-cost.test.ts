// What one connection's updates may cost the server (collab/hub/connection.ts, update-check.ts):
// counted before anything is decoded, refused past the caps, charged to their sender, and applied
// in slices when large. Real sockets and stock y-websocket clients against the real server.
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { isEmptyUpdate, scanUpdate, UpdatePass } from '../collab/update-pass';
import { documentUpdates } from '../db/schema';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { sharedDocument, storedUpdateCount } from './helpers/documents';
import { connectEditor, editorsOf, eventually, rawClient, startCollabServer, synced, type CollabServer, type Editor } from './helpers/collab';
import { gcFlood, syncStep1Message, syncUpdateMessage, typedBackwards } from './helpers/yjs-attacks';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let writer: TestUser;
let reader: TestUser;
const editors = editorsOf(() => server.port);

const newDocument = (content = ''): Promise<string> =>
  sharedDocument(t, owner, [
    [writer, 'editor'],
    [reader, 'viewer'],
  ], content, 'Costly');

const storedRows = (documentId: string) => storedUpdateCount(t, documentId);

const contentOf = async (documentId: string) =>
  (await t.call('GET', `/api/documents/${documentId}?include=content`, { as: owner })).body.content as string;

beforeAll(async () => {
  t = await makeTestApp();
  server = await startCollabServer(t, { pingIntervalMs: 60_000 });
  owner = await t.newUser();
  writer = await t.newUser();
  reader = await t.newUser();
});

afterAll(async () => {
  await server?.close();
  t?.close();
});

describe('the cost of an update is bounded before it is decoded', () => {
  it('refuses the GC-struct flood (590,000 structs, 1.18 MB) with 1007 and stores nothing; an editor beside it goes on', async () => {
    const id = await newDocument('hello');
    const watcher = editors.open(id, owner);
    await synced(watcher);
    const rows = storedRows(id);
    const flood = gcFlood(590_000);
    expect(flood.byteLength).toBe(1_180_008);
    const attacker = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
    await attacker.opened;
    attacker.ws.send(syncUpdateMessage(flood));
    const closed = await attacker.closed;
    expect(closed.code).toBe(1007);
    expect(storedRows(id)).toBe(rows);
    watcher.text.insert(5, ' world');
    await eventually(async () => (await contentOf(id)) === 'hello world', 5_000, 'the editor beside it edits on');
  });

  it("refuses a viewer's update with permission-denied from its counts alone; the connection stays", async () => {
    const id = await newDocument('read me');
    const rows = storedRows(id);
    const viewer = rawClient(server.port, `/collab/${id}?token=${reader.token}`);
    await viewer.opened;
    // The flood, then the same counts over bytes that are no structs at all: neither is read past its counts.
    const garbage = new Uint8Array([1, 0xb0, 0x81, 0x24, 0x01, 0x00, 0xff, 0xff, 0xff]);
    expect(scanUpdate(garbage)).toBeNull();
    for (const bytes of [gcFlood(590_000), garbage]) {
      const before = viewer.messages.length;
      viewer.ws.send(syncUpdateMessage(bytes));
      await eventually(() => viewer.messages.slice(before).some((m) => m[0] === 2), 5_000, 'permission denied');
    }
    // An empty answer to our sync step 1 is not an edit, and is not refused.
    expect(isEmptyUpdate(Y.encodeStateAsUpdate(new Y.Doc()))).toBe(true);
    expect(viewer.ws.readyState).toBe(viewer.ws.OPEN);
    expect(storedRows(id)).toBe(rows);
    viewer.ws.close();
  });

  it('closes a connection that keeps sending expensive updates (1008), and the same user reconnecting gets no fresh allowance', async () => {
    const tight = await startCollabServer(t, { pingIntervalMs: 60_000, workBurst: 50_000, workPerSecond: 100 });
    try {
      const id = await newDocument();
      const author = new Y.Doc();
      const sender = rawClient(tight.port, `/collab/${id}?token=${writer.token}`);
      await sender.opened;
      for (let i = 0; i < 3; i++) sender.ws.send(syncUpdateMessage(typedBackwards(author, 15_000, String(i))));
      await eventually(async () => (await contentOf(id)).length === 45_000, 10_000, 'three expensive updates stored');
      sender.ws.send(syncUpdateMessage(typedBackwards(author, 15_000, 'z')));
      expect((await sender.closed).code).toBe(1008);
      expect((await contentOf(id)).includes('z')).toBe(false);

      const again = rawClient(tight.port, `/collab/${id}?token=${writer.token}`);
      await again.opened;
      again.ws.send(syncUpdateMessage(typedBackwards(author, 15_000, 'y')));
      expect((await again.closed).code).toBe(1008);
      // Typing is cheap, and goes on once the allowance refills.
      t.clock.advance(10_000);
      const typist = editors.open(id, writer);
      await synced(typist);
      typist.text.insert(0, 'typed ');
      await eventually(async () => (await contentOf(id)).startsWith('typed '), 5_000, 'typing stored');
      editors.close(typist);
    } finally {
      await tight.close();
    }
  });
});

describe('large updates are applied in slices', () => {
  it('cuts an update into slices that make the same document, whatever the kinds of struct', () => {
    const a = new Y.Doc();
    const b = new Y.Doc();
    typedBackwards(a, 3_000, 'é');
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    typedBackwards(b, 2_000, '😀');
    a.getText('content').delete(10, 2_500);
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    b.getMap('meta').set('k', [1, { x: 'y' }]);
    const whole = Y.encodeStateAsUpdate(b);
    const pass = new UpdatePass(whole, 500);
    expect(pass.advance()).toBe(true);
    expect(pass.sliceCount).toBeGreaterThan(10);
    const slices = Array.from({ length: pass.sliceCount }, (_, i) => pass.pieces(i));
    for (const pieces of slices) expect(scanUpdate(pass.encode(pieces))!.work).toBeLessThanOrEqual(500);
    const rebuilt = new Y.Doc();
    // In order, as the hub does: a slice that needs a later one is put back, one of several
    // clients' pieces split into its pieces.
    let pending = slices;
    for (let round = 0; pending.length > 0 && round < 100; round++) {
      pending = pending.flatMap((pieces) => {
        const slice = pass.encode(pieces);
        const probe = new Y.Doc();
        Y.applyUpdate(probe, Y.encodeStateAsUpdate(rebuilt));
        Y.applyUpdate(probe, slice);
        if (probe.store.pendingStructs || probe.store.pendingDs) return pieces.length > 1 ? pieces.map((piece) => [piece]) : [pieces];
        Y.applyUpdate(rebuilt, slice);
        return [];
      });
    }
    expect(pending).toHaveLength(0);
    expect(rebuilt.getText('content').toString()).toBe(b.getText('content').toString());
    expect(rebuilt.getMap('meta').toJSON()).toEqual(b.getMap('meta').toJSON());
    expect(Y.encodeStateVector(rebuilt)).toEqual(Y.encodeStateVector(b));
  });

  it("takes a large update of two clients' edits whole, slice by slice; stock clients receive it and the next edit follows it", async () => {
    const id = await newDocument('start');
    const watcher = editors.open(id, owner);
    await synced(watcher);
    // Two offline clients' work, the second's typed inside the first's: sent by one connection.
    const a = new Y.Doc();
    const b = new Y.Doc();
    Y.applyUpdate(a, t.deps.documents.encodeState(id));
    const serverState = Y.encodeStateVector(a);
    typedBackwards(a, 6_000, 'a');
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    for (let i = 0; i < 3_000; i++) b.getText('content').insert(2 * i + 1, 'b');
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    a.getText('content').delete(0, 100);
    const offline = Y.encodeStateAsUpdate(a, serverState);
    expect(scanUpdate(offline)!.work).toBeGreaterThan(4 * 2_000);
    const expected = a.getText('content').toString();

    const sender = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
    await sender.opened;
    sender.ws.send(syncUpdateMessage(offline));
    // Sent right behind it: it waits for the slices, and builds on them.
    const beforeNext = Y.encodeStateVector(a);
    a.getText('content').insert(0, 'next ');
    sender.ws.send(syncUpdateMessage(Y.encodeStateAsUpdate(a, beforeNext)));
    const final = a.getText('content').toString();
    await eventually(() => watcher.text.toString() === final, 10_000, 'the watcher has it all');
    expect(await contentOf(id)).toBe(final);
    expect(final).toBe(`next ${expected}`);
    expect(sender.ws.readyState).toBe(sender.ws.OPEN);
    sender.ws.close();
  });
});

describe('the attack of issue 41: large updates in a row from one member, near the size limit', () => {
  it('stores every accepted edit before anyone sees it, in order, refuses the rest whole, and serves another document meanwhile', async () => {
    // A small limit, and every document's whole-body work in the worker threads: the document is
    // measured by a worker's fold when the estimate nears the limit, the update waiting meanwhile.
    const small = await makeTestApp({ config: { documentMaxBytes: 200 * 1024 }, offloadMinBytes: 0 });
    const smallServer = await startCollabServer(small, { pingIntervalMs: 60_000 });
    const open: Editor[] = [];
    try {
      const [attackerUser, other] = [await small.newUser(), await small.newUser()];
      const attacked = (await small.call('POST', '/api/documents', { as: attackerUser, body: { title: 'Mine', content: '' } })).body.id as string;
      const elsewhere = (await small.call('POST', '/api/documents', { as: other, body: { title: 'Elsewhere', content: 'calm' } })).body.id as string;
      const watcher = connectEditor(smallServer.port, attacked, attackerUser.token);
      const bystander = connectEditor(smallServer.port, elsewhere, other.token);
      open.push(watcher, bystander);
      await Promise.all([synced(watcher), synced(bystander)]);

      const author = new Y.Doc();
      const attacker = rawClient(smallServer.port, `/collab/${attacked}?token=${attackerUser.token}`);
      await attacker.opened;
      const outcomes: string[] = [];
      for (let round = 0; round < 10; round++) {
        const before = attacker.messages.length;
        attacker.ws.send(syncUpdateMessage(typedBackwards(author, 6_000, String(round))));
        // A sync step 1 behind it is answered once the update was taken (or refused: permission denied).
        attacker.ws.send(syncStep1Message(Y.encodeStateVector(author)));
        await eventually(() => attacker.messages.slice(before).some((m) => (m[0] === 0 && m[1] === 1) || m[0] === 2), 20_000, `round ${round} answered`);
        outcomes.push(attacker.messages.slice(before).some((m) => m[0] === 2) ? 'refused' : 'taken');
        // The other document's editor is served between the attacker's updates.
        bystander.text.insert(0, String(round));
      }
      expect(attacker.ws.readyState).toBe(attacker.ws.OPEN);
      expect(outcomes[0]).toBe('taken');
      expect(outcomes.at(-1)).toBe('refused');
      // Taken whole, then refused whole from the first refusal on (a refused slice ends its update).
      const taken = outcomes.indexOf('refused');
      expect(outcomes.slice(taken).every((o) => o === 'refused')).toBe(true);

      const stored = async (id: string) => (await small.call('GET', `/api/documents/${id}?include=content`, { as: attackerUser })).body.content as string;
      await eventually(async () => watcher.text.toString() === (await stored(attacked)), 10_000, 'the watcher has what is stored');
      const content = await stored(attacked);
      // Every taken round whole, later rounds before earlier (typed at the start), each round's
      // characters together; of the refused round, at most the slices before its refusal.
      const runs = content.match(/(.)\1*/g) ?? [];
      const rounds = runs.map((run) => Number(run[0]));
      expect(rounds).toEqual([...rounds].sort((a, b) => b - a));
      expect(new Set(rounds).size).toBe(runs.length);
      for (let round = 0; round < taken; round++) expect(runs.find((run) => run[0] === String(round))).toHaveLength(6_000);
      expect(rounds.every((round) => round <= taken)).toBe(true);
      expect(content.length).toBeLessThan(200 * 1024);
      await eventually(async () => (await small.call('GET', `/api/documents/${elsewhere}?include=content`, { as: other })).body.content === '9876543210calm', 10_000, 'the bystander stored');
      attacker.ws.close();
    } finally {
      for (const editor of open) editor.destroy();
      await smallServer.close();
      small.close();
    }
  });
});

