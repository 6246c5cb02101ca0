// The worker-thread path (collab/store/worker-path.ts): large documents folded by a worker as
// their log grows, and preloaded a slice at a time for their live editors.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD, DocumentStore, textOfState } from '../collab/store';
import { WorkerPool } from '../src/lib/worker-pool';
import { YjsWorkers } from '../collab/workers';
import { eventually } from './helpers/collab';
import { database, userId, clock, setup, newDocument, client, updateRows, stateRow } from './helpers/store';

describe('DocumentStore worker path', () => {
  beforeEach(async () => setup());
  afterEach(() => database.close());

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
});
