// The document store directly: durability of the update log, replay, compaction, live subscribers.
import { count, eq, gt, isNull } from 'drizzle-orm';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { openDatabase, type Database_ } from '../db/client';
import { documents, documentStates, documentUpdates } from '../db/schema';
import {
  CONTENT_FIELD,
  DocumentStore,
  InvalidUpdateError,
  PersistenceError,
  UnknownDocumentError,
  textOfState,
  unfinishedClearings,
} from '../collab/store';
import { ManualClock } from '../src/lib/clock';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { WorkerPool } from '../src/lib/worker-pool';
import { YjsWorkers } from '../collab/workers';
import { createLogger } from '../src/logger';
import { newId } from '../src/lib/ids';
import { eventually, failUpdateWrites } from './helpers/collab';

/** Transactions opened through inTransaction (the store's group commit among them), counted. */
const transactions = vi.hoisted(() => ({ opened: 0 }));
vi.mock('../db/client', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../db/client')>();
  return {
    ...actual,
    inTransaction: (...args: Parameters<typeof actual.inTransaction>) => {
      transactions.opened++;
      return actual.inTransaction(...args);
    },
  };
});

let database: Database_;
let store: DocumentStore;
let tenantId: string;
let userId: string;
const clock = new ManualClock('2026-03-01T10:00:00.000Z');

async function setup(compactAfter?: number) {
  database = openDatabase(':memory:');
  const deps = await buildDeps({
    database,
    config: buildConfig({ adminEmail: 'a@example.com', adminPassword: 'password-123', scryptCost: 1024 }),
    clock,
    logger: createLogger('silent'),
  });
  const user = (await deps.db.query.users.findFirst())!;
  tenantId = user.tenantId;
  userId = user.id;
  store = new DocumentStore({ db: database.db, clock, compactAfter });
}

function newDocument(): { id: string; tenantId: string } {
  const id = newId();
  const now = clock.now().toISOString();
  database.db.insert(documents).values({ id, tenantId, title: 'Doc', createdBy: userId, createdAt: now, updatedAt: now }).run();
  return { id, tenantId };
}

/** A client-side doc whose every local edit is captured as an update. */
function client() {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on('update', (u: Uint8Array) => updates.push(u));
  return { doc, text: doc.getText(CONTENT_FIELD), updates };
}

const updateRows = (documentId: string) =>
  database.db.select().from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).all();
const stateRow = (documentId: string) => database.db.select().from(documentStates).where(eq(documentStates.documentId, documentId)).get()!;
const rowsWithData = (documentId: string) => updateRows(documentId).filter((r) => r.data !== null).length;

/** A live session of `edits` one-character edits through `on`, released at the end (which compacts); the text typed. */
function typeAndRelease(on: DocumentStore, documentId: string, edits: number): string {
  const c = client();
  on.acquire(documentId);
  for (let i = 0; i < edits; i++) {
    c.text.insert(c.text.length, `${i % 10}`);
    on.applyUpdate(documentId, c.updates.pop()!, userId, null, { defer: true });
  }
  on.release(documentId);
  return c.text.toString();
}

describe('DocumentStore', () => {
  beforeEach(async () => setup());
  afterEach(() => database.close());

  it('stores initial content and reads it back as Markdown', () => {
    const doc = newDocument();
    store.createBody(doc, '# Title\n\nBody', userId);
    expect(store.getText(doc.id)).toBe('# Title\n\nBody');
    const rows = updateRows(doc.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.userId).toBe(userId);
    // Stored once: as the compacted state, with the log row keeping its author, time and size.
    const state = stateRow(doc.id);
    expect(rows[0]!.data).toBeNull();
    expect(rows[0]!.bytes).toBe(state.state.byteLength);
    expect(state.throughUpdateId).toBe(rows[0]!.id);
    expect(state.clearedThroughUpdateId).toBe(rows[0]!.id);
    expect(state.markdown).toBe('# Title\n\nBody');
  });

  it('stores nothing for empty initial content', () => {
    const doc = newDocument();
    store.createBody(doc, '', userId);
    expect(updateRows(doc.id)).toHaveLength(0);
    expect(store.getText(doc.id)).toBe('');
  });

  it('rejects bytes that are not a Yjs update and stores nothing', () => {
    const doc = newDocument();
    expect(() => store.applyUpdate(doc.id, new Uint8Array([255, 255, 255, 1, 2]), userId)).toThrow(InvalidUpdateError);
    expect(updateRows(doc.id)).toHaveLength(0);
  });

  it('refuses an unknown document', () => {
    expect(() => store.getText(newId())).toThrow(UnknownDocumentError);
  });

  it('replays 10,000 small updates to the same text in a fresh store', () => {
    const doc = newDocument();
    // Held open as the hub does, with compaction off so that the reload replays the raw log.
    const writer = new DocumentStore({ db: database.db, clock, compactAfter: 1_000_000 });
    writer.acquire(doc.id);
    const c = client();
    for (let i = 0; i < 10_000; i++) {
      c.text.insert(c.text.length, String.fromCharCode(97 + (i % 26)));
      writer.applyUpdate(doc.id, c.updates.pop()!, userId);
    }
    const expected = c.text.toString();
    expect(updateRows(doc.id).filter((r) => r.data !== null)).toHaveLength(10_000);
    const fresh = new DocumentStore({ db: database.db, clock });
    expect(fresh.getText(doc.id)).toBe(expected);
    expect(store.listChanges(doc.id, { limit: 1, offset: 0 }).total).toBe(10_000);
  });

  it('compaction folds the log into the state and keeps the change history', () => {
    const doc = newDocument();
    const compacting = new DocumentStore({ db: database.db, clock, compactAfter: 100 });
    const c = client();
    for (let i = 0; i < 250; i++) {
      c.text.insert(c.text.length, 'x');
      compacting.applyUpdate(doc.id, c.updates.pop()!, i % 2 === 0 ? userId : null);
    }
    compacting.compact(doc.id);
    const state = database.db.select().from(documentStates).where(eq(documentStates.documentId, doc.id)).get();
    // The state row belongs to the document's tenant, as every tenant's row does.
    expect(state).toMatchObject({ documentId: doc.id, tenantId: doc.tenantId });
    const remaining = database.db
      .select({ n: count() })
      .from(documentUpdates)
      .where(eq(documentUpdates.documentId, doc.id))
      .get()!.n;
    expect(remaining).toBe(250);
    const withData = updateRows(doc.id).filter((r) => r.data !== null);
    expect(withData).toHaveLength(0);
    const history = compacting.listChanges(doc.id, { limit: 300, offset: 0 });
    expect(history.total).toBe(250);
    expect(history.rows.filter((r) => r.userId === userId)).toHaveLength(125);
    expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe('x'.repeat(250));
  });

  it('a large live document is compacted by a worker as its log grows, serving edits meanwhile, and leaves memory once its last fold is stored', async () => {
    const doc = newDocument();
    const pool = new WorkerPool({ maxThreads: 1 });
    const compacting = new DocumentStore({ db: database.db, clock, compactAfter: 20, workers: new YjsWorkers(pool), offloadMinBytes: 0 });
    try {
      compacting.createBody(doc, 'start.', userId);
      const live = compacting.acquire(doc.id);
      const c = client();
      Y.applyUpdate(c.doc, Y.encodeStateAsUpdate(live));
      for (let i = 0; i < 45; i++) {
        c.text.insert(c.text.length, ` ${i}`);
        compacting.applyUpdate(doc.id, c.updates.pop()!, userId, 'ws', { defer: true });
        // Each turn of typing is stored; a fold starts past 20 of them and runs while typing goes on.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await compacting.settled();
      const last = updateRows(doc.id).at(-1)!.id;
      const folded = stateRow(doc.id);
      expect(folded.throughUpdateId).toBeGreaterThanOrEqual(20);
      expect(folded.markdown).toBe(textOfState(folded.state));
      expect(compacting.isLive(doc.id)).toBe(true);
      compacting.release(doc.id);
      // Leaving: in memory until the fold of all it holds is stored.
      expect(compacting.isLive(doc.id)).toBe(true);
      await compacting.settled();
      expect(compacting.isLive(doc.id)).toBe(false);
      expect(stateRow(doc.id).throughUpdateId).toBe(last);
      expect(stateRow(doc.id).markdown).toBe(c.text.toString());
      expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe(c.text.toString());
    } finally {
      await pool.close();
    }
  });

  it('preloads a large document a slice at a time for its live editors: acquired without a load in one go, or let go unused', async () => {
    const doc = newDocument();
    const pool = new WorkerPool({ maxThreads: 1 });
    const slicing = new DocumentStore({ db: database.db, clock, workers: new YjsWorkers(pool), offloadMinBytes: 0, preloadWaitMs: 200 });
    try {
      // Many clients' scattered edits: thousands of pieces.
      const c = client();
      for (let i = 0; i < 3_000; i++) {
        c.doc.clientID = 10 + (i % 16);
        c.text.insert((i * 7919) % (c.text.length + 1), ` w${i}`);
      }
      slicing.applyUpdate(doc.id, Y.encodeStateAsUpdate(c.doc), userId);
      await slicing.settled();
      const loads = vi.spyOn(slicing as unknown as { load: (id: string) => unknown }, 'load');
      await slicing.preload(doc.id);
      expect(slicing.isLive(doc.id)).toBe(true);
      const live = slicing.acquire(doc.id);
      expect(loads).not.toHaveBeenCalled();
      expect(live.getText(CONTENT_FIELD).toString()).toBe(c.text.toString());
      // A new editor's first sync reply (to an empty state vector) is the worker's encoding, not
      // encoded again on the event loop, until the first change.
      const textOf = (update: Uint8Array) => {
        const copy = new Y.Doc();
        Y.applyUpdate(copy, update);
        return copy.getText(CONTENT_FIELD).toString();
      };
      const nothing = Y.encodeStateVector(new Y.Doc());
      const firstReply = slicing.encodeState(doc.id, nothing);
      expect(textOf(firstReply)).toBe(c.text.toString());
      expect(slicing.encodeState(doc.id, nothing)).toBe(firstReply);
      expect(slicing.encodeState(doc.id, Y.encodeStateVector(c.doc))).not.toBe(firstReply);
      // It takes and stores edits as a document loaded in one go does.
      live.getText(CONTENT_FIELD).insert(0, 'Live. ');
      expect(textOf(slicing.encodeState(doc.id, nothing))).toBe(`Live. ${c.text.toString()}`);
      slicing.release(doc.id);
      await slicing.settled();
      expect(slicing.isLive(doc.id)).toBe(false);
      expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe(`Live. ${c.text.toString()}`);

      // Preloaded and never acquired: it leaves memory after the wait, nothing written.
      const rows = updateRows(doc.id).length;
      await slicing.preload(doc.id);
      expect(slicing.isLive(doc.id)).toBe(true);
      await eventually(() => !slicing.isLive(doc.id), 5_000, 'let go unused');
      expect(updateRows(doc.id)).toHaveLength(rows);

      // A write while it loads is not lost: on top of what was loaded, or (a new state stored
      // meanwhile) what was loaded is let go and the acquire loads the document as usual.
      const loading = slicing.preload(doc.id);
      await slicing.replaceText(doc.id, `Replaced. ${c.text.toString()}`, userId);
      await loading;
      expect(slicing.acquire(doc.id).getText(CONTENT_FIELD).toString()).toBe(`Replaced. ${c.text.toString()}`);
      slicing.release(doc.id);
      await slicing.settled();
    } finally {
      slicing.close();
      await pool.close();
    }
  });

  it("builds a live document's text with Yjs once per change, however often it is read", () => {
    const doc = newDocument();
    const live = store.acquire(doc.id);
    try {
      live.getText(CONTENT_FIELD).insert(0, 'one');
      const built = vi.spyOn(Y.Text.prototype as { toString(): string }, 'toString');
      try {
        expect(store.getText(doc.id)).toBe('one');
        expect(store.getText(doc.id)).toBe('one');
        expect(built).toHaveBeenCalledTimes(1);
        live.getText(CONTENT_FIELD).insert(3, ' two');
        expect(store.getText(doc.id)).toBe('one two');
        expect(store.getText(doc.id)).toBe('one two');
        expect(built).toHaveBeenCalledTimes(2);
        // A change from elsewhere (an editor's update) too.
        const other = new Y.Doc();
        Y.applyUpdate(other, Y.encodeStateAsUpdate(live));
        other.getText(CONTENT_FIELD).insert(0, 'zero ');
        store.applyUpdate(doc.id, Y.encodeStateAsUpdate(other, Y.encodeStateVector(live)), userId);
        expect(store.getText(doc.id)).toBe('zero one two');
      } finally {
        built.mockRestore();
      }
    } finally {
      store.release(doc.id);
    }
  });

  it('live documents pass stored updates to subscribers with their origin, and compact on last release', async () => {
    const doc = newDocument();
    const live = store.acquire(doc.id);
    store.acquire(doc.id);
    const seen: unknown[] = [];
    store.subscribe(doc.id, { onUpdate: (_update, origin) => seen.push(origin) });
    const c = client();
    c.text.insert(0, 'hello');
    store.applyUpdate(doc.id, c.updates.pop()!, userId, 'connection-1');
    expect(seen).toEqual(['connection-1']);
    expect(live.getText(CONTENT_FIELD).toString()).toBe('hello');
    // A second subscriber hears updates until it unsubscribes; the first one goes on hearing them.
    const later: unknown[] = [];
    const second = { onUpdate: (_update: Uint8Array, origin: unknown) => later.push(origin) };
    store.subscribe(doc.id, second);
    store.subscribe(doc.id, second); // a second subscribe of the same subscriber changes nothing
    c.text.insert(5, ' world');
    store.applyUpdate(doc.id, c.updates.pop()!, userId, 'connection-2');
    store.unsubscribe(doc.id, second);
    c.text.insert(11, '!');
    store.applyUpdate(doc.id, c.updates.pop()!, userId, 'connection-1');
    expect(later).toEqual(['connection-2']);
    expect(seen).toEqual(['connection-1', 'connection-2', 'connection-1']);
    expect(live.getText(CONTENT_FIELD).toString()).toBe('hello world!');
    store.release(doc.id);
    expect(store.isLive(doc.id)).toBe(true);
    store.release(doc.id);
    expect(store.isLive(doc.id)).toBe(false);
    expect(database.db.select().from(documentStates).where(eq(documentStates.documentId, doc.id)).get()).toBeDefined();
    // The state is written at once; the rows it covers are cleared in the next turns.
    await eventually(() => database.db.select().from(documentUpdates).where(isNull(documentUpdates.data)).all().length === 3, 5_000, 'cleared rows');
    expect(store.getText(doc.id)).toBe('hello world!');
  });

  it('clears compacted rows after the state is written, and a restart finishes a clearing left undone', async () => {
    const doc = newDocument();
    const expected = typeAndRelease(store, doc.id, 250);
    const state = () => stateRow(doc.id);
    const withData = () => rowsWithData(doc.id);
    expect(state().throughUpdateId).toBe(Math.max(...updateRows(doc.id).map((r) => r.id)));
    expect(state().clearedThroughUpdateId).toBe(0);
    expect(withData()).toBe(250);
    expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe(expected);

    await eventually(() => withData() === 0, 5_000, 'cleared rows');
    expect(state().clearedThroughUpdateId).toBe(state().throughUpdateId);
    expect(store.listChanges(doc.id, { limit: 1, offset: 0 }).total).toBe(250);

    // A process that stopped half-way: some rows still hold data, the progress says so.
    const rows = updateRows(doc.id);
    database.db.update(documentUpdates).set({ data: Buffer.from([0]) }).where(gt(documentUpdates.id, rows[119]!.id)).run();
    database.db.update(documentStates).set({ clearedThroughUpdateId: rows[119]!.id }).where(eq(documentStates.documentId, doc.id)).run();
    // A start finds it through the partial index of unfinished clearings, without reading every state.
    expect(unfinishedClearings(database.db).all()).toEqual([{ documentId: doc.id }]);
    const { sql: query, params } = unfinishedClearings(database.db).toSQL();
    const plan = database.sqlite.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...params) as { detail: string }[];
    expect(plan.map((r) => r.detail).join()).toContain('document_states_uncleared_idx');
    const restarted = new DocumentStore({ db: database.db, clock });
    await eventually(() => withData() === 0, 5_000, 'cleared rows');
    expect(state().clearedThroughUpdateId).toBe(state().throughUpdateId);
    expect(restarted.getText(doc.id)).toBe(expected);
  });

  it('a clearing that fails is logged and loses nothing; the next start clears', async () => {
    const doc = newDocument();
    const warn = vi.fn();
    const logged = new DocumentStore({ db: database.db, clock, logger: { warn } as unknown as Logger });
    // Trigger names are identifiers: derived from the id, which is a UUID we created.
    const trigger = `fail_clearing_${doc.id.replace(/-/g, '_')}`;
    database.sqlite.exec(
      `CREATE TRIGGER ${trigger} BEFORE UPDATE OF data ON document_updates WHEN NEW.document_id = '${doc.id}' AND NEW.data IS NULL ` +
        `BEGIN SELECT RAISE(ABORT, 'simulated clearing failure'); END`,
    );
    const typed = typeAndRelease(logged, doc.id, 150);
    await eventually(() => warn.mock.calls.length > 0, 5_000, 'the clearing failure logged');
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(Error) }), 'could not clear compacted document updates');

    expect(rowsWithData(doc.id)).toBe(150);
    expect(stateRow(doc.id).clearedThroughUpdateId).toBe(0);
    expect(logged.getText(doc.id)).toBe(typed);

    database.sqlite.exec(`DROP TRIGGER ${trigger}`);
    const restarted = new DocumentStore({ db: database.db, clock });
    await eventually(() => rowsWithData(doc.id) === 0, 5_000, 'cleared rows');
    expect(stateRow(doc.id).clearedThroughUpdateId).toBe(stateRow(doc.id).throughUpdateId);
    expect(restarted.getText(doc.id)).toBe(typed);
  });

  it('replaceText applies minimal edits as one stored update that live editors receive', async () => {
    const doc = newDocument();
    store.createBody(doc, 'The quick brown fox', userId);
    const live = store.acquire(doc.id);
    const updates: Uint8Array[] = [];
    store.subscribe(doc.id, { onUpdate: (u) => updates.push(u) });
    // An editor's view of the document, kept in sync by the updates the store passes on.
    const editor = new Y.Doc();
    Y.applyUpdate(editor, Y.encodeStateAsUpdate(live));
    await store.replaceText(doc.id, 'The slow brown fox jumps', userId);
    expect(updates).toHaveLength(1);
    Y.applyUpdate(editor, updates[0]!);
    expect(editor.getText(CONTENT_FIELD).toString()).toBe('The slow brown fox jumps');
    expect(updateRows(doc.id)).toHaveLength(2);
    store.release(doc.id);
  });

  it('textOfState reads a saved state back', async () => {
    const doc = newDocument();
    store.createBody(doc, 'version one', userId);
    const state = store.encodeState(doc.id);
    await store.replaceText(doc.id, 'version two', userId);
    expect(textOfState(state)).toBe('version one');
    expect(store.getText(doc.id)).toBe('version two');
  });

  it('tells change listeners about every stored change', async () => {
    const changed: string[] = [];
    store.onChange((id) => changed.push(id));
    const doc = newDocument();
    store.createBody(doc, 'a', userId);
    await store.replaceText(doc.id, 'ab', userId);
    expect(changed).toEqual([doc.id, doc.id]);
  });
});

/** Resolves after the store's end-of-turn flush (setImmediate callbacks run in the order queued). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const asBuffer = (update: Uint8Array) => Buffer.from(update.buffer, update.byteOffset, update.byteLength);

describe('DocumentStore group commit (deferred updates)', () => {
  beforeEach(async () => setup());
  afterEach(() => {
    vi.restoreAllMocks();
    database.close();
  });

  it('applies deferred updates at once, stores them in one transaction per turn in apply order, and passes them on after the commit', async () => {
    const first = newDocument();
    const second = newDocument();
    const live = store.acquire(first.id);
    store.acquire(second.id);
    const seen: { documentId: string; origin: unknown; storedThen: number }[] = [];
    const storedRows = () => database.db.select({ n: count() }).from(documentUpdates).get()!.n;
    for (const doc of [first, second]) {
      store.subscribe(doc.id, { onUpdate: (_update, origin) => seen.push({ documentId: doc.id, origin, storedThen: storedRows() }) });
    }
    const openedBefore = transactions.opened;

    const a = client();
    const b = client();
    const c = client();
    a.text.insert(0, 'a1 ');
    b.text.insert(0, 'b1 ');
    c.text.insert(0, 'on the other document');
    a.text.insert(a.text.length, 'a2 ');
    const sent = [
      { documentId: first.id, update: a.updates[0]!, userId, origin: 'conn-a' },
      { documentId: first.id, update: b.updates[0]!, userId: null, origin: 'conn-b' },
      { documentId: second.id, update: c.updates[0]!, userId, origin: 'conn-c' },
      { documentId: first.id, update: a.updates[1]!, userId, origin: 'conn-a' },
    ];
    for (const u of sent) store.applyUpdate(u.documentId, u.update, u.userId, u.origin, { defer: true });

    // In memory at once; nothing stored or passed on yet.
    expect(live.getText(CONTENT_FIELD).toString()).toContain('a1 a2 ');
    expect(live.getText(CONTENT_FIELD).toString()).toContain('b1 ');
    expect(storedRows()).toBe(0);
    expect(seen).toEqual([]);

    await nextTurn();
    expect(transactions.opened - openedBefore).toBe(1);
    const rows = database.db.select().from(documentUpdates).orderBy(documentUpdates.id).all();
    expect(rows.map((r) => ({ documentId: r.documentId, userId: r.userId, data: r.data }))).toEqual(
      sent.map((u) => ({ documentId: u.documentId, userId: u.userId, data: asBuffer(u.update) })),
    );
    // Every subscriber call came after the whole batch was committed, in apply order.
    expect(seen).toEqual(sent.map((u) => ({ documentId: u.documentId, origin: u.origin, storedThen: sent.length })));
    expect(new DocumentStore({ db: database.db, clock }).getText(first.id)).toBe(live.getText(CONTENT_FIELD).toString());
  });

  it('stores what is queued before any read or other write of the document', async () => {
    const doc = newDocument();
    store.acquire(doc.id);
    const origins: unknown[] = [];
    store.subscribe(doc.id, { onUpdate: (_update, origin) => origins.push(origin) });
    const c = client();
    const queue = (text: string, origin: string) => {
      c.text.insert(c.text.length, text);
      store.applyUpdate(doc.id, c.updates.at(-1)!, userId, origin, { defer: true });
    };

    queue('one ', 'ws-1');
    expect(updateRows(doc.id)).toHaveLength(0);
    expect(store.getText(doc.id)).toBe('one ');
    expect(updateRows(doc.id)).toHaveLength(1);

    queue('two ', 'ws-2');
    expect(store.listChanges(doc.id, { limit: 10, offset: 0 }).total).toBe(2);

    queue('three ', 'ws-3');
    expect(textOfState(store.encodeState(doc.id))).toBe('one two three ');
    expect(updateRows(doc.id)).toHaveLength(3);

    // A REST write right behind a queued edit is logged after it.
    queue('four ', 'ws-4');
    await store.replaceText(doc.id, 'one two three four five', userId);
    expect(origins).toEqual(['ws-1', 'ws-2', 'ws-3', 'ws-4', null]);
    const rows = updateRows(doc.id);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((x, y) => x - y));

    // The editor catches up with the REST write before typing on.
    Y.applyUpdate(c.doc, store.encodeState(doc.id));
    queue(' six', 'ws-6');
    store.compact(doc.id);
    expect(updateRows(doc.id).filter((r) => r.data !== null)).toHaveLength(0);
    expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe('one two three four five six');

    queue('!', 'ws-7');
    store.release(doc.id);
    expect(store.isLive(doc.id)).toBe(false);
    expect(store.getText(doc.id)).toBe('one two three four five six!');
  });

  it('flush() stores the queue at once, as shutdown needs', () => {
    const doc = newDocument();
    store.acquire(doc.id);
    const c = client();
    c.text.insert(0, 'last words');
    store.applyUpdate(doc.id, c.updates[0]!, userId, 'ws', { defer: true });
    expect(updateRows(doc.id)).toHaveLength(0);
    store.flush();
    expect(updateRows(doc.id)).toHaveLength(1);
    expect(new DocumentStore({ db: database.db, clock }).getText(doc.id)).toBe('last words');
  });

  it('a document whose rows cannot be written is dropped and its subscribers told; the rest of its batch is stored', async () => {
    const healthy = newDocument();
    const failing = newDocument();
    const bystander = newDocument();
    const docs = Object.fromEntries([healthy, failing, bystander].map((d) => [d.id, store.acquire(d.id)]));
    const events: string[] = [];
    for (const d of [healthy, failing, bystander]) {
      store.subscribe(d.id, {
        onUpdate: () => events.push(`update ${d.id}`),
        onDropped: (err) => events.push(`dropped ${d.id}: ${err.message}`),
      });
    }
    const heal = failUpdateWrites(database.sqlite, failing.id);

    const a = client();
    const b = client();
    a.text.insert(0, 'fine on its own');
    b.text.insert(0, 'cannot be stored');
    a.text.insert(0, '>');
    store.applyUpdate(healthy.id, a.updates[0]!, userId, 'ws-a', { defer: true });
    store.applyUpdate(failing.id, b.updates[0]!, userId, 'ws-b', { defer: true });
    store.applyUpdate(healthy.id, a.updates[1]!, userId, 'ws-a', { defer: true });
    await nextTurn();

    // The shared transaction failed; each document was then tried on its own.
    expect(updateRows(healthy.id)).toHaveLength(2);
    expect(updateRows(failing.id)).toHaveLength(0);
    expect(events).toEqual([`dropped ${failing.id}: simulated write failure`, `update ${healthy.id}`, `update ${healthy.id}`]);
    expect(store.isLive(failing.id)).toBe(false);
    expect(docs[failing.id]!.isDestroyed).toBe(true);
    for (const d of [healthy, bystander]) {
      expect(store.isLive(d.id)).toBe(true);
      expect(docs[d.id]!.isDestroyed).toBe(false);
    }
    expect(store.getText(healthy.id)).toBe('>fine on its own');

    // Reads of the dropped document see the disk; the next acquire reloads it.
    expect(store.getText(failing.id)).toBe('');
    const reloaded = store.acquire(failing.id);
    expect(reloaded).not.toBe(docs[failing.id]);
    expect(reloaded.getText(CONTENT_FIELD).toString()).toBe('');
    store.release(failing.id);

    // A batch of that one document alone fails whole, and a write that must be stored before it
    // returns says so, and leaves nothing behind.
    expect(() => store.applyUpdate(failing.id, b.updates[0]!, userId)).toThrow(PersistenceError);
    expect(store.getText(failing.id)).toBe('');
    // Another document's REST write is not reported as failed because of it.
    store.acquire(failing.id);
    store.applyUpdate(failing.id, b.updates[0]!, userId, 'ws-b', { defer: true });
    await store.replaceText(bystander.id, 'written through REST', userId);
    expect(store.getText(bystander.id)).toBe('written through REST');
    expect(store.isLive(failing.id)).toBe(false);
    heal();
    store.applyUpdate(failing.id, b.updates[0]!, userId);
    expect(store.getText(failing.id)).toBe('cannot be stored');
  });

  it('a live document whose REST write fails is dropped and the write reported', async () => {
    const doc = newDocument();
    store.createBody(doc, 'kept', userId);
    store.acquire(doc.id);
    const dropped: Error[] = [];
    store.subscribe(doc.id, { onUpdate: () => {}, onDropped: (err) => dropped.push(err) });
    const heal = failUpdateWrites(database.sqlite, doc.id);
    try {
      await expect(store.replaceText(doc.id, 'kept and lost', userId)).rejects.toThrow(PersistenceError);
    } finally {
      heal();
    }
    expect(dropped).toHaveLength(1);
    expect(store.isLive(doc.id)).toBe(false);
    expect(store.getText(doc.id)).toBe('kept');
  });
});
