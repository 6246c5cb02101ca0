// The document store on its own, for the tests of its parts: a fresh in-memory database with a
// user (setup), documents to write to, and reads of the rows the store keeps.
import { and, asc, eq } from 'drizzle-orm';
import * as Y from 'yjs';
import { CONTENT_FIELD, DocumentStore } from '../../collab/store';
import { openDatabase, type Database_ } from '../../db/client';
import { documents, documentStateParts, documentStates, documentUpdates } from '../../db/schema';
import { buildConfig } from '../../src/config';
import { buildDeps } from '../../src/deps';
import { ManualClock } from '../../src/lib/clock';
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/logger';

export let database: Database_;
export let store: DocumentStore;
export let tenantId: string;
export let userId: string;
export const clock = new ManualClock('2026-03-01T10:00:00.000Z');

export async function setup(compactAfter?: number) {
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

export function newDocument(): { id: string; tenantId: string } {
  const id = newId();
  const now = clock.now().toISOString();
  database.db.insert(documents).values({ id, tenantId, title: 'Doc', createdBy: userId, createdAt: now, updatedAt: now }).run();
  return { id, tenantId };
}

/** A client-side doc whose every local edit is captured as an update. */
export function client() {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on('update', (u: Uint8Array) => updates.push(u));
  return { doc, text: doc.getText(CONTENT_FIELD), updates };
}

export const updateRows = (documentId: string) =>
  database.db.select().from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).all();
export const stateRow = (documentId: string) => database.db.select().from(documentStates).where(eq(documentStates.documentId, documentId)).get()!;
/**
 * A document's state row with a state stored in parts (Compaction.storeState) put back together:
 * its `state` and `markdown` as one inline row would hold them.
 */
export function wholeStateRow(db: Database_['db'], documentId: string) {
  const row = db.select().from(documentStates).where(eq(documentStates.documentId, documentId)).get();
  if (!row || row.partsGeneration === null) return row;
  const parts = (kind: 'state' | 'markdown') =>
    Buffer.concat(
      db
        .select({ data: documentStateParts.data })
        .from(documentStateParts)
        .where(and(eq(documentStateParts.documentId, documentId), eq(documentStateParts.generation, row.partsGeneration!), eq(documentStateParts.kind, kind)))
        .orderBy(asc(documentStateParts.part))
        .all()
        .map((r) => r.data),
    );
  return { ...row, state: parts('state'), markdown: parts('markdown').toString('utf8') };
}
export const rowsWithData = (documentId: string) => updateRows(documentId).filter((r) => r.data !== null).length;

/** A live session of `edits` one-character edits through `on`, released at the end (which compacts); the text typed. */
export function typeAndRelease(on: DocumentStore, documentId: string, edits: number): string {
  const c = client();
  on.acquire(documentId);
  for (let i = 0; i < edits; i++) {
    c.text.insert(c.text.length, `${i % 10}`);
    on.applyUpdate(documentId, c.updates.pop()!, userId, null, { defer: true });
  }
  on.release(documentId);
  return c.text.toString();
}
