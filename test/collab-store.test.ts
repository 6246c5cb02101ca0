// The document store directly: durability of the update log, replay, compaction, live subscribers.
import { count, eq, isNull } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { openDatabase, type Database_ } from '../db/client';
import { documents, documentStates, documentUpdates } from '../db/schema';
import { CONTENT_FIELD, DocumentStore, InvalidUpdateError, UnknownDocumentError, textOfState } from '../collab/store';
import { ManualClock } from '../src/clock';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { createLogger } from '../src/logger';
import { newId } from '../src/ids';

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
    expect(rows[0]!.bytes).toBe(rows[0]!.data!.byteLength);
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
    expect(state).toBeDefined();
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

  it('live documents pass stored updates to subscribers with their origin, and compact on last release', () => {
    const doc = newDocument();
    const live = store.acquire(doc.id);
    store.acquire(doc.id);
    const seen: unknown[] = [];
    store.subscribe(doc.id, (_update, origin) => seen.push(origin));
    const c = client();
    c.text.insert(0, 'hello');
    store.applyUpdate(doc.id, c.updates.pop()!, userId, 'connection-1');
    expect(seen).toEqual(['connection-1']);
    expect(live.getText(CONTENT_FIELD).toString()).toBe('hello');
    store.release(doc.id);
    expect(store.isLive(doc.id)).toBe(true);
    store.release(doc.id);
    expect(store.isLive(doc.id)).toBe(false);
    expect(database.db.select().from(documentStates).where(eq(documentStates.documentId, doc.id)).get()).toBeDefined();
    expect(database.db.select().from(documentUpdates).where(isNull(documentUpdates.data)).all()).toHaveLength(1);
    expect(store.getText(doc.id)).toBe('hello');
  });

  it('replaceText applies minimal edits as one stored update that live editors receive', () => {
    const doc = newDocument();
    store.createBody(doc, 'The quick brown fox', userId);
    const live = store.acquire(doc.id);
    const updates: Uint8Array[] = [];
    store.subscribe(doc.id, (u) => updates.push(u));
    // An editor's view of the document, kept in sync by the updates the store passes on.
    const editor = new Y.Doc();
    Y.applyUpdate(editor, Y.encodeStateAsUpdate(live));
    store.replaceText(doc.id, 'The slow brown fox jumps', userId);
    expect(updates).toHaveLength(1);
    Y.applyUpdate(editor, updates[0]!);
    expect(editor.getText(CONTENT_FIELD).toString()).toBe('The slow brown fox jumps');
    expect(updateRows(doc.id)).toHaveLength(2);
    store.release(doc.id);
  });

  it('textOfState reads a saved state back', () => {
    const doc = newDocument();
    store.createBody(doc, 'version one', userId);
    const state = store.encodeState(doc.id);
    store.replaceText(doc.id, 'version two', userId);
    expect(textOfState(state)).toBe('version one');
    expect(store.getText(doc.id)).toBe('version two');
  });

  it('tells change listeners about every stored change', () => {
    const changed: string[] = [];
    store.onChange((id) => changed.push(id));
    const doc = newDocument();
    store.createBody(doc, 'a', userId);
    store.replaceText(doc.id, 'ab', userId);
    expect(changed).toEqual([doc.id, doc.id]);
  });
});
