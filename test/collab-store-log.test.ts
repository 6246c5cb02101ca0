// The batched log writes (collab/store/log.ts): deferred updates stored in one transaction per turn,
// the queue written before any read or write, and documents whose rows cannot be written dropped.
import { count } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { documentUpdates } from '../db/schema';
import { CONTENT_FIELD, DocumentStore, PersistenceError, textOfState } from '../collab/store';
import { failUpdateWrites } from './helpers/collab';
import { database, store, userId, clock, setup, newDocument, client, updateRows } from './helpers/store';

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
