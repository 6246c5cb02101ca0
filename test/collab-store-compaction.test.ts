// Compaction and state writes (collab/store/compaction.ts): the log folded into the state, the
// compacted rows cleared later, and a clearing left undone finished at the next start.
import { count, eq, gt } from 'drizzle-orm';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { documentStates, documentUpdates } from '../db/schema';
import { DocumentStore, unfinishedClearings } from '../collab/store';
import { eventually } from './helpers/collab';
import { database, store, tenantId, userId, clock, setup, newDocument, client, updateRows, stateRow, rowsWithData, typeAndRelease } from './helpers/store';

describe('DocumentStore compaction', () => {
  beforeEach(async () => setup());
  afterEach(() => database.close());

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
});
