// The document store's front (collab/store/document-store.ts): bodies written and read back, replay,
// live documents and their subscribers, REST writes, change listeners.
import { eq, isNull } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { documents, documentStates, documentUpdates } from '../db/schema';
import { CONTENT_FIELD, DocumentStore, InvalidUpdateError, UnknownDocumentError, textOfState } from '../collab/store';
import { newId } from '../src/lib/ids';
import { eventually } from './helpers/collab';
import { database, store, userId, clock, setup, newDocument, client, updateRows, stateRow } from './helpers/store';

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
