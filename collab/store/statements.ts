// The store's prepared statements, built once per store (building and preparing a query anew costs
// more than running it), and the reads of a stored body made with them.
import { and, asc, eq, gt, isNotNull, isNull, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { documentStateParts, documentStates, documentUpdates, documents } from '../../db/schema';
import { sqlLimit } from '../../src/lib/sql';
import type { StoredBody } from '../yjs-tasks';
import { UnknownDocumentError } from './errors';

/**
 * Documents whose compacted log rows are not all cleared yet: a few at most, read at start through
 * a partial index (document_states_uncleared_idx), not a scan of every state.
 */
export const unfinishedClearings = (db: Db) =>
  db
    .select({ documentId: documentStates.documentId })
    .from(documentStates)
    .where(lt(documentStates.clearedThroughUpdateId, documentStates.throughUpdateId));

export function prepareStatements(db: Db) {
  const p = sql.placeholder;
  const documentId = p('documentId');
  const ofDocument = eq(documentUpdates.documentId, documentId);
  const hasMarkdown = sql<number>`(${documentStates.markdown} IS NOT NULL OR ${documentStates.partsGeneration} IS NOT NULL)`;
  const ofGeneration = and(eq(documentStateParts.documentId, documentId), eq(documentStateParts.generation, p('generation')));
  return {
    // The hot path of live editing. The id is read back through lastInsertRowid, which costs less
    // than a RETURNING row.
    insertUpdate: db
      .insert(documentUpdates)
      .values({
        documentId: p('documentId'),
        tenantId: p('tenantId'),
        userId: p('userId'),
        createdAt: p('createdAt'),
        bytes: p('bytes'),
        data: p('data'),
      })
      .prepare(),
    touchDocument: db
      .update(documents)
      .set({ updatedAt: sql`${p('updatedAt')}` })
      .where(eq(documents.id, p('id')))
      .prepare(),
    // What loading a document reads: the hub loads one at each first connection, REST at each read
    // of a document no one is editing.
    reads: {
      tenantOf: db.select({ tenantId: documents.tenantId }).from(documents).where(eq(documents.id, documentId)).prepare(),
      state: db
        .select({ state: documentStates.state, throughUpdateId: documentStates.throughUpdateId, hasMarkdown, partsGeneration: documentStates.partsGeneration })
        .from(documentStates)
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
      // What tells whether the stored state is as new as a fold, without reading it: a 5 MB state
      // read only to look at the number beside it cost 5-10 ms of the event loop (110 ms cold).
      stateMeta: db
        .select({ throughUpdateId: documentStates.throughUpdateId, hasMarkdown, partsGeneration: documentStates.partsGeneration })
        .from(documentStates)
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
      // The stored text and state with what tells whether they are current: the document exists,
      // and the first log row after the state, if any (found on the (document_id, id) index).
      stored: db
        .select({
          tenantId: documents.tenantId,
          markdown: documentStates.markdown,
          partsGeneration: documentStates.partsGeneration,
          through: documentStates.throughUpdateId,
          after: sql<number | null>`(SELECT ${documentUpdates.id} FROM ${documentUpdates} WHERE ${documentUpdates.documentId} = ${documents.id} AND ${documentUpdates.id} > coalesce(${documentStates.throughUpdateId}, -1) LIMIT 1)`,
        })
        .from(documents)
        .leftJoin(documentStates, eq(documentStates.documentId, documents.id))
        .where(eq(documents.id, documentId))
        .prepare(),
      // What the stored body weighs, without reading it (SQLite's length() of a blob reads its header).
      storedBytes: db
        .select({
          bytes: sql<number>`coalesce((SELECT length(${documentStates.state}) + coalesce((SELECT sum(length(${documentStateParts.data})) FROM ${documentStateParts} WHERE ${documentStateParts.documentId} = ${documentStates.documentId} AND ${documentStateParts.generation} = ${documentStates.partsGeneration} AND ${documentStateParts.kind} = 'state'), 0) FROM ${documentStates} WHERE ${documentStates.documentId} = ${documents.id}), 0) + coalesce((SELECT sum(length(${documentUpdates.data})) FROM ${documentUpdates} WHERE ${documentUpdates.documentId} = ${documents.id} AND ${documentUpdates.id} > coalesce((SELECT ${documentStates.throughUpdateId} FROM ${documentStates} WHERE ${documentStates.documentId} = ${documents.id}), -1)), 0)`,
        })
        .from(documents)
        .where(eq(documents.id, documentId))
        .prepare(),
      lastLogId: db.select({ id: sql<number | null>`max(${documentUpdates.id})` }).from(documentUpdates).where(ofDocument).prepare(),
      storedState: db.select({ state: documentStates.state, partsGeneration: documentStates.partsGeneration }).from(documentStates).where(eq(documentStates.documentId, documentId)).prepare(),
      logAfter: db
        .select({ id: documentUpdates.id, data: documentUpdates.data })
        .from(documentUpdates)
        .where(and(ofDocument, gt(documentUpdates.id, p('through')), isNotNull(documentUpdates.data)))
        .orderBy(documentUpdates.id)
        .prepare(),
    },
    // A large state in parts (Compaction.storeState): a part written, a generation's parts read in order,
    // up to `count` of a generation's parts deleted, and the generations no state row names.
    parts: {
      insert: db
        .insert(documentStateParts)
        .values({ documentId, generation: p('generation'), kind: p('kind'), part: p('part'), tenantId: p('tenantId'), data: p('data') })
        .prepare(),
      read: db
        .select({ data: documentStateParts.data })
        .from(documentStateParts)
        .where(and(ofGeneration, eq(documentStateParts.kind, p('kind'))))
        .orderBy(asc(documentStateParts.part))
        .prepare(),
      deleteSome: db
        .delete(documentStateParts)
        .where(
          and(
            ofGeneration,
            sql`(${documentStateParts.kind}, ${documentStateParts.part}) IN (SELECT ${documentStateParts.kind}, ${documentStateParts.part} FROM ${documentStateParts} WHERE ${ofGeneration} LIMIT ${p('count')})`,
          ),
        )
        .prepare(),
      unnamed: db
        .selectDistinct({ documentId: documentStateParts.documentId, generation: documentStateParts.generation })
        .from(documentStateParts)
        .leftJoin(documentStates, and(eq(documentStates.documentId, documentStateParts.documentId), eq(documentStates.partsGeneration, documentStateParts.generation)))
        .where(isNull(documentStates.documentId))
        .prepare(),
    },
    // A step of clearing compacted rows (Compaction): its progress, where the step ends (the id
    // `skip` rows on, read from the (document_id, id) index alone), the clearing, the new progress.
    clearing: {
      progress: db
        .select({ cleared: documentStates.clearedThroughUpdateId, through: documentStates.throughUpdateId })
        .from(documentStates)
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
      stepEnd: db
        .select({ id: documentUpdates.id })
        .from(documentUpdates)
        .where(and(ofDocument, gt(documentUpdates.id, p('cleared')), lte(documentUpdates.id, p('through'))))
        .orderBy(asc(documentUpdates.id))
        .limit(sqlLimit(1))
        .offset(sqlLimit(p('skip')))
        .prepare(),
      clearData: db
        .update(documentUpdates)
        .set({ data: null })
        .where(and(ofDocument, gt(documentUpdates.id, p('cleared')), lte(documentUpdates.id, p('upTo')), isNotNull(documentUpdates.data)))
        .prepare(),
      setProgress: db
        .update(documentStates)
        .set({ clearedThroughUpdateId: sql`${p('upTo')}` })
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
    },
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

/** A document's stored body as read for a load or a worker (readStored). */
export interface StoredRows {
  tenantId: string;
  state: { state: Buffer; throughUpdateId: number; hasMarkdown: number; partsGeneration: string | null } | undefined;
  /** The log rows after the state, in order. */
  log: { id: number; data: Buffer | null }[];
  body: StoredBody;
  /** The last log row the body reaches (the state's, when no row follows it). */
  through: number;
}

/** A state row's encoded state: inline, or its parts put back together. */
export function stateBytes(statements: Statements, documentId: string, row: { state: Buffer; partsGeneration: string | null }): Buffer {
  return row.partsGeneration === null ? row.state : assembled(statements, documentId, row.partsGeneration, 'state');
}

/** A large state's `kind` ('state' or 'markdown'), its parts of `generation` put back together. */
function assembled({ parts }: Statements, documentId: string, generation: string, kind: 'state' | 'markdown'): Buffer {
  return Buffer.concat(parts.read.all({ documentId, generation, kind }).map((row) => row.data));
}

/**
 * The stored body (read after the log's queue is written): its state row and the log rows after
 * it, as the workers and `replay` take them, and the last row it reaches.
 */
export function readStored(statements: Statements, documentId: string): StoredRows {
  const { reads } = statements;
  const meta = reads.tenantOf.get({ documentId });
  if (!meta) throw new UnknownDocumentError(`document ${documentId} does not exist`);
  const row = reads.state.get({ documentId });
  const state = row && { ...row, state: stateBytes(statements, documentId, row) };
  const log = reads.logAfter.all({ documentId, through: state?.throughUpdateId ?? 0 });
  return {
    tenantId: meta.tenantId,
    state,
    log,
    body: { state: state?.state ?? null, updates: log.map((row) => row.data!) },
    through: log.at(-1)?.id ?? state?.throughUpdateId ?? 0,
  };
}

/**
 * The stored state's row when it is the document's current state (no log row after it); its
 * Markdown is null when it has none yet. Undefined when the log has moved on or there is no state
 * (then the caller loads the document). Read after the log's queue is written.
 */
export function currentStored(statements: Statements, documentId: string): { markdown: string | null } | undefined {
  const row = statements.reads.stored.get({ documentId });
  if (!row) throw new UnknownDocumentError(`document ${documentId} does not exist`);
  if (row.through === null || row.after !== null) return undefined;
  if (row.partsGeneration === null) return row;
  return { markdown: assembled(statements, documentId, row.partsGeneration, 'markdown').toString('utf8') };
}
