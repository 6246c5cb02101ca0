// Hostile Yjs updates (issue 21): no update may be accepted that leaves a document unencodable or
// unloadable. Each is sent by an editor over a raw socket to the real server while a stock
// y-websocket client holds the document open; the sender is closed with 1007, nothing is stored or
// broadcast, the document still opens and syncs for a new stock client, still encodes (a named
// version), and a fresh store reloads it from SQLite.
import { count, eq } from 'drizzle-orm';
import * as encoding from 'lib0/encoding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD, DocumentStore, InvalidUpdateError } from '../collab/store';
import { checkUpdate, MAX_CLOCK, UpdateProblem } from '../collab/update-check';
import { MAX_UPDATE_DELETE_RANGES, MAX_UPDATE_PLACEHOLDERS, MAX_UPDATE_STRUCTS, scanUpdate, tooMuch } from '../collab/update-pass';
import { documentStates, documentUpdates } from '../db/schema';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { share } from './helpers/documents';
import {
  editorsOf,
  eventually,
  rawClient,
  startCollabServer,
  synced,
  syncUpdateMessage,
  type CollabServer,
  type Editor,
} from './helpers/collab';

// The two updates of the incident (each sent as a sync update message, `[0, 2, length, update]`):
// each alone was parked as pending, together they made Y.encodeStateAsUpdate throw "Integer out of Range".
const INCIDENT = [
  '0102a4e4edfb0412030101610301020388a4e4edfb12ffffffffffffff7f027701797c4060000000',
  '0102a4edfb0412030101610301020388a4edfb0412027701797c4060000000',
].map((hex) => new Uint8Array(Buffer.from(hex, 'hex')));

// ---- hand-made updates (Yjs's V1 encoding) ----

type Id = [client: number, clock: number];
type Content = { string: string } | { deleted: number } | { any: unknown[] };
type Struct =
  | { gc: number }
  | { skip: number }
  | { origin?: Id; right?: Id; parent?: string | Id; content: Content };
interface Block {
  client: number;
  clock: number;
  structs: Struct[];
}

/** An update of these client blocks and deletions, written exactly as given (no checks). */
function update(blocks: Block[], deletions: Array<{ client: number; ranges: Array<[clock: number, len: number]> }> = []): Uint8Array {
  const e = encoding.createEncoder();
  const id = ([client, clock]: Id) => {
    encoding.writeVarUint(e, client);
    encoding.writeVarUint(e, clock);
  };
  encoding.writeVarUint(e, blocks.length);
  for (const block of blocks) {
    encoding.writeVarUint(e, block.structs.length);
    encoding.writeVarUint(e, block.client);
    encoding.writeVarUint(e, block.clock);
    for (const s of block.structs) {
      if ('gc' in s) {
        encoding.writeUint8(e, 0);
        encoding.writeVarUint(e, s.gc);
      } else if ('skip' in s) {
        encoding.writeUint8(e, 10);
        encoding.writeVarUint(e, s.skip);
      } else {
        const ref = 'string' in s.content ? 4 : 'deleted' in s.content ? 1 : 8;
        encoding.writeUint8(e, ref | (s.origin ? 0x80 : 0) | (s.right ? 0x40 : 0));
        if (s.origin) id(s.origin);
        if (s.right) id(s.right);
        if (!s.origin && !s.right) {
          const parent = s.parent ?? CONTENT_FIELD;
          encoding.writeVarUint(e, typeof parent === 'string' ? 1 : 0);
          if (typeof parent === 'string') encoding.writeVarString(e, parent);
          else id(parent);
        }
        if ('string' in s.content) encoding.writeVarString(e, s.content.string);
        else if ('deleted' in s.content) encoding.writeVarUint(e, s.content.deleted);
        else {
          encoding.writeVarUint(e, s.content.any.length);
          for (const v of s.content.any) encoding.writeAny(e, v as never);
        }
      }
    }
  }
  encoding.writeVarUint(e, deletions.length);
  for (const { client, ranges } of deletions) {
    encoding.writeVarUint(e, client);
    encoding.writeVarUint(e, ranges.length);
    for (const [clock, len] of ranges) {
      encoding.writeVarUint(e, clock);
      encoding.writeVarUint(e, len);
    }
  }
  return encoding.toUint8Array(e);
}

const text = (s: string): Struct => ({ content: { string: s } });
const FRESH = 4242; // a client id no document of these tests has seen
const OTHER = 7777;
const deep = (depth: number): unknown => (depth === 0 ? 1 : [deep(depth - 1)]);

/**
 * The hostile family, for a document whose text was written by `author` (clocks 0..len-1). Each is
 * something Yjs decodes but that must not be let in.
 */
function hostileFamily(author: number, len: number): Array<[string, Uint8Array]> {
  const last: Id = [author, len - 1];
  return [
    ['a clock past 2^53 (as in the incident: 0xff…7f)', rawStruct((e) => encoding.writeUint8Array(e, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])), 'x')],
    ['a clock past the encodable range, after its client\'s own run', update([{ client: FRESH, clock: 0, structs: [{ gc: 2 ** 52 }, text('x')] }])],
    ['a struct that starts far past its client\'s clock', update([{ client: author, clock: 2 ** 40, structs: [{ origin: last, content: { string: 'x' } }] }])],
    ['a client id past 2^53', update([{ client: 2 ** 60, clock: 0, structs: [text('x')] }])],
    ['an origin whose client id is past 2^53', update([{ client: FRESH, clock: 0, structs: [{ origin: [2 ** 60, 0], content: { string: 'x' } }] }])],
    ['an origin whose clock is past 2^53', update([{ client: FRESH, clock: 0, structs: [{ origin: [author, 2 ** 55], content: { string: 'x' } }] }])],
    ['a deleted run of length 2^50', update([{ client: FRESH, clock: 0, structs: [{ origin: last, content: { deleted: 2 ** 50 } }] }])],
    ['a run of no length', update([{ client: FRESH, clock: 0, structs: [{ origin: last, content: { string: '' } }] }])],
    ['a skip of length 2^52 before a struct', update([{ client: FRESH, clock: 0, structs: [{ skip: 2 ** 52 }, { origin: last, content: { string: 'x' } }] }])],
    ['a deletion of a client the document does not know', update([], [{ client: OTHER, ranges: [[0, 3]] }])],
    ['a deletion past what the document holds', update([], [{ client: author, ranges: [[len - 1, 5]] }])],
    ['a deletion of no length at the end of the document', update([], [{ client: author, ranges: [[len, 0]] }])],
    ['a deletion with a clock past 2^53', update([], [{ client: author, ranges: [[2 ** 55, 1]] }])],
    ['a deletion of length 2^52', update([], [{ client: author, ranges: [[0, 2 ** 52]] }])],
    ['an origin the document lacks', update([{ client: FRESH, clock: 0, structs: [{ origin: [OTHER, 5], content: { string: 'x' } }] }])],
    ['a right origin past the document\'s clock', update([{ client: FRESH, clock: 0, structs: [{ right: [author, len + 10], content: { string: 'x' } }] }])],
    ['a parent that does not exist', update([{ client: FRESH, clock: 0, structs: [{ parent: [OTHER, 0], content: { string: 'x' } }] }])],
    ['an origin at or after the struct itself', update([{ client: FRESH, clock: 0, structs: [text('ab'), { origin: [FRESH, 5], content: { string: 'x' } }] }])],
    ['a struct that continues a run the document lacks', update([{ client: FRESH, clock: 3, structs: [{ origin: last, content: { string: 'x' } }] }])],
    [
      'two clients that wait for each other',
      update([
        { client: FRESH, clock: 0, structs: [{ origin: [OTHER, 0], content: { string: 'x' } }] },
        { client: OTHER, clock: 0, structs: [{ origin: [FRESH, 0], content: { string: 'y' } }] },
      ]),
    ],
    [
      'one client written twice',
      update([
        { client: FRESH, clock: 0, structs: [{ origin: last, content: { string: 'x' } }] },
        { client: FRESH, clock: 1, structs: [{ origin: [FRESH, 0], content: { string: 'y' } }] },
      ]),
    ],
    ['a value nested 100 deep', update([{ client: FRESH, clock: 0, structs: [{ origin: last, content: { any: [deep(100)] } }] }])],
    // Lengths the bytes do not hold: refused as not an update at all.
    ['an array claiming 2^40 entries', rawStruct((e) => encoding.writeVarUint(e, 0), { anyCount: 2 ** 40 })],
    ['a string claiming 2^40 bytes', rawStruct((e) => encoding.writeVarUint(e, 0), { stringBytes: 2 ** 40 })],
  ];
}

/** One struct of client FRESH at the root text, its clock written by `clock`, holding 'x' or a lying length. */
function rawStruct(clock: (e: encoding.Encoder) => void, content: string | { anyCount: number } | { stringBytes: number }): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, 1); // clients
  encoding.writeVarUint(e, 1); // structs
  encoding.writeVarUint(e, FRESH);
  clock(e);
  encoding.writeUint8(e, typeof content === 'object' && 'anyCount' in content ? 8 : 4);
  encoding.writeVarUint(e, 1); // parent: a root type, by name
  encoding.writeVarString(e, CONTENT_FIELD);
  if (typeof content === 'string') encoding.writeVarString(e, content);
  else if ('anyCount' in content) {
    encoding.writeVarUint(e, content.anyCount);
    encoding.writeAny(e, 'only one');
  } else {
    encoding.writeVarUint(e, content.stringBytes);
    encoding.writeUint8Array(e, new Uint8Array([0x78, 0x78]));
  }
  encoding.writeVarUint(e, 0); // deletions
  return encoding.toUint8Array(e);
}

/** The first client id of a document's stored text, and its length: what hostile updates refer to. */
function authorOf(t: TestApp, documentId: string): { client: number; len: number } {
  const state = t.deps.documents.encodeState(documentId);
  const doc = new Y.Doc();
  Y.applyUpdate(doc, state);
  const client = [...Y.decodeStateVector(Y.encodeStateVector(doc)).keys()][0]!;
  const len = Y.getState(doc.store, client);
  doc.destroy();
  return { client, len };
}

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let writer: TestUser;
const editors = editorsOf(() => server.port);
const editorFor = (documentId: string, user: TestUser): Editor => editors.open(documentId, user);

async function newDocument(content: string): Promise<string> {
  const res = await t.call('POST', '/api/documents', { as: owner, body: { title: 'Target', content } });
  expect(res.status).toBe(201);
  await share(t, owner, res.body.id, { user: writer }, 'editor');
  return res.body.id as string;
}

const storedRows = (documentId: string) =>
  t.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).get()!.n;

/** Sends `bytes` as an editor's sync update over a raw socket; resolves with the close code. */
async function sendAsEditor(documentId: string, bytes: Uint8Array): Promise<number> {
  const raw = rawClient(server.port, `/collab/${documentId}?token=${writer.token}`);
  await raw.opened;
  raw.ws.send(syncUpdateMessage(bytes));
  const closed = await Promise.race([raw.closed, new Promise<{ code: number }>((r) => setTimeout(() => r({ code: -1 }), 3_000))]);
  raw.ws.terminate();
  return closed.code;
}

/** The document opens and syncs for a new stock client with `expected`, encodes, and reloads from SQLite. */
async function expectIntact(documentId: string, expected: string, where: string): Promise<void> {
  const fresh = editorFor(documentId, owner);
  await synced(fresh);
  expect(fresh.text.toString(), where).toBe(expected);
  expect(fresh.doc.store.pendingStructs, where).toBeNull();
  editors.close(fresh);
  const version = await t.call('POST', `/api/documents/${documentId}/versions`, { as: owner, body: { name: where.slice(0, 100) } });
  expect(version.status, `${where}: ${version.text}`).toBe(201);
  const reloaded = new DocumentStore({ db: t.db, clock: t.clock });
  expect(reloaded.getText(documentId), where).toBe(expected);
  expect(() => reloaded.encodeState(documentId), where).not.toThrow();
}

beforeAll(async () => {
  t = await makeTestApp();
  server = await startCollabServer(t, { pingIntervalMs: 60_000, messagesPerSecond: 1_000, messageBurst: 10_000 });
  owner = await t.newUser();
  writer = await t.newUser();
});

afterAll(async () => {
  await server?.close();
  t?.close();
});

describe('the incident', () => {
  it('refuses both crafted updates (1007, nothing stored) while the document is open; it keeps opening, syncing, versioning and loading', async () => {
    const id = await newDocument('hello world');
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const rows = storedRows(id);
    for (const bytes of INCIDENT) {
      const message = syncUpdateMessage(bytes);
      expect([...message.slice(0, 3)]).toEqual([0, 2, bytes.byteLength]);
      const raw = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
      await raw.opened;
      raw.ws.send(message);
      expect((await raw.closed).code).toBe(1007);
    }
    expect(storedRows(id)).toBe(rows);
    expect(watcher.provider.wsconnected).toBe(true);
    expect(watcher.doc.store.pendingStructs).toBeNull();
    // A new client opens it at once (it used to be closed with 1007 and retry forever).
    await expectIntact(id, 'hello world', 'after the incident');
    watcher.text.insert(watcher.text.length, '!');
    await eventually(async () => (await t.call('GET', `/api/documents/${id}?include=content`, { as: owner })).body.content === 'hello world!', 5_000, 'edits go on');
  });

  it('the store refuses each alone: pending changes are never taken in', () => {
    for (const bytes of INCIDENT) {
      const doc = new Y.Doc();
      doc.getText(CONTENT_FIELD).insert(0, 'x');
      const verdict = checkUpdate(bytes, doc);
      expect(verdict).toBeInstanceOf(UpdateProblem);
      expect((verdict as UpdateProblem).reason).toMatch(/does not hold|out of range/);
    }
  });
});

describe('a family of hostile updates', () => {
  it('closes the sender with 1007 for each, stores and broadcasts nothing, and the document stays whole', async () => {
    const id = await newDocument('hello world');
    const { client, len } = authorOf(t, id);
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const broadcast: Uint8Array[] = [];
    watcher.doc.on('update', (u: Uint8Array) => broadcast.push(u));
    const rows = storedRows(id);
    for (const [name, bytes] of hostileFamily(client, len)) {
      expect(await sendAsEditor(id, bytes), name).toBe(1007);
      expect(storedRows(id), name).toBe(rows);
    }
    expect(broadcast).toHaveLength(0);
    expect(watcher.text.toString()).toBe('hello world');
    expect(watcher.provider.wsconnected).toBe(true);
    await expectIntact(id, 'hello world', 'after the family');
  });

  it('several at once, sent by several sockets while editors type, leave only the real edits', async () => {
    const id = await newDocument('base');
    const { client, len } = authorOf(t, id);
    const a = editorFor(id, owner);
    const b = editorFor(id, writer);
    await Promise.all([synced(a), synced(b)]);
    const family = hostileFamily(client, len);
    const codes = await Promise.all(
      family.map(async ([, bytes], i) => {
        if (i % 2 === 0) a.text.insert(a.text.length, '1');
        else b.text.insert(0, '2');
        return sendAsEditor(id, bytes);
      }),
    );
    expect(codes.every((c) => c === 1007)).toBe(true);
    await eventually(() => a.text.toString() === b.text.toString(), 5_000, 'converged');
    const expected = a.text.toString();
    expect(expected.replace(/[12]/g, '')).toBe('base');
    expect(expected.length).toBe('base'.length + family.length);
    await eventually(async () => (await t.call('GET', `/api/documents/${id}?include=content`, { as: owner })).body.content === expected, 5_000, 'stored');
    await expectIntact(id, expected, 'after concurrent hostility');
  });

  it('randomly damaged real updates are either taken whole or refused; the document always encodes and reloads', async () => {
    const store = t.deps.documents;
    const id = await newDocument('');
    let seed = 21;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const author = new Y.Doc();
    const authored: Uint8Array[] = [];
    author.on('update', (u: Uint8Array) => authored.push(u));
    const body = author.getText(CONTENT_FIELD);
    let refused = 0;
    store.acquire(id); // held, as the hub holds it: no reload per update
    for (let i = 0; i < 400; i++) {
      body.insert(Math.floor(random() * (body.length + 1)), `w${i} `);
      if (i % 3 === 0 && body.length > 4) body.delete(Math.floor(random() * (body.length - 2)), 2);
      const real = Y.mergeUpdates(authored.splice(0));
      // Every third one goes through intact, the others with a few bytes damaged.
      const damaged = real.slice();
      if (i % 3 !== 0) {
        for (let k = 0; k < 1 + Math.floor(random() * 3); k++) {
          damaged[Math.floor(random() * damaged.length)] = random() < 0.5 ? 0xff : Math.floor(random() * 256);
        }
      }
      try {
        store.applyUpdate(id, damaged, owner.user.id);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidUpdateError);
        refused++;
      }
      // The author's own changes still reach the document, as its client's next sync would bring them.
      store.applyUpdate(id, Y.encodeStateAsUpdate(author, store.encodeStateVector(id)), owner.user.id);
      expect(() => store.encodeState(id)).not.toThrow();
    }
    expect(refused).toBeGreaterThan(50);
    const expected = store.getText(id);
    store.release(id);
    const reloaded = new DocumentStore({ db: t.db, clock: t.clock });
    expect(reloaded.getText(id)).toBe(expected);
    const copy = new Y.Doc();
    Y.applyUpdate(copy, reloaded.encodeState(id));
    expect(copy.store.pendingStructs).toBeNull();
    expect(copy.getText(CONTENT_FIELD).toString()).toBe(expected);
  });
});

describe('updates holding too many structs or deleted ranges', () => {
  const deletions = (client: number, n: number) => update([], [{ client, ranges: Array.from({ length: n }, (): [number, number] => [0, 1]) }]);
  const structs = (n: number) => update([{ client: FRESH, clock: 0, structs: Array.from({ length: n }, () => ({ gc: 1 })) }]);
  /** Deleted items, each after the one before. */
  const items = (n: number) =>
    update([{ client: FRESH, clock: 0, structs: Array.from({ length: n }, (_, i) => ({ origin: i > 0 ? ([FRESH, i - 1] as Id) : undefined, content: { deleted: 1 } })) }]);

  it('refuses a message of a million delete ranges, and one of too many structs (1007, nothing stored); a stock client opens the document after', async () => {
    const id = await newDocument('hello world');
    const { client } = authorOf(t, id);
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const rows = storedRows(id);
    const cases: Array<[string, Uint8Array]> = [
      ['a million delete ranges', deletions(client, 1_000_000)],
      ['one struct more than MAX_UPDATE_STRUCTS', structs(MAX_UPDATE_STRUCTS + 1)],
    ];
    for (const [name, bytes] of cases) {
      expect(bytes.byteLength, name).toBeLessThan(5 * 1024 * 1024);
      expect(await sendAsEditor(id, bytes), name).toBe(1007);
      expect(storedRows(id), name).toBe(rows);
    }
    expect(watcher.text.toString()).toBe('hello world');
    expect(watcher.provider.wsconnected).toBe(true);
    await expectIntact(id, 'hello world', 'after updates holding too many entries');
  });

  it('the caps are exact, and counted before anything is decoded', () => {
    const doc = new Y.Doc();
    doc.getText(CONTENT_FIELD).insert(0, 'hello');
    const author = doc.clientID;
    expect(checkUpdate(deletions(author, MAX_UPDATE_DELETE_RANGES), doc)).not.toBeInstanceOf(UpdateProblem);
    expect((checkUpdate(deletions(author, MAX_UPDATE_DELETE_RANGES + 1), doc) as UpdateProblem).reason).toMatch(/more than 200000 deleted ranges/);
    // (At the cap, counted only: decoding 600,000 items takes longer than a test should.)
    expect(tooMuch(scanUpdate(items(MAX_UPDATE_STRUCTS))!)).toBeNull();
    expect((checkUpdate(items(MAX_UPDATE_STRUCTS + 1), doc) as UpdateProblem).reason).toMatch(/more than 600000 structs/);
    // GC structs and skips are counted too, and have a cap of their own: two bytes each.
    expect(checkUpdate(structs(MAX_UPDATE_PLACEHOLDERS), doc)).not.toBeInstanceOf(UpdateProblem);
    expect((checkUpdate(structs(MAX_UPDATE_PLACEHOLDERS + 1), doc) as UpdateProblem).reason).toMatch(/more than 20000 GC structs and skips/);
    const skips = update([{ client: FRESH, clock: 0, structs: [{ gc: 1 }, ...Array.from({ length: MAX_UPDATE_PLACEHOLDERS }, () => ({ skip: 1 }))] }]);
    expect((checkUpdate(skips, doc) as UpdateProblem).reason).toMatch(/more than 20000 GC structs and skips/);
    // The count stops at the cap: three million ranges cost what two hundred thousand do.
    const huge = deletions(author, 3_000_000);
    expect(scanUpdate(huge)).toMatchObject({ items: 0, placeholders: 0, ranges: 3_000_000 });
  });

  it('counts exactly what Yjs decodes, for every kind of struct a client can send', () => {
    const doc = new Y.Doc();
    const updates: Uint8Array[] = [];
    doc.on('update', (u: Uint8Array) => updates.push(u));
    const body = doc.getText(CONTENT_FIELD);
    body.insert(0, 'plain text, é and 😀 ');
    body.insert(5, 'bold', { bold: true, link: { href: 'https://example.org' } });
    body.insertEmbed(3, { image: 'x.png' });
    body.delete(1, 3);
    const map = doc.getMap('meta');
    map.set('title', 'A title');
    map.set('numbers', [1, 2.5, null, { deep: [true, 'x'] }]);
    map.set('bytes', new Uint8Array([1, 2, 3]));
    map.set('nested', new Y.Map());
    map.set('list', Y.Array.from([1, 'two']));
    map.set('sub', new Y.Doc());
    map.delete('title');
    const xml = doc.getXmlFragment('xml');
    const element = new Y.XmlElement('p');
    element.setAttribute('class', 'lead');
    element.insert(0, [new Y.XmlText('inside')]);
    xml.insert(0, [element, new Y.XmlHook('hook') as unknown as Y.XmlElement]); // (a hook is a type Yjs writes with its name)
    xml.delete(1, 1);
    const gcd = new Y.Doc({ gc: true });
    gcd.getArray('a').insert(0, [1, 2, 3]);
    gcd.getArray('a').delete(0, 3);
    const candidates = [...updates, Y.encodeStateAsUpdate(doc), Y.mergeUpdates(updates), Y.encodeStateAsUpdate(gcd), Y.encodeStateAsUpdate(doc, Y.encodeStateVector(new Y.Doc()))];
    for (const bytes of candidates) {
      const decoded = Y.decodeUpdate(bytes);
      let ranges = 0;
      for (const list of decoded.ds.clients.values()) ranges += list.length;
      const placeholders = decoded.structs.filter((s) => !(s instanceof Y.Item)).length;
      expect(scanUpdate(bytes)).toEqual({ items: decoded.structs.length - placeholders, placeholders, ranges, work: decoded.structs.length + ranges });
    }
  });
});

describe('checkUpdate agrees with Yjs on real updates', () => {
  it('accepts exactly the updates Yjs integrates whole, over random concurrent editing, merges and reorderings', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const peers = [new Y.Doc(), new Y.Doc(), new Y.Doc()];
    const made: Uint8Array[] = [];
    peers.forEach((p) => p.on('update', (u: Uint8Array, origin: unknown) => origin !== 'sync' && made.push(u)));
    for (let round = 0; round < 150; round++) {
      const peer = peers[Math.floor(random() * peers.length)]!;
      const body = peer.getText(CONTENT_FIELD);
      if (body.length > 3 && random() < 0.3) body.delete(Math.floor(random() * (body.length - 2)), 1 + Math.floor(random() * 2));
      else body.insert(Math.floor(random() * (body.length + 1)), `${round},`);
      // Peers sync now and then, so that later changes depend on other peers' ones.
      if (random() < 0.3) {
        const [x, y] = [peers[Math.floor(random() * 3)]!, peers[Math.floor(random() * 3)]!];
        Y.applyUpdate(y, Y.encodeStateAsUpdate(x, Y.encodeStateVector(y)), 'sync');
      }
    }
    // Candidates: the updates roughly in the order they were made, some early, late, repeated or
    // left out, alone or merged a few at a time (several clients, dependencies across them, gaps).
    const candidates: Uint8Array[] = [];
    const near = (i: number) => made[Math.min(made.length - 1, Math.max(0, i + Math.floor(random() * 7) - 3))]!;
    for (let i = 0; i < made.length * 2; i++) {
      const at = Math.floor(i / 2);
      if (random() < 0.6) candidates.push(near(at));
      else candidates.push(Y.mergeUpdates(Array.from({ length: 2 + Math.floor(random() * 3) }, () => near(at))));
    }
    // And, late, what a peer's sync step 2 would bring against what the server holds by then (below).
    const stepTwo = Symbol('step 2');
    candidates.splice(Math.floor(candidates.length * 0.85), 0, stepTwo as never);
    const server = new Y.Doc();
    let accepted = 0;
    for (let candidate of candidates) {
      if ((candidate as unknown) === stepTwo) candidate = Y.encodeStateAsUpdate(peers[Math.floor(random() * 3)]!, Y.encodeStateVector(server));
      const verdict = checkUpdate(candidate, server);
      const trial = new Y.Doc();
      Y.applyUpdate(trial, Y.encodeStateAsUpdate(server));
      Y.applyUpdate(trial, candidate);
      const whole = trial.store.pendingStructs === null && trial.store.pendingDs === null;
      expect(!(verdict instanceof UpdateProblem), verdict instanceof UpdateProblem ? verdict.reason : 'accepted').toBe(whole);
      if (whole) {
        Y.applyUpdate(server, candidate);
        accepted++;
      }
    }
    expect(accepted).toBeGreaterThan(40);
    expect(candidates.length - accepted).toBeGreaterThan(40);
  });

  it('keeps numbers to what Yjs encodes exactly', () => {
    expect(MAX_CLOCK * 4).toBeLessThan(Number.MAX_SAFE_INTEGER);
  });
});

describe('stored bodies that cannot be read', () => {
  it('a body stored before the checks, holding pending changes, loads without them and opens', async () => {
    const id = await newDocument('');
    // As an earlier server compacted it: real text plus the first crafted update, parked as pending.
    const old = new Y.Doc();
    old.getText(CONTENT_FIELD).insert(0, 'legacy text');
    Y.applyUpdate(old, INCIDENT[0]!);
    expect(old.store.pendingStructs).not.toBeNull();
    const state = Buffer.from(Y.encodeStateAsUpdate(old));
    t.db.insert(documentStates).values({ documentId: id, tenantId: t.defaultTenantId, state, throughUpdateId: 0, updatedAt: new Date().toISOString() }).run();
    const reloaded = new DocumentStore({ db: t.db, clock: t.clock });
    expect(reloaded.getText(id)).toBe('legacy text');
    // With the pending part dropped, the second crafted update can no longer combine with it.
    await expectIntact(id, 'legacy text', 'legacy pending');
    expect(await sendAsEditor(id, INCIDENT[1]!)).toBe(1007);
    await expectIntact(id, 'legacy text', 'legacy pending, then the second update');
  });

  it('answers 409 document_unreadable on every path that needs the body, and closes live connections with 1011', async () => {
    const id = await newDocument('fine for now');
    const version = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'v1' } });
    expect(version.status).toBe(201);
    // A damaged state row: it does not decode, and it has no text beside it (as a row stored before
    // the text was kept; a state stored with its text is read as text without Yjs).
    t.db
      .insert(documentStates)
      .values({ documentId: id, tenantId: t.defaultTenantId, state: Buffer.from([1, 1, 0xff, 0xff, 0xff]), throughUpdateId: 0, updatedAt: new Date().toISOString() })
      .onConflictDoUpdate({ target: documentStates.documentId, set: { state: Buffer.from([1, 1, 0xff, 0xff, 0xff]), markdown: null } })
      .run();
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/api/documents/${id}?include=content`],
      ['POST', `/api/documents/${id}/versions`, { name: 'v2' }],
      ['POST', `/api/documents/${id}/copy`, {}],
      ['GET', `/api/documents/${id}/diff?from=${version.body.id}&to=current`],
      ['PUT', `/api/documents/${id}/content`, { content: 'new' }],
      ['POST', `/api/documents/${id}/versions/${version.body.id}/revert`],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.call(method, path, { as: owner, body });
      expectProblem(res, 409, 'document_unreadable', `${method} ${path}`);
      expect(res.body.detail, path).toMatch(/cannot be encoded or loaded/);
    }
    // Export, and a thread's anchor, say what could not be done.
    const exported = await t.call('GET', `/api/documents/${id}/export?format=markdown`, { as: owner });
    expectProblem(exported, 409, 'document_unreadable');
    expect(exported.body.detail).toBe('The stored body of this document cannot be loaded, so it cannot be exported');
    const anchored = await t.call('POST', `/api/documents/${id}/comments`, { as: owner, body: { body: 'Here?', anchor: { start: 'AA==', end: 'AA==' } } });
    expectProblem(anchored, 409, 'document_unreadable');
    expect(anchored.body.detail).toBe('The stored body of this document cannot be loaded, so its anchors cannot be resolved');
    // What does not need the body still answers.
    expect((await t.call('GET', `/api/documents/${id}`, { as: owner })).status).toBe(200);
    expect((await t.call('GET', `/api/documents/${id}/versions/${version.body.id}`, { as: owner })).body.content).toBe('fine for now');
    const raw = rawClient(server.port, `/collab/${id}?token=${owner.token}`);
    expect((await raw.closed).code).toBe(1011);
  });

  it('a damaged version answers 409 too', async () => {
    const id = await newDocument('text');
    const version = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'v1' } });
    // Damaged, and saved before versions kept their text (with it, the text is read and the state never is).
    t.deps.sqlite.prepare('UPDATE document_versions SET state = ?, markdown = NULL WHERE id = ?').run(Buffer.from([1, 1, 0xff, 0xff]), version.body.id);
    expectProblem(await t.call('GET', `/api/documents/${id}/versions/${version.body.id}`, { as: owner }), 409, 'document_unreadable');
    expectProblem(await t.call('GET', `/api/documents/${id}/diff?from=${version.body.id}&to=current`, { as: owner }), 409, 'document_unreadable');
  });
});
