// Large compacted states stored in parts (issue 41 item 1): a state and Markdown past 1 MiB are
// written a part per turn of the event loop and named by their state row at once, read back whole
// by every reader, and parts no row names (superseded, or left by a stopped process) are deleted.
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { DocumentStore, textOfState } from '../collab/store';
import { YjsWorkers } from '../collab/workers';
import { documentStateParts, documentStates, documents } from '../db/schema';
import { WorkerPool } from '../src/lib/worker-pool';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { eventually } from './helpers/collab';
import { createDoc } from './helpers/documents';
import { clock, client, database, newDocument, setup, stateRow, tenantId, userId } from './helpers/store';

/** About 1.6 MB of Markdown: past the size stored in parts. */
const LARGE = Array.from({ length: 30_000 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog.`).join('\n');

const partsOf = (db: typeof database.db, documentId: string) =>
  db.select({ generation: documentStateParts.generation, kind: documentStateParts.kind, part: documentStateParts.part }).from(documentStateParts).where(eq(documentStateParts.documentId, documentId)).all();

describe('large states in parts (the store)', () => {
  let pool: WorkerPool;
  let store: DocumentStore;
  beforeEach(async () => {
    await setup();
    pool = new WorkerPool({ maxThreads: 1 });
    store = new DocumentStore({ db: database.db, clock, workers: new YjsWorkers(pool), offloadMinBytes: 0 });
  });
  afterEach(async () => {
    await store.settled();
    store.close();
    await pool.close();
    database.close();
  });

  /** A document of LARGE with 'a' typed before it, folded by a snapshot: its state stored in parts. */
  async function partedDocument() {
    const doc = newDocument();
    store.createBody(doc, LARGE, userId);
    const c = client();
    Y.applyUpdate(c.doc, store.encodeState(doc.id));
    c.text.insert(0, 'a');
    store.applyUpdate(doc.id, c.updates.pop()!, userId);
    return { doc, c, snapshot: await store.snapshot(doc.id) };
  }

  it('stores a fold past 1 MiB in parts named by its state row, read back whole by a load, a text read and a snapshot', async () => {
    // The state is behind the log: a snapshot folds it in a worker and stores the fold.
    const { doc, snapshot } = await partedDocument();
    const expected = `a${LARGE}`;
    expect(snapshot.markdown).toBe(expected);
    const row = stateRow(doc.id);
    expect(row.partsGeneration).not.toBeNull();
    expect(row.state.byteLength).toBe(0);
    expect(row.markdown).toBeNull();
    const parts = partsOf(database.db, doc.id);
    expect(parts.every((p) => p.generation === row.partsGeneration)).toBe(true);
    const markdownParts = parts.filter((p) => p.kind === 'markdown').length;
    expect(markdownParts).toBe(Math.ceil(Buffer.byteLength(expected) / (256 * 1024)));
    expect(parts.filter((p) => p.kind === 'state').length).toBeGreaterThan(1);

    // Another store (a restart) reads it: the text without Yjs, a snapshot, and a load for editors.
    const again = new DocumentStore({ db: database.db, clock });
    expect(again.getText(doc.id)).toBe(expected);
    const stored = await again.snapshot(doc.id);
    expect(stored.markdown).toBe(expected);
    expect(textOfState(stored.state)).toBe(expected);
    expect(again.acquire(doc.id).getText('content').toString()).toBe(expected);
    again.release(doc.id);
    again.close();
  });

  it('deletes the parts a newer state replaces, and those of a document deleted', async () => {
    const { doc, c } = await partedDocument();
    const first = stateRow(doc.id).partsGeneration!;
    c.text.insert(0, 'b');
    store.applyUpdate(doc.id, c.updates.pop()!, userId);
    await store.snapshot(doc.id);
    const second = stateRow(doc.id).partsGeneration!;
    expect(second).not.toBe(first);
    await eventually(() => partsOf(database.db, doc.id).every((p) => p.generation !== first));
    expect(partsOf(database.db, doc.id).length).toBeGreaterThan(0);
    expect(store.getText(doc.id)).toBe(`ba${LARGE}`);

    database.db.delete(documents).where(eq(documents.id, doc.id)).run();
    expect(partsOf(database.db, doc.id)).toEqual([]);
  });

  it('a small state replacing a parted one is inline, and the parts go', async () => {
    const { doc, c } = await partedDocument();
    expect(stateRow(doc.id).partsGeneration).not.toBeNull();
    c.text.delete(0, c.text.length);
    c.text.insert(0, 'short now');
    store.applyUpdate(doc.id, c.updates.pop()!, userId);
    store.applyUpdate(doc.id, c.updates.pop()!, userId);
    const snapshot = await store.snapshot(doc.id);
    expect(snapshot.markdown).toBe('short now');
    const row = stateRow(doc.id);
    expect(row.partsGeneration).toBeNull();
    expect(row.markdown).toBe('short now');
    await eventually(() => partsOf(database.db, doc.id).length === 0);
  });

  it('deletes, when a store starts, the parts no state row names (a write a stopped process left unfinished)', async () => {
    const { doc, c } = await partedDocument();
    const named = stateRow(doc.id).partsGeneration!;
    const data = Buffer.alloc(1000, 7);
    for (let part = 0; part < 5; part++) {
      database.db.insert(documentStateParts).values({ documentId: doc.id, generation: 'left-behind', kind: 'state', part, tenantId, data }).run();
    }
    const started = new DocumentStore({ db: database.db, clock });
    try {
      const leftBehind = () => database.db.select().from(documentStateParts).where(and(eq(documentStateParts.documentId, doc.id), eq(documentStateParts.generation, 'left-behind'))).all();
      await eventually(() => leftBehind().length === 0);
      expect(partsOf(database.db, doc.id).every((p) => p.generation === named)).toBe(true);
      expect(started.getText(doc.id)).toBe(`a${LARGE}`);
    } finally {
      started.close();
    }
  });
});

describe('large states in parts (through the API)', () => {
  let t: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    t = await makeTestApp({ config: { documentBodyLimitBytes: 8 * 1024 * 1024 } });
    owner = await t.newUser();
  });
  afterAll(() => t?.close());

  it('a body past 1 MiB written by PUT …/content is stored in parts and read back, as content and as a version', async () => {
    const doc = await createDoc(t, owner, { content: 'draft' });
    const put = await t.call('PUT', `/api/documents/${doc.id}/content`, { as: owner, body: { content: LARGE } });
    expect(put.status).toBe(200);
    await t.deps.documents.settled();
    const row = t.db.select().from(documentStates).where(eq(documentStates.documentId, doc.id)).get()!;
    expect(row.partsGeneration).not.toBeNull();
    const got = await t.call('GET', `/api/documents/${doc.id}?include=content`, { as: owner });
    expect(got.status).toBe(200);
    expect(got.body.content).toBe(LARGE);
    const version = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'large' } });
    expect(version.status).toBe(201);
    const read = await t.call('GET', `/api/documents/${doc.id}/versions/${version.body.id}?include=content`, { as: owner });
    expect(read.status).toBe(200);
    expect(read.body.content).toBe(LARGE);
  });
});
