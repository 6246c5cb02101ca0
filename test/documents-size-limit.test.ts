// DOCUMENT_MAX_BYTES (issue 21): no document grows past its limit, over REST (creation, copy,
// revert, PUT content, instantiating a template: 413) or live editing (the sender is told permission-denied and stays
// connected; a message above the limit plus framing is closed with 1009). Deletions keep working
// at the limit. Here the limit is 64 KiB.
import { count, eq } from 'drizzle-orm';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD, DocumentStore, DocumentTooLargeError } from '../collab/store';
import { ConfigError, loadConfig } from '../src/config';
import { documents, documentUpdates, documentVersions } from '../db/schema';
import { newId } from '../src/lib/ids';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { share } from './helpers/documents';
import {
  editorsOf,
  eventually,
  insertUpdate,
  rawClient,
  startCollabServer,
  synced,
  syncUpdateMessage,
  type CollabServer,
  type Editor,
} from './helpers/collab';

const LIMIT = 64 * 1024;
const KiB = 1024;

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let writer: TestUser;
const editors = editorsOf(() => server.port);
const editorFor = (documentId: string, user: TestUser): Editor => editors.open(documentId, user);

async function newDocument(content: string): Promise<string> {
  const res = await t.call('POST', '/api/documents', { as: owner, body: { title: 'Sized', content } });
  expect(res.status, res.text).toBe(201);
  await share(t, owner, res.body.id, { user: writer }, 'editor');
  return res.body.id as string;
}

const contentOf = async (id: string) => (await t.call('GET', `/api/documents/${id}?include=content`, { as: owner })).body.content as string;
const storedRows = (id: string) => t.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, id)).get()!.n;
const encodedSize = (id: string) => t.deps.documents.encodeState(id).byteLength;

/** A body stored before the limit existed (or under a larger one): written by a store with a higher limit. */
async function legacyBody(id: string, content: string): Promise<void> {
  const roomy = new DocumentStore({ db: t.db, clock: t.clock, maxDocumentBytes: 10 * LIMIT });
  await roomy.replaceText(id, content, owner.user.id);
}

const paragraph = (n: number) => `Paragraph ${n}: the quick brown fox jumps over the lazy dog.\n`;
const text = (bytes: number, seed = 0) => {
  let out = '';
  for (let i = seed; out.length < bytes; i++) out += paragraph(i);
  return out.slice(0, bytes);
};

/** The reason of a y-protocols permission-denied message among `messages`, if any. */
function permissionDenied(messages: Uint8Array[]): string | undefined {
  for (const m of messages) {
    const d = decoding.createDecoder(m);
    if (decoding.readVarUint(d) === 2 && decoding.readVarUint(d) === 0) return decoding.readVarString(d);
  }
  return undefined;
}

beforeAll(async () => {
  t = await makeTestApp({ config: { documentMaxBytes: LIMIT, documentBodyLimitBytes: 256 * KiB } });
  server = await startCollabServer(t, { pingIntervalMs: 60_000 });
  owner = await t.newUser();
  writer = await t.newUser();
});

afterAll(async () => {
  await server?.close();
  t?.close();
});

describe('DOCUMENT_MAX_BYTES', () => {
  it('defaults to 5 MiB and is validated like the other settings', () => {
    expect(loadConfig({}, []).documentMaxBytes).toBe(5 * 1024 * 1024);
    expect(loadConfig({ DOCUMENT_MAX_BYTES: '1048576' }, []).documentMaxBytes).toBe(1024 * 1024);
    for (const bad of ['abc', '100', '1.5']) {
      expect(() => loadConfig({ DOCUMENT_MAX_BYTES: bad }, [])).toThrow(ConfigError);
      expect(() => loadConfig({ DOCUMENT_MAX_BYTES: bad }, [])).toThrow(/DOCUMENT_MAX_BYTES: must be a whole number of at least 1024/);
    }
  });
});

// Over REST, the whole-body work is done inline for small documents and in the Yjs worker threads
// for large ones: each case runs both ways (the second on an app that sends every document there).
describe.each([
  { mode: 'inline', offloadMinBytes: undefined },
  { mode: 'in a worker thread', offloadMinBytes: 0 },
])('over REST, with the whole-body work $mode', ({ offloadMinBytes }) => {
  let inline: { t: TestApp; owner: TestUser; writer: TestUser } | undefined;
  beforeAll(async () => {
    if (offloadMinBytes === undefined) return;
    inline = { t, owner, writer };
    t = await makeTestApp({ config: { documentMaxBytes: LIMIT, documentBodyLimitBytes: 256 * KiB }, offloadMinBytes });
    owner = await t.newUser();
    writer = await t.newUser();
  });
  afterAll(async () => {
    if (!inline) return;
    await t.close();
    ({ t, owner, writer } = inline);
  });

  it('creation with content past the limit is 413 and creates nothing; up to it is fine', async () => {
    const before = (await t.call('GET', '/api/documents', { as: owner })).body.pagination.total;
    const res = await t.call('POST', '/api/documents', { as: owner, body: { title: 'Too big', content: text(LIMIT + 100) } });
    expectProblem(res, 413, 'payload_too_large');
    expect(res.body.detail).toMatch(/above the limit of 65536 bytes \(DOCUMENT_MAX_BYTES\)/);
    expect((await t.call('GET', '/api/documents', { as: owner })).body.pagination.total).toBe(before);
    const fits = await t.call('POST', '/api/documents', { as: owner, body: { title: 'Fits', content: text(LIMIT - 200) } });
    expect(fits.status).toBe(201);
  });

  it('instantiating a template is 413 and creates nothing when the rendered Markdown is too large (no document, no template_id recorded anywhere); a result within the limit is made', async () => {
    // The body is small; the rendered result grows with the value, repeated four times.
    const created = await t.call('POST', '/api/templates', {
      as: t.admin,
      body: { name: 'Echo', body: '# {{text}}\n\n{{text}}\n\n{{text}}\n\n{{text}}\n', variables: [{ name: 'text', required: true }] },
    });
    expect(created.status, created.text).toBe(201);
    const tpl = created.body;
    const documentsTotal = async () => (await t.call('GET', '/api/documents', { as: owner })).body.pagination.total as number;
    const before = await documentsTotal();

    const big = 'a'.repeat(LIMIT / 2);
    // Rendering alone stores nothing and is not limited by DOCUMENT_MAX_BYTES.
    const rendered = await t.call('POST', `/api/templates/${tpl.id}/render`, { as: owner, body: { variables: { text: big } } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.content.length).toBeGreaterThan(LIMIT);

    const res = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: owner, body: { title: 'Too big', variables: { text: big } } });
    expectProblem(res, 413, 'payload_too_large');
    expect(res.body.detail).toMatch(/^The rendered document would be about \d+ bytes encoded, above the limit of 65536 bytes \(DOCUMENT_MAX_BYTES\)$/);
    expect(res.headers.get('location')).toBeNull();
    expect(await documentsTotal()).toBe(before);
    expect(t.db.select({ n: count() }).from(documents).where(eq(documents.templateId, tpl.id)).get()!.n).toBe(0);

    const fits = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: owner, body: { title: 'Fits', variables: { text: 'small' } } });
    expect(fits.status, fits.text).toBe(201);
    expect(fits.body.template_id).toBe(tpl.id);
    expect(await contentOf(fits.body.id)).toBe('# small\n\nsmall\n\nsmall\n\nsmall\n');
    expect(await documentsTotal()).toBe(before + 1);
  });

  it('PUT content past the limit is 413 and changes nothing; a body over DOCUMENT_BODY_LIMIT_BYTES is 413 before it is read', async () => {
    const id = await newDocument('small');
    const rows = storedRows(id);
    const res = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: text(LIMIT + 1) } });
    expectProblem(res, 413, 'payload_too_large');
    expect(res.body.detail).toMatch(/DOCUMENT_MAX_BYTES/);
    expect(await contentOf(id)).toBe('small');
    expect(storedRows(id)).toBe(rows);
    const huge = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: text(300 * KiB) } });
    expectProblem(huge, 413, 'payload_too_large');
    expect(huge.body.detail).toMatch(/request body exceeds 262144 bytes/);
    // Multibyte text counts in bytes: 30,000 characters of 3 bytes each are too many.
    const wide = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: '€'.repeat(30_000) } });
    expectProblem(wide, 413, 'payload_too_large');
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: '€'.repeat(20_000) } })).status).toBe(200);
  });

  it('a copy of a document over the limit (stored before it) is 413; one within it is copied', async () => {
    const id = await newDocument('');
    await legacyBody(id, text(2 * LIMIT));
    expect(await contentOf(id)).toHaveLength(2 * LIMIT);
    expectProblem(await t.call('POST', `/api/documents/${id}/copy`, { as: owner }), 413, 'payload_too_large');
    // Cut down below the limit, it copies.
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: text(LIMIT / 2) } })).status).toBe(200);
    const copy = await t.call('POST', `/api/documents/${id}/copy`, { as: owner });
    expect(copy.status).toBe(201);
    expect(await contentOf(copy.body.id)).toBe(text(LIMIT / 2));
  });

  it('a revert to a version past the limit is 413, changes nothing and saves no "before revert" version', async () => {
    const id = await newDocument('');
    await legacyBody(id, text(2 * LIMIT));
    const version = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'big' } });
    expect(version.status).toBe(201);
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: 'now small' } })).status).toBe(200);
    const versions = () => t.db.select({ n: count() }).from(documentVersions).where(eq(documentVersions.documentId, id)).get()!.n;
    const before = versions();
    const res = await t.call('POST', `/api/documents/${id}/versions/${version.body.id}/revert`, { as: owner });
    expectProblem(res, 413, 'payload_too_large');
    expect(await contentOf(id)).toBe('now small');
    expect(versions()).toBe(before);
  });

  it('a PUT whose text fits but whose result would not (a body of many pieces stored past the limit, added to) is 413 and stores nothing; one that only cuts it goes through', async () => {
    const id = await newDocument('');
    // Typed by many clients at random places: its text is within the limit, its encoding is not.
    const pieces = new Y.Doc();
    const body = pieces.getText(CONTENT_FIELD);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; Y.encodeStateAsUpdate(pieces).byteLength <= LIMIT + 4 * KiB; i++) {
      pieces.clientID = 1_000 + (i % 50);
      body.insert(Math.floor(random() * (body.length + 1)), `w${i} `);
    }
    const typed = body.toString();
    expect(Buffer.byteLength(typed)).toBeLessThan(LIMIT);
    new DocumentStore({ db: t.db, clock: t.clock, maxDocumentBytes: 10 * LIMIT }).applyUpdate(id, Y.encodeStateAsUpdate(pieces), owner.user.id);
    const rows = storedRows(id);
    const res = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${typed} and more` } });
    expectProblem(res, 413, 'payload_too_large');
    expect(await contentOf(id)).toBe(typed);
    expect(storedRows(id)).toBe(rows);
    const cut = typed.slice(0, typed.length / 2);
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: cut } })).status).toBe(200);
    expect(await contentOf(id)).toBe(cut);
  });
});

describe('over the WebSocket', () => {
  it('refuses an update that would pass the limit with permission-denied; nothing is stored or sent; the connection goes on', async () => {
    const id = await newDocument('hello world');
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const rows = storedRows(id);
    const raw = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
    await raw.opened;
    raw.ws.send(syncUpdateMessage(insertUpdate(text(LIMIT))));
    await eventually(() => permissionDenied(raw.messages) !== undefined, 5_000, 'permission denied');
    expect(permissionDenied(raw.messages)).toMatch(/would exceed its limit of 65536 bytes/);
    expect(storedRows(id)).toBe(rows);
    expect(watcher.text.toString()).toBe('hello world');
    // The same connection edits on.
    expect(raw.ws.readyState).toBe(raw.ws.OPEN);
    // An edit made on the document as stored (at its start, before 'hello').
    const peer = new Y.Doc();
    Y.applyUpdate(peer, t.deps.documents.encodeState(id));
    const known = Y.encodeStateVector(peer);
    peer.getText(CONTENT_FIELD).insert(0, 'more ');
    raw.ws.send(syncUpdateMessage(Y.encodeStateAsUpdate(peer, known)));
    await eventually(() => watcher.text.toString() === 'more hello world', 5_000, 'the next edit');
    expect(storedRows(id)).toBe(rows + 1);
    raw.ws.close();
  });

  it("a stock client whose paste was refused stays connected and keeps receiving; its later changes, which build on the refused one, are refused the same way, without a reconnect loop", async () => {
    const id = await newDocument('first line\nsecond line');
    const [paster, watcher] = [editorFor(id, writer), editorFor(id, owner)];
    await Promise.all([synced(paster), synced(watcher)]);
    const closes: number[] = [];
    paster.provider.on('connection-close', (event) => closes.push(event?.code ?? 0));
    const rows = storedRows(id);
    paster.text.insert(paster.text.length, text(LIMIT));
    await new Promise((r) => setTimeout(r, 300));
    // Typed after the paste: Yjs numbers it after the paste, so the document cannot take it either.
    paster.text.insert(0, '# ');
    await new Promise((r) => setTimeout(r, 300));
    expect(closes).toEqual([]);
    expect(paster.provider.wsconnected).toBe(true);
    expect(watcher.text.toString()).toBe('first line\nsecond line');
    expect(storedRows(id)).toBe(rows);
    // The others' edits still reach it.
    watcher.text.insert(0, 'Title\n');
    // (Where 'Title' lands beside its own refused '# ' depends on the client ids.)
    await eventually(() => paster.text.toString().replace('# ', '').startsWith('Title\nfirst line'), 5_000, "the other's edit at the refused client");
    expect(await contentOf(id)).toBe('Title\nfirst line\nsecond line');
    expect(closes).toEqual([]);
  });

  it('over a raw socket: the change after a refused one is refused with permission-denied too, while an unrelated hostile one still closes with 1007', async () => {
    const id = await newDocument('hello');
    const raw = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
    await raw.opened;
    const author = new Y.Doc();
    Y.applyUpdate(author, t.deps.documents.encodeState(id));
    const edit = (f: () => void) => {
      const before = Y.encodeStateVector(author);
      f();
      return Y.encodeStateAsUpdate(author, before);
    };
    raw.ws.send(syncUpdateMessage(edit(() => author.getText(CONTENT_FIELD).insert(5, text(LIMIT)))));
    await eventually(() => permissionDenied(raw.messages) !== undefined, 5_000, 'the first refusal');
    raw.messages.length = 0;
    raw.ws.send(syncUpdateMessage(edit(() => author.getText(CONTENT_FIELD).insert(0, '> '))));
    await eventually(() => permissionDenied(raw.messages) !== undefined, 5_000, 'the second refusal');
    expect(permissionDenied(raw.messages)).toMatch(/follows one refused as too large/);
    expect(raw.ws.readyState).toBe(raw.ws.OPEN);
    // A client id past 2^53 is wrong whatever came before.
    const hostile = new Y.Doc();
    hostile.clientID = 2 ** 60;
    hostile.getText(CONTENT_FIELD).insert(0, 'x');
    raw.ws.send(syncUpdateMessage(Y.encodeStateAsUpdate(hostile)));
    expect((await raw.closed).code).toBe(1007);
    expect(await contentOf(id)).toBe('hello');
  });

  it('grows a document up to the limit and not past it; at the limit deletions go through, and make room again', async () => {
    const id = await newDocument('');
    const a = editorFor(id, owner);
    const b = editorFor(id, writer);
    await Promise.all([synced(a), synced(b)]);
    const chunk = 12 * KiB;
    for (let i = 0; i < 5; i++) {
      a.text.insert(a.text.length, text(chunk, i * 1000));
      await eventually(() => b.text.length === a.text.length, 5_000, `chunk ${i}`);
    }
    const full = a.text.toString();
    expect(full).toHaveLength(5 * chunk);
    // The sixth does not fit (72 KiB of text alone): refused, and only its sender holds it.
    b.text.insert(b.text.length, text(chunk, 9_000));
    await new Promise((r) => setTimeout(r, 300));
    expect(a.text.toString()).toBe(full);
    expect(await contentOf(id)).toBe(full);
    expect(encodedSize(id)).toBeLessThanOrEqual(LIMIT);
    // The other editor cuts a paragraph at the limit; it is stored, and a short insert then fits.
    a.text.delete(0, 4 * KiB);
    await eventually(async () => (await contentOf(id)) === full.slice(4 * KiB), 5_000, 'the cut');
    a.text.insert(0, 'A new opening. ');
    await eventually(async () => (await contentOf(id)).startsWith('A new opening. '), 5_000, 'the insert after the cut');
    expect(encodedSize(id)).toBeLessThanOrEqual(LIMIT);
  });

  it('closes a connection whose message is above the limit plus framing with 1009', async () => {
    const id = await newDocument('x');
    const watcher = editorFor(id, owner);
    await synced(watcher);
    const big = rawClient(server.port, `/collab/${id}?token=${writer.token}`);
    await big.opened;
    big.ws.send(new Uint8Array(LIMIT + 1024 + 1));
    expect((await big.closed).code).toBe(1009);
    expect(watcher.provider.wsconnected).toBe(true);
  });
});

describe('the estimate behind the limit', () => {
  it('over random typing, pasting and cutting, the document never passes the limit (plus the deletions headroom), and refusals are not early', () => {
    const store = new DocumentStore({ db: t.db, clock: t.clock, maxDocumentBytes: LIMIT });
    const id = newId();
    t.deps.sqlite
      .prepare('INSERT INTO documents (id, tenant_id, title, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, t.defaultTenantId, 'Random', owner.user.id, t.clock.now().toISOString(), t.clock.now().toISOString());
    store.acquire(id);
    const editors = [new Y.Doc(), new Y.Doc(), new Y.Doc()];
    let seed = 3;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    let refused = 0;
    let accepted = 0;
    for (let i = 0; i < 800; i++) {
      const editor = editors[Math.floor(random() * editors.length)]!;
      // Each editor starts from the document as stored, as a client after a sync.
      const sv = Y.encodeStateVector(editor);
      Y.applyUpdate(editor, store.encodeState(id, sv));
      const body = editor.getText(CONTENT_FIELD);
      const before = Y.encodeStateVector(editor);
      const r = random();
      if (r < 0.25 && body.length > 100) body.delete(Math.floor(random() * (body.length - 50)), 1 + Math.floor(random() * 40));
      else if (r < 0.3) body.insert(Math.floor(random() * (body.length + 1)), text(2 * KiB + Math.floor(random() * 4 * KiB), i));
      else body.insert(Math.floor(random() * (body.length + 1)), `w${i} `);
      const update = Y.encodeStateAsUpdate(editor, before);
      const exactBefore = store.encodeState(id).byteLength;
      try {
        store.applyUpdate(id, update, owner.user.id, null, { defer: true });
        accepted++;
      } catch (err) {
        expect(err).toBeInstanceOf(DocumentTooLargeError);
        refused++;
        expect(exactBefore + update.byteLength, `refused at ${exactBefore} bytes`).toBeGreaterThan(LIMIT - 2 * KiB);
        // The refused change stays with its editor alone: it starts over from the stored document.
        editors[editors.indexOf(editor)] = new Y.Doc();
      }
      expect(store.encodeState(id).byteLength).toBeLessThanOrEqual(LIMIT + 64 * KiB);
    }
    expect(refused).toBeGreaterThan(10);
    expect(accepted).toBeGreaterThan(400);
    store.release(id);
  });

  it('a whole document of many small edits, synced into an empty one, is judged by its size, not its number of pieces', () => {
    const store = new DocumentStore({ db: t.db, clock: t.clock, maxDocumentBytes: LIMIT });
    const id = newId();
    t.deps.sqlite
      .prepare('INSERT INTO documents (id, tenant_id, title, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, t.defaultTenantId, 'Pieces', owner.user.id, t.clock.now().toISOString(), t.clock.now().toISOString());
    // As a client would resend it to a server restored from an old backup: 1,500 inserts at random places.
    const client = new Y.Doc();
    const body = client.getText(CONTENT_FIELD);
    let seed = 5;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    for (let i = 0; i < 1_500; i++) body.insert(Math.floor(random() * (body.length + 1)), `w${i} `);
    const whole = Y.encodeStateAsUpdate(client);
    expect(Y.decodeUpdate(whole).structs.length).toBeGreaterThan(1_200);
    expect(whole.byteLength).toBeLessThan(LIMIT - 8 * KiB);
    store.applyUpdate(id, whole, owner.user.id);
    expect(store.getText(id)).toBe(body.toString());
  });

  it('a deletion splitting a document into thousands of pieces cannot take it far past the limit', () => {
    const store = new DocumentStore({ db: t.db, clock: t.clock, maxDocumentBytes: LIMIT });
    const id = newId();
    t.deps.sqlite
      .prepare('INSERT INTO documents (id, tenant_id, title, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, t.defaultTenantId, 'Split', owner.user.id, t.clock.now().toISOString(), t.clock.now().toISOString());
    store.createBody({ id, tenantId: t.defaultTenantId }, text(LIMIT - 4 * KiB), owner.user.id);
    store.acquire(id);
    const stored = new Y.Doc();
    Y.applyUpdate(stored, store.encodeState(id));
    const author = [...Y.decodeStateVector(Y.encodeStateVector(stored)).keys()][0]!;
    // Every other character: one deleted range per character, each splitting the text's run.
    const e = encoding.createEncoder();
    encoding.writeVarUint(e, 0); // no structs
    encoding.writeVarUint(e, 1);
    encoding.writeVarUint(e, author);
    encoding.writeVarUint(e, 10_000);
    for (let i = 0; i < 10_000; i++) {
      encoding.writeVarUint(e, 2 * i + 1);
      encoding.writeVarUint(e, 1);
    }
    const split = encoding.toUint8Array(e);
    expect(() => store.applyUpdate(id, split, owner.user.id, null, { defer: true })).toThrow(DocumentTooLargeError);
    expect(store.encodeState(id).byteLength).toBeLessThanOrEqual(LIMIT);
    store.release(id);
  });
});
