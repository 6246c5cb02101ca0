// The document store: the only writer of document bodies.
//
// A body is a Y.Doc with one Y.Text named `content` (Markdown). Every change is appended to
// `document_updates` (author, time, bytes) BEFORE anyone is told about it, so nothing a client has
// seen can be lost on a crash. Loading replays the compacted state plus the log since; past a
// threshold the log is folded into `document_states`, keeping each row's metadata as history.
//
// Documents that live editors hold open (acquire/release) stay in memory as one shared Y.Doc;
// any other access loads the body, works on it and lets it go. REST writes (create, revert,
// templates) and WebSocket edits go through the same `apply` path, so live editors receive REST
// writes as ordinary updates.
//
// Group commit: a commit per update is most of the hub's CPU, so editors' updates (`defer`) are
// applied to the live Y.Doc at once but their log rows wait in a queue that one `setImmediate`
// per event-loop turn writes in a single transaction; every other read or write flushes the queue
// first. Invariant: nothing leaves the process (a broadcast, a sync reply, a REST read, a version
// snapshot, a compacted state) before the updates it contains are durable. If a batch cannot be
// written, each of its documents is tried alone; a document whose rows still cannot be written
// holds changes that are not on disk: it is dropped from memory and its subscribers told, so that
// clients reconnect, reload from disk and resend what is missing.
//
// An update is checked before it touches the document (update-check.ts): one that Yjs could not
// integrate whole, or whose numbers it cannot encode, is refused and nothing of it is applied, so
// a document never holds pending changes and always encodes. One that would take the document's
// encoded state past `maxDocumentBytes` is refused too. The size is tracked as an upper estimate,
// not encoded on every keystroke: the exact size at the last compaction or measurement, plus what
// each accepted change may add (its bytes and an allowance per struct and deleted range, since a
// deletion inside a run splits it), minus the text it deleted. Only when that estimate says no
// and may be well off is the document encoded to measure it. Deletions get a little headroom
// above the limit, so that a document at the limit can always be cut down.
//
// Each compacted state is stored with its Markdown, taken from the same Y.Doc at the same moment.
// While no log row follows the state, reads of the text (content, copy, search, export) and of the
// state itself (a named version) use the stored row and never load Yjs: a document made of ~100,000
// small edits takes Yjs ~200 ms to load. A document created whole (create, copy) is stored with its
// state and text at once.
//
// Large documents (at least `offloadMinBytes`, encoded) are worked on whole in worker threads
// (workers.ts, yjs-tasks.ts), never on the event loop: a REST write of their Markdown (replaceText)
// is diffed and turned into one Yjs update by a worker that loads the body from disk, and the
// update is then stored (and applied to the live copy, if editors hold one, as any editor's
// concurrent update); a version of one whose state is behind its log, and every compaction of one,
// is folded by a worker from the stored state and log, and written unless a newer state was written
// meanwhile. A large document that leaves memory with its state behind (its last editor left, or a
// transient load wrote to it) stays in memory, serving reads, until its fold is stored. REST writes
// of a document's whole text are taken one at a time per document, so that each applies to the
// result of the one before (two PUTs never merge into neither text).
//
// Compaction writes the new state at once, but clears the `data` of the log rows it covers later,
// a hundred rows at a time in slices of a few milliseconds (`cleared_through_update_id` keeps the
// progress, so a restart resumes it): clearing five hundred rows interleaved with other documents'
// dirties a page per few rows, and done in one go it stalled every live document for 15-35 ms.
import { and, asc, count, desc, eq, gt, isNotNull, lt, lte, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import * as Y from 'yjs';
import { inTransaction, type Db } from '../db/client';
import { documentStates, documentUpdates, documents } from '../db/schema';
import { AppError } from '../src/http/errors';
import type { Clock } from '../src/lib/clock';
import { sqlLimit } from '../src/lib/sql';
import { textEdits } from './text-edits';
import { checkUpdate, UpdateProblem } from './update-check';
import { yieldToEventLoop } from '../src/lib/event-loop';
import { WorkersBusyError } from '../src/lib/worker-pool';
import type { YjsWorkers } from './workers';
import { applyEdits, CONTENT_FIELD, replay, type Folded, type StoredBody } from './yjs-tasks';

export { CONTENT_FIELD };

/**
 * Documents whose compacted log rows are not all cleared yet: a few at most, read at start through
 * a partial index (document_states_uncleared_idx), not a scan of every state.
 */
export const unfinishedClearings = (db: Db) =>
  db
    .select({ documentId: documentStates.documentId })
    .from(documentStates)
    .where(lt(documentStates.clearedThroughUpdateId, documentStates.throughUpdateId));

const TOUCH_INTERVAL_MS = 1_000;
export const DEFAULT_MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
/**
 * What an accepted change may add to the encoded state beyond its own bytes: per struct placed
 * against content the document holds (an insertion inside a run splits it) and per deleted range
 * (a deletion inside a run leaves three structs of one); each well above what that adds.
 */
const STRUCT_ALLOWANCE = 16;
const RANGE_ALLOWANCE = 32;
/** What an edit of replaceText may add beyond the text it inserts: its struct, origins and allowance. */
const RUN_ALLOWANCE = 64;
/** How far past the limit deletions alone may take a document, so that one at the limit can be cut down. */
const DELETE_HEADROOM = 64 * 1024;
/**
 * Past its limit, a document is encoded to measure it only if its estimate may be off by this
 * share of the limit, or this many changes were taken in since it was last measured.
 */
const REMEASURE_SHARE = 1 / 64;
const REMEASURE_CHANGES = 8;
/** Compacted log rows cleared per step, and the time a slice of steps may take before it yields. */
const CLEAR_ROWS_PER_STEP = 100;
const CLEAR_SLICE_MS = 3;
/** Documents at least this large (bytes encoded, as estimated) are loaded whole only by the workers. */
export const DEFAULT_OFFLOAD_MIN_BYTES = 256 * 1024;
/** When the worker threads have too much waiting, a document leaving memory asks again after this long. */
const BUSY_RETRY_MS = 1_000;
/**
 * Structs per slice when a large document is loaded for live editors: 1-8 ms of Yjs each, more as
 * the document grows (4,000 took up to 50 ms for the last slices of a document of ~90,000). The
 * slices applied in one turn of the event loop take about SLICE_TURN_MS, then it yields.
 */
const STRUCTS_PER_SLICE = 1_000;
const SLICE_TURN_MS = 8;
/** How long a document preloaded for a connection waits for it before it leaves memory. */
const PRELOAD_WAIT_MS = 10_000;

/**
 * A live document's subscriber (the hub's room): told of every stored update, with the origin
 * passed to `applyUpdate`, and that the document was dropped from memory because its changes
 * could not be stored. An object with methods, not closures: one is kept per open document.
 */
export interface DocumentSubscriber {
  onUpdate(update: Uint8Array, origin: unknown): void;
  onDropped?(err: Error): void;
}

/** A document's subscribers before the first and after the last: one shared empty list. */
const NO_SUBSCRIBERS: readonly DocumentSubscriber[] = Object.freeze([]);

/**
 * Thrown for bytes that are not an update the document can take whole; nothing was stored.
 * `lacksChanges`: it needs changes the document does not hold (see UpdateProblem).
 */
export class InvalidUpdateError extends AppError {
  constructor(
    message: string,
    readonly lacksChanges = false,
  ) {
    super('validation_failed', 'The update cannot be applied to this document', { status: 422, message });
  }
}

/** Thrown when the document has no row (never created, or erased). */
export class UnknownDocumentError extends AppError {
  constructor(message: string) {
    super('not_found', 'Document not found', { message });
  }
}

/** Writing to the log failed; the update was neither stored nor passed on. */
export class PersistenceError extends AppError {
  constructor(message: string) {
    // A fault of the server: no detail for the client, the error in the log.
    super('internal', '', { message, log: 'document change could not be stored' });
  }
}

/** The change would take the document past its size limit; nothing was stored. `detail`: what the client is told. */
export class DocumentTooLargeError extends AppError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
    detail = `The document would be about ${bytes} bytes encoded, above the limit of ${limit} bytes (DOCUMENT_MAX_BYTES); nothing was changed`,
  ) {
    super('payload_too_large', detail, { message: `the document would be about ${bytes} bytes encoded, above its limit of ${limit} bytes` });
  }
}

/** What is stored for the document (or a version of it) cannot be loaded or encoded. `detail`: what the client is told. */
export class UnreadableDocumentError extends AppError {
  constructor(message: string, detail = 'The stored body of this document cannot be encoded or loaded, so it cannot be read, copied or versioned') {
    super('document_unreadable', detail, { message, log: 'stored document cannot be read' });
  }
}

/** Transaction origin carrying the author, so the update handler can record who wrote. */
class Authored {
  constructor(
    readonly userId: string | null,
    readonly source: unknown,
    /** What the change may add to the encoded state (see DocumentStore); worked out from the update when absent. */
    readonly charge?: number,
  ) {}
}

interface LoadedDoc {
  id: string;
  tenantId: string;
  doc: Y.Doc;
  /** Live holders (WebSocket connections); 0 for a transient load. */
  refs: number;
  /** Replaced, never changed in place, so that a broadcast in progress is not disturbed by a change. */
  subscribers: readonly DocumentSubscriber[];
  updatesSinceCompaction: number;
  /** When `documents.updated_at` was last written for this document, and when it last changed (ms). */
  touchedAt: number;
  editedAt: number;
  lastUpdateId: number;
  /** Upper estimate of the encoded state's size; what the changes since it was last measured may have added, and how many they are. */
  bytes: number;
  slack: number;
  unmeasured: number;
  /** Bytes of text the transaction being applied deleted (counted before Yjs drops them). */
  freed: number;
  /** The stored state has no Markdown beside it (written before it was kept): the next compaction adds it. */
  lacksMarkdown: boolean;
  /** A worker is folding the stored body (see compactSoon). */
  folding: boolean;
  /** No one holds it: it leaves memory once its fold is stored (a large document whose state was behind). */
  leaving: boolean;
  /** Preloaded for a connection (see preload): leaves memory when this ends, unless acquired before. */
  expiry?: NodeJS.Timeout;
  /**
   * The whole document as one update, encoded by the worker that preloaded it, until its first
   * change: a new editor's first sync reply without encoding it on the event loop (~50 ms for a
   * 5 MiB document of ~100,000 pieces).
   */
  encoded?: Uint8Array;
  /**
   * Its Markdown as last read from the Y.Doc, until its next change: reads of a live document
   * between edits (REST content reads, export, the search index's refresh) do not have Yjs build
   * the string again (20-40 ms for 5 MiB of ~100,000 pieces).
   */
  text?: string;
}

/** Optional instrumentation (the server's metrics): told of what the store writes. */
export interface StoreMetrics {
  updatesPersisted(rows: number, bytes: number): void;
  compacted(): void;
}

export interface StoreOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** Fold the log into the state row once this many updates have accumulated. */
  compactAfter?: number;
  /** Largest encoded state a change may give a document (DOCUMENT_MAX_BYTES). */
  maxDocumentBytes?: number;
  metrics?: StoreMetrics;
  /** Threads for the whole-body work on large documents; without them, all of it is done inline. */
  workers?: YjsWorkers;
  /** Documents at least this large (encoded) go to `workers` (DEFAULT_OFFLOAD_MIN_BYTES). */
  offloadMinBytes?: number;
  /** How long a preloaded document waits to be acquired (PRELOAD_WAIT_MS). */
  preloadWaitMs?: number;
}

/** A document's body and text at one moment: what a named version keeps. */
export interface Snapshot {
  state: Uint8Array;
  markdown: string;
}

/** A document's stored body as read for a load or a worker (DocumentStore.readStored). */
interface StoredRows {
  tenantId: string;
  state: { state: Buffer; throughUpdateId: number; hasMarkdown: number } | undefined;
  /** The log rows after the state, in order. */
  log: { id: number; data: Buffer | null }[];
  body: StoredBody;
  /** The last log row the body reaches (the state's, when no row follows it). */
  through: number;
}

/** A change applied in memory whose log row is not written yet. */
interface QueuedChange {
  documentId: string;
  tenantId: string;
  userId: string | null;
  update: Uint8Array;
  origin: unknown;
  /** The document it was applied to; none for a brand-new body (createBody). */
  loaded?: LoadedDoc;
  /** The update is the document's whole state, stored as its state row in the same transaction: the log row keeps only its size. */
  inState?: boolean;
}

export interface ChangeRow {
  id: number;
  userId: string | null;
  createdAt: string;
  bytes: number;
}

export class DocumentStore {
  private readonly live = new Map<string, LoadedDoc>();
  private readonly changeListeners = new Set<(documentId: string) => void>();
  /**
   * One string per tenant id for all loaded documents: each read of the column is a new string,
   * and a thousand open documents of one tenant would hold a thousand copies.
   */
  private readonly tenantIds = new Map<string, string>();
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly logger?: Logger;
  private readonly metrics?: StoreMetrics;
  private readonly compactAfter: number;
  readonly maxDocumentBytes: number;
  private readonly insertUpdate;
  private readonly touchDocument;
  private readonly reads;
  private readonly clearing;
  private queue: QueuedChange[] = [];
  private flushScheduled = false;
  /** Documents whose compacted log rows still hold data (see clearSlice). */
  private readonly uncleared = new Set<string>();
  private clearScheduled = false;
  private readonly workers?: YjsWorkers;
  private readonly offloadMinBytes: number;
  private readonly preloadWaitMs: number;
  /** Per document, the end of the chain of REST writes of its whole text (see `exclusive`). */
  private readonly writers = new Map<string, Promise<unknown>>();
  /** Documents being loaded a slice at a time (see `preload`). */
  private readonly preloading = new Map<string, Promise<void>>();
  /** Folds running in the workers (see `settled`). */
  private readonly background = new Set<Promise<unknown>>();
  private closed = false;

  constructor(opts: StoreOptions) {
    this.db = opts.db;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.metrics = opts.metrics;
    this.compactAfter = opts.compactAfter ?? 500;
    this.maxDocumentBytes = opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    this.workers = opts.workers;
    this.offloadMinBytes = opts.offloadMinBytes ?? DEFAULT_OFFLOAD_MIN_BYTES;
    this.preloadWaitMs = opts.preloadWaitMs ?? PRELOAD_WAIT_MS;
    // Prepared once: the log write is the hot path of live editing. The id is read back through
    // lastInsertRowid, which costs less than a RETURNING row.
    this.insertUpdate = this.db
      .insert(documentUpdates)
      .values({
        documentId: sql.placeholder('documentId'),
        tenantId: sql.placeholder('tenantId'),
        userId: sql.placeholder('userId'),
        createdAt: sql.placeholder('createdAt'),
        bytes: sql.placeholder('bytes'),
        data: sql.placeholder('data'),
      })
      .prepare();
    this.touchDocument = this.db
      .update(documents)
      .set({ updatedAt: sql`${sql.placeholder('updatedAt')}` })
      .where(eq(documents.id, sql.placeholder('id')))
      .prepare();
    // What loading a document reads: the hub loads one at each first connection, REST at each read
    // of a document no one is editing. Building and preparing them anew cost most of a small load.
    const documentId = sql.placeholder('documentId');
    this.reads = {
      tenantOf: this.db.select({ tenantId: documents.tenantId }).from(documents).where(eq(documents.id, documentId)).prepare(),
      state: this.db
        .select({ state: documentStates.state, throughUpdateId: documentStates.throughUpdateId, hasMarkdown: sql<number>`${documentStates.markdown} IS NOT NULL` })
        .from(documentStates)
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
      // The stored text and state with what tells whether they are current: the document exists,
      // and the first log row after the state, if any (found on the (document_id, id) index).
      stored: this.db
        .select({
          tenantId: documents.tenantId,
          markdown: documentStates.markdown,
          through: documentStates.throughUpdateId,
          after: sql<number | null>`(SELECT ${documentUpdates.id} FROM ${documentUpdates} WHERE ${documentUpdates.documentId} = ${documents.id} AND ${documentUpdates.id} > coalesce(${documentStates.throughUpdateId}, -1) LIMIT 1)`,
        })
        .from(documents)
        .leftJoin(documentStates, eq(documentStates.documentId, documents.id))
        .where(eq(documents.id, documentId))
        .prepare(),
      // What the stored body weighs, without reading it (SQLite's length() of a blob reads its header).
      storedBytes: this.db
        .select({
          bytes: sql<number>`coalesce((SELECT length(${documentStates.state}) FROM ${documentStates} WHERE ${documentStates.documentId} = ${documents.id}), 0) + coalesce((SELECT sum(length(${documentUpdates.data})) FROM ${documentUpdates} WHERE ${documentUpdates.documentId} = ${documents.id} AND ${documentUpdates.id} > coalesce((SELECT ${documentStates.throughUpdateId} FROM ${documentStates} WHERE ${documentStates.documentId} = ${documents.id}), -1)), 0)`,
        })
        .from(documents)
        .where(eq(documents.id, documentId))
        .prepare(),
      lastLogId: this.db.select({ id: sql<number | null>`max(${documentUpdates.id})` }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).prepare(),
      storedState: this.db.select({ state: documentStates.state }).from(documentStates).where(eq(documentStates.documentId, documentId)).prepare(),
      logAfter: this.db
        .select({ id: documentUpdates.id, data: documentUpdates.data })
        .from(documentUpdates)
        .where(and(eq(documentUpdates.documentId, documentId), gt(documentUpdates.id, sql.placeholder('through')), isNotNull(documentUpdates.data)))
        .orderBy(documentUpdates.id)
        .prepare(),
    };
    // A step of clearing compacted rows (clearCompacted): its progress, where the step ends (the id
    // `skip` rows on, read from the (document_id, id) index alone), the clearing, the new progress.
    const p = sql.placeholder;
    const ofDocument = eq(documentUpdates.documentId, documentId);
    this.clearing = {
      progress: this.db
        .select({ cleared: documentStates.clearedThroughUpdateId, through: documentStates.throughUpdateId })
        .from(documentStates)
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
      stepEnd: this.db
        .select({ id: documentUpdates.id })
        .from(documentUpdates)
        .where(and(ofDocument, gt(documentUpdates.id, p('cleared')), lte(documentUpdates.id, p('through'))))
        .orderBy(asc(documentUpdates.id))
        .limit(sqlLimit(1))
        .offset(sqlLimit(p('skip')))
        .prepare(),
      clearData: this.db
        .update(documentUpdates)
        .set({ data: null })
        .where(and(ofDocument, gt(documentUpdates.id, p('cleared')), lte(documentUpdates.id, p('upTo')), isNotNull(documentUpdates.data)))
        .prepare(),
      setProgress: this.db
        .update(documentStates)
        .set({ clearedThroughUpdateId: sql`${p('upTo')}` })
        .where(eq(documentStates.documentId, documentId))
        .prepare(),
    };
    // Clearing that a previous process left unfinished.
    for (const { documentId } of unfinishedClearings(this.db).all()) this.uncleared.add(documentId);
    this.scheduleClear();
  }

  // ---- live documents (the WebSocket hub) ----

  /** Loads the document (once) and keeps it in memory until every holder has released it. */
  acquire(documentId: string): Y.Doc {
    let loaded = this.live.get(documentId);
    if (!loaded) {
      loaded = this.load(documentId);
      this.live.set(documentId, loaded);
    }
    loaded.refs += 1;
    loaded.leaving = false;
    stopExpiry(loaded);
    return loaded.doc;
  }

  /**
   * Loads a large document into memory for the live editors about to acquire it, a few slices per
   * turn of the event loop (SLICE_TURN_MS), instead of in one go at their first acquire (Yjs takes
   * ~200 ms for a 5 MiB document of ~100,000 pieces): a worker answers its body as updates that
   * each integrate whole (yjs-tasks.ts `slice`). Does nothing for a document in memory or a small
   * one. The hub awaits it while it admits a connection; a document no one acquires within PRELOAD_WAIT_MS leaves again.
   * Should a new state be stored meanwhile (its rows then cleared), what was loaded is let go, and
   * the acquire loads the document as usual.
   */
  preload(documentId: string): Promise<void> {
    if (this.live.has(documentId) || !this.offloads(documentId)) return Promise.resolve();
    let work = this.preloading.get(documentId);
    if (!work) {
      work = this.loadInSlices(documentId).finally(() => this.preloading.delete(documentId));
      this.preloading.set(documentId, work);
    }
    return work;
  }

  private async loadInSlices(documentId: string): Promise<void> {
    this.flush();
    const stored = this.readStored(documentId);
    const { state, log } = stored;
    const { slices, whole } = await this.inWorker(documentId, (workers) => workers.slice(stored.body, STRUCTS_PER_SLICE));
    const doc = new Y.Doc();
    try {
      let turnStarted = performance.now();
      for (const slice of slices) {
        if (performance.now() - turnStarted >= SLICE_TURN_MS) {
          await yieldToEventLoop();
          turnStarted = performance.now();
        }
        Y.applyUpdate(doc, slice);
      }
      this.flush();
      const now = this.reads.state.get({ documentId });
      if (this.closed || this.live.has(documentId) || now?.throughUpdateId !== state?.throughUpdateId) {
        doc.destroy();
        return;
      }
      // What was written meanwhile (a REST write to a document no one held), after it.
      const since = this.reads.logAfter.all({ documentId, through: stored.through });
      const dropped = replay(doc, { state: null, updates: since.map((row) => row.data!) });
      const loaded = this.track(documentId, { ...stored, log: [...log, ...since] }, doc, dropped);
      if (since.length === 0) loaded.encoded = whole;
      this.live.set(documentId, loaded);
      loaded.expiry = setTimeout(() => {
        loaded.expiry = undefined;
        if (this.live.get(documentId) === loaded && loaded.refs === 0) this.unload(loaded);
      }, this.preloadWaitMs);
      loaded.expiry.unref();
    } catch (err) {
      doc.destroy();
      throw new UnreadableDocumentError(`the stored body of document ${documentId} cannot be loaded: ${(err as Error).message}`);
    }
  }

  /**
   * The last release compacts what the session wrote and unloads the document. A document dropped
   * after a failed write is no longer held: its subscribers were told, and must not release it.
   */
  release(documentId: string): void {
    const loaded = this.live.get(documentId);
    if (!loaded || loaded.refs === 0) return;
    loaded.refs -= 1;
    if (loaded.refs > 0) return;
    this.unload(loaded);
  }

  /**
   * Lets go of every document no one holds (one leaving while its fold runs), compacting each
   * inline: at shutdown, when the event loop is free to be held.
   */
  unloadIdle(): void {
    for (const loaded of [...this.live.values()]) if (loaded.refs === 0) this.unload(loaded, true);
  }

  /** Lets go of a document no one holds without compacting it: it is being erased. */
  discard(documentId: string): void {
    const loaded = this.live.get(documentId);
    if (!loaded || loaded.refs > 0) return;
    this.flush();
    if (this.live.get(documentId) !== loaded) return;
    stopExpiry(loaded);
    this.live.delete(documentId);
    loaded.doc.destroy();
  }

  /**
   * Compacts what the document's session wrote (and any text its state lacks) and takes it out of
   * memory; a large one stays until a worker's fold of it is stored (unless `inline`).
   */
  private unload(loaded: LoadedDoc, inline = false): void {
    const documentId = loaded.id;
    stopExpiry(loaded);
    // What is queued is stored before the state is compacted; if it cannot be, the flush has
    // dropped the document already.
    this.flush();
    if (this.live.get(documentId) !== loaded) return;
    try {
      if (loaded.editedAt > loaded.touchedAt) {
        this.touchDocument.run({ id: documentId, updatedAt: new Date(loaded.editedAt).toISOString() });
        loaded.touchedAt = loaded.editedAt;
      }
      if (loaded.updatesSinceCompaction > 0 || loaded.lacksMarkdown) {
        if (!inline && this.offloaded(loaded)) {
          loaded.leaving = true;
          this.compactSoon(loaded);
          return;
        }
        this.compactLoaded(loaded);
      }
    } catch (err) {
      // The log already holds every update; a failed compaction only costs load time later.
      this.logger?.warn({ err, documentId }, 'compaction on unload failed');
    }
    this.live.delete(documentId);
    loaded.subscribers = NO_SUBSCRIBERS;
    loaded.doc.destroy();
  }

  /** Whether the document is large enough for its whole-body work to go to the workers. */
  private offloaded(loaded: LoadedDoc): boolean {
    return this.workers !== undefined && loaded.bytes >= this.offloadMinBytes;
  }

  /**
   * Compacts a large document in a worker (see foldStored), in the background: what follows is
   * served from memory meanwhile. A document leaving memory leaves once its fold is stored, or is
   * folded again if it was written to meanwhile; one acquired again stays.
   */
  private compactSoon(loaded: LoadedDoc): void {
    if (loaded.folding) return;
    loaded.folding = true;
    const covered = loaded.updatesSinceCompaction;
    let busy = false;
    this.inBackground(
      this.foldStored(loaded.id)
        .then((fold) => this.folded(loaded, fold.through, fold.state.byteLength, covered))
        .catch((err: unknown) => {
          if (this.closed) return;
          // Too much work waits for the threads: a live document tries again at its next change
          // past the threshold, one leaving memory in a while (below).
          if (err instanceof WorkersBusyError) {
            busy = true;
            return;
          }
          // The log holds every update; a failed compaction only costs load time later. A document
          // leaving memory is compacted inline instead (or, that failing too, let go).
          this.logger?.warn({ err, documentId: loaded.id }, 'compaction failed');
          const leaving = loaded.leaving;
          loaded.leaving = false;
          if (leaving && this.live.get(loaded.id) === loaded && loaded.refs === 0) this.unload(loaded, true);
        })
        .finally(() => {
          loaded.folding = false;
          const leaves = () => loaded.leaving && !this.closed && this.live.get(loaded.id) === loaded && loaded.refs === 0;
          if (!leaves()) return;
          if (busy) {
            setTimeout(() => leaves() && this.compactSoon(loaded), BUSY_RETRY_MS).unref();
            return;
          }
          if (loaded.updatesSinceCompaction > 0 || loaded.lacksMarkdown) this.compactSoon(loaded);
          else this.unload(loaded, true);
        }),
    );
  }

  /** A fold through log row `through` (covering `covered` of the updates counted since the last one) was stored for `loaded`. */
  private folded(loaded: LoadedDoc, through: number, bytes: number, covered: number): void {
    loaded.lacksMarkdown = false;
    if (loaded.lastUpdateId === through) {
      loaded.updatesSinceCompaction = 0;
      this.measured(loaded, bytes);
    } else {
      loaded.updatesSinceCompaction = Math.max(0, loaded.updatesSinceCompaction - covered);
    }
  }

  private inBackground(work: Promise<unknown>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }

  /** Resolves once no fold runs in the background (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /**
   * Stops the background work: what folds still running return is dropped (the log holds
   * everything they would have folded). At shutdown, after unloadIdle, before the database closes.
   */
  close(): void {
    this.closed = true;
  }

  isLive(documentId: string): boolean {
    return this.live.has(documentId);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /**
   * Every stored update of a live document, once it is durable; and, if its changes could not be
   * stored, that the document was dropped. Ends with `unsubscribe` or when the document unloads.
   */
  subscribe(documentId: string, subscriber: DocumentSubscriber): void {
    const loaded = this.live.get(documentId);
    if (!loaded) throw new Error(`subscribe needs an acquired document (${documentId})`);
    // concat, not a spread: its array has exactly the room it needs (a spread's has ~130 bytes spare).
    if (!loaded.subscribers.includes(subscriber)) loaded.subscribers = loaded.subscribers.concat([subscriber]);
  }

  unsubscribe(documentId: string, subscriber: DocumentSubscriber): void {
    const loaded = this.live.get(documentId);
    if (!loaded) return;
    const rest = loaded.subscribers.filter((s) => s !== subscriber);
    loaded.subscribers = rest.length > 0 ? rest : NO_SUBSCRIBERS;
  }

  /** Fired after any stored change of any document (REST or live); the search index listens. */
  onChange(listener: (documentId: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  // ---- reading ----

  /**
   * The document's current Markdown. From memory when it is open, else the text stored beside its
   * compacted state when no change follows that state: no Yjs load (what export and every other
   * read of a whole body should call).
   */
  getText(documentId: string): string {
    this.flush();
    if (!this.live.has(documentId)) {
      const stored = this.currentStored(documentId);
      if (stored?.markdown != null) return stored.markdown;
    }
    return this.with(documentId, textOf);
  }

  /**
   * Reads the document's Y.Doc: the live one while editors hold it open, else a transient load.
   * `fn` must not change it (comments resolve their anchors against it this way).
   */
  read<T>(documentId: string, fn: (doc: Y.Doc) => T): T {
    return this.with(documentId, (loaded) => fn(loaded.doc));
  }

  /** The full encoded state (what a named version keeps), or what a peer at `stateVector` lacks. */
  encodeState(documentId: string, stateVector?: Uint8Array): Uint8Array {
    return this.with(documentId, (loaded) => (loaded.encoded && lacksAll(stateVector) ? loaded.encoded : encode(loaded, stateVector)));
  }

  /**
   * The full encoded state and its Markdown, of the same moment (what a named version keeps). A
   * document no one holds whose stored state is current is read as stored, without loading Yjs; a
   * large one whose state is behind is folded by a worker (and that fold stored as its state).
   */
  async snapshot(documentId: string): Promise<Snapshot> {
    this.flush();
    if (!this.live.has(documentId)) {
      const stored = this.currentStored(documentId);
      const state = stored?.markdown != null ? this.reads.storedState.get({ documentId })?.state : undefined;
      if (stored?.markdown != null && state) return { state: new Uint8Array(state.buffer, state.byteOffset, state.byteLength), markdown: stored.markdown };
    }
    if (this.offloads(documentId)) {
      const loaded = this.live.get(documentId);
      const covered = loaded?.updatesSinceCompaction ?? 0;
      const fold = await this.foldStored(documentId);
      if (loaded && this.live.get(documentId) === loaded) this.folded(loaded, fold.through, fold.state.byteLength, covered);
      // Writing the fold was a few milliseconds per MiB; what the caller writes next gets a turn of its own.
      await yieldToEventLoop();
      return fold;
    }
    return this.with(documentId, (loaded) => ({ state: encode(loaded), markdown: textOf(loaded) }));
  }

  /** Whether the document (live, or as stored) is large enough for its whole-body work to go to the workers. */
  private offloads(documentId: string): boolean {
    if (!this.workers) return false;
    const loaded = this.live.get(documentId);
    if (loaded) return this.offloaded(loaded);
    const row = this.reads.storedBytes.get({ documentId });
    if (!row) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    return row.bytes >= this.offloadMinBytes;
  }

  /**
   * The stored body (call after `flush`): its state row and the log rows after it, as the workers
   * and `replay` take them, and the last row it reaches.
   */
  private readStored(documentId: string): StoredRows {
    const meta = this.reads.tenantOf.get({ documentId });
    if (!meta) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    const state = this.reads.state.get({ documentId });
    const log = this.reads.logAfter.all({ documentId, through: state?.throughUpdateId ?? 0 });
    return {
      tenantId: meta.tenantId,
      state,
      log,
      body: { state: state?.state ?? null, updates: log.map((row) => row.data!) },
      through: log.at(-1)?.id ?? state?.throughUpdateId ?? 0,
    };
  }

  /**
   * The stored body folded by a worker into one state with its Markdown, of the moment of the call
   * (every queued change stored first). It is written as the compacted state unless one as new was
   * written meanwhile, or the document is gone.
   */
  private async foldStored(documentId: string): Promise<Folded & { through: number }> {
    this.flush();
    const { tenantId, body, through } = this.readStored(documentId);
    const fold = await this.inWorker(documentId, (workers) => workers.fold(body));
    if (this.closed) return { ...fold, through };
    inTransaction(this.db, () => {
      if (!this.reads.tenantOf.get({ documentId })) return;
      const current = this.reads.state.get({ documentId });
      if (current && current.throughUpdateId >= through && current.hasMarkdown) return;
      this.writeState({ id: documentId, tenantId }, Buffer.from(fold.state.buffer, fold.state.byteOffset, fold.state.byteLength), fold.markdown, through);
    });
    return { ...fold, through };
  }

  /** Runs whole-body work in a worker; a body the worker cannot load is an UnreadableDocumentError. */
  private async inWorker<T>(documentId: string, work: (workers: YjsWorkers) => Promise<T>): Promise<T> {
    try {
      return await work(this.workers!);
    } catch (err) {
      if (err instanceof WorkersBusyError) throw err;
      if (!this.closed) this.logger?.error({ err, documentId }, 'stored document cannot be worked on');
      throw new UnreadableDocumentError(`the stored body of document ${documentId} cannot be worked on: ${(err as Error).message}`);
    }
  }

  /**
   * Runs `fn` after every REST write of the document's whole text started before it has ended:
   * each such write then applies to the result of the one before.
   */
  private exclusive<T>(documentId: string, fn: () => T | Promise<T>): Promise<T> {
    const before = this.writers.get(documentId) ?? Promise.resolve();
    const result = before.then(fn);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.writers.set(documentId, done);
    void done.then(() => {
      if (this.writers.get(documentId) === done) this.writers.delete(documentId);
    });
    return result;
  }

  /**
   * The stored state's row when it is the document's current state (no log row after it); its
   * Markdown is null when it has none yet. Undefined when the log has moved on or there is no state
   * (then the caller loads the document). Call after `flush`.
   */
  private currentStored(documentId: string): { markdown: string | null } | undefined {
    const row = this.reads.stored.get({ documentId });
    if (!row) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    if (row.through === null || row.after !== null) return undefined;
    return row;
  }

  /** What the stored document holds, as a sync step 1 announces it. */
  encodeStateVector(documentId: string): Uint8Array {
    return this.with(documentId, (loaded) => Y.encodeStateVector(loaded.doc));
  }

  /** The change history, newest first: one row per stored update, compacted or not. */
  listChanges(documentId: string, page: { limit: number; offset: number }): { rows: ChangeRow[]; total: number } {
    this.flush();
    const rows = this.db
      .select({
        id: documentUpdates.id,
        userId: documentUpdates.userId,
        createdAt: documentUpdates.createdAt,
        bytes: documentUpdates.bytes,
      })
      .from(documentUpdates)
      .where(eq(documentUpdates.documentId, documentId))
      .orderBy(desc(documentUpdates.id))
      .limit(sqlLimit(page.limit))
      .offset(sqlLimit(page.offset))
      .all();
    const total =
      this.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).get()?.n ?? 0;
    return { rows, total };
  }

  // ---- writing ----

  /**
   * The body of a just-inserted document row. Empty content stores nothing. Inside the caller's
   * transaction the write nests as a savepoint; call `flush()` before opening that transaction, so
   * that editors' queued rows are not committed (and broadcast) with a transaction that may roll back.
   */
  createBody(doc: { id: string; tenantId: string }, markdown: string, userId: string | null): void {
    if (markdown.length === 0) return;
    const scratch = new Y.Doc();
    scratch.getText(CONTENT_FIELD).insert(0, markdown);
    const update = Y.encodeStateAsUpdate(scratch);
    // What Yjs holds, should it differ from what was given.
    const stored = scratch.getText(CONTENT_FIELD).toString();
    scratch.destroy();
    if (update.byteLength > this.maxDocumentBytes) throw new DocumentTooLargeError(update.byteLength, this.maxDocumentBytes);
    this.flush();
    // The first update of an empty document is its whole state: stored once, as the compacted state
    // with its text, in the transaction of its log row (which keeps its author, time and size), so
    // that no read of the new document loads Yjs.
    inTransaction(this.db, () => {
      this.queue.push({ documentId: doc.id, tenantId: doc.tenantId, userId, update, origin: null, inState: true });
      this.commitQueued(doc.id);
      const through = this.reads.lastLogId.get({ documentId: doc.id })?.id;
      if (through == null) throw new PersistenceError(`the first change of document ${doc.id} was not stored`);
      this.writeState({ id: doc.id, tenantId: doc.tenantId }, Buffer.from(update.buffer, update.byteOffset, update.byteLength), stored, through, true);
    });
  }

  /**
   * Applies a Yjs update by `userId`: it is logged durably, then passed to the document's
   * subscribers with `origin` (the hub uses it to skip the sender). By default it is stored before
   * this returns. With `defer` (the hub's editors), a live document takes it at once and its row
   * joins the batch written at the end of this event-loop turn; subscribers hear of it after that.
   * Bytes that are not an update the document can take whole throw InvalidUpdateError, and one
   * that would take it past its size limit DocumentTooLargeError; neither leaves any trace.
   */
  applyUpdate(
    documentId: string,
    update: Uint8Array,
    userId: string | null,
    origin: unknown = null,
    options: { defer?: boolean } = {},
  ): void {
    const apply = (loaded: LoadedDoc) => {
      // Judged (decoded first, which rejects garbage) before it can touch the document.
      const shape = checkUpdate(update, loaded.doc);
      if (shape instanceof UpdateProblem) throw new InvalidUpdateError(`update refused: ${shape.reason}`, shape.lacksChanges);
      const charge = update.byteLength + STRUCT_ALLOWANCE * shape.placedInside + RANGE_ALLOWANCE * shape.deleteRanges;
      this.makeRoom(loaded, charge, shape.structs === 0);
      integrate(loaded, update, new Authored(userId, origin, charge), this.logger);
    };
    const live = options.defer ? this.live.get(documentId) : undefined;
    if (live) apply(live);
    else this.with(documentId, apply);
  }

  /**
   * Writes every queued change now, in one transaction, then passes each on. A failed batch is
   * logged and its live documents dropped (see `subscribe`); it does not throw.
   */
  flush(): void {
    this.writeQueued();
  }

  /**
   * Makes the content equal to `markdown` as ONE transaction of minimal edits (textEdits), so that
   * live editors' cursors outside the changed runs stay where they are and their own concurrent
   * edits merge; with `snapshotBefore`, returns the snapshot of the moment before (taken in the same
   * turn of REST writes). Returns the text as it then is: `markdown`, or with the changes made
   * meanwhile (a live editor's while a worker diffed it, or stored to a document no one holds)
   * merged in. Throws DocumentTooLargeError, changing nothing, if the result would be too large. A large document is diffed and edited by a worker
   * (see the file's comment).
   */
  async replaceText(
    documentId: string,
    markdown: string,
    userId: string | null,
    options: { snapshotBefore?: boolean } = {},
  ): Promise<{ before?: Snapshot; text: string }> {
    const markdownBytes = Buffer.byteLength(markdown);
    if (markdownBytes > this.maxDocumentBytes) throw new DocumentTooLargeError(markdownBytes, this.maxDocumentBytes);
    return this.exclusive(documentId, async () => {
      const before = options.snapshotBefore ? await this.snapshot(documentId) : undefined;
      if (this.workers && (this.offloads(documentId) || markdownBytes >= this.offloadMinBytes)) {
        return { before, text: await this.replaceInWorker(documentId, markdown, userId) };
      }
      this.replaceInline(documentId, markdown, userId);
      return { before, text: markdown };
    });
  }

  private replaceInline(documentId: string, markdown: string, userId: string | null): void {
    this.with(documentId, (loaded) => {
      const text = loaded.doc.getText(CONTENT_FIELD);
      const current = text.toString();
      if (current === markdown) return;
      const parts = textEdits(current, markdown);
      // What the edits may add (their charge, as for an update), and that less the text they delete.
      let charge = 0;
      let removed = 0;
      let inserts = false;
      for (const part of parts) {
        if (part.added) {
          charge += Buffer.byteLength(part.value) + RUN_ALLOWANCE;
          inserts = true;
        } else if (part.removed) {
          charge += RUN_ALLOWANCE;
          removed += Buffer.byteLength(part.value);
        }
      }
      this.makeRoom(loaded, charge - removed, !inserts);
      applyEdits(text, parts, new Authored(userId, null, charge));
    });
  }

  /**
   * The worker loads the stored body, applies the edits and answers them as one update, with the
   * result folded (so its exact size is known). The update is then stored as any editor's: into
   * the live copy if editors hold one (merging with what they wrote meanwhile), else straight to
   * the log, with the fold as the compacted state when no other change came in between.
   */
  private async replaceInWorker(documentId: string, markdown: string, userId: string | null): Promise<string> {
    // The request's 5 MiB body was just read and parsed in this turn; reading the stored body and
    // handing both to the worker (copies of as much again) get one of their own.
    await yieldToEventLoop();
    this.flush();
    const { tenantId, body, through } = this.readStored(documentId);
    const edited = await this.inWorker(documentId, (workers) => workers.edit(body, markdown));
    if (edited.update === null) return markdown;
    // The worker's text after the edits is `markdown` (it checks), not sent back.
    const bytes = edited.state.byteLength;
    if (bytes > this.maxDocumentBytes + (edited.inserts ? 0 : DELETE_HEADROOM)) throw new DocumentTooLargeError(bytes, this.maxDocumentBytes);
    this.flush();
    if (!this.reads.tenantOf.get({ documentId })) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    const state = Buffer.from(edited.state.buffer, edited.state.byteOffset, edited.state.byteLength);
    const live = this.live.get(documentId);
    if (live) {
      // Current: nothing was written to it since the worker read it; else the update merges as a
      // concurrent editor's would, and the size is estimated as for one.
      const current = live.lastUpdateId === through;
      const charge = chargeOf(edited.update);
      if (!current) this.makeRoom(live, charge, !edited.inserts);
      integrate(live, edited.update, new Authored(userId, null, charge), this.logger);
      this.commitQueued(documentId);
      if (!current) return textOf(live);
      // The worker's fold is the compacted state, written in a turn of its own (integrating a
      // large edit and writing ~10 MB each take tens of milliseconds), if nothing came after.
      const written = live.lastUpdateId;
      await yieldToEventLoop();
      this.flush();
      if (this.closed || this.live.get(documentId) !== live || live.lastUpdateId !== written) return markdown;
      this.writeState(live, state, markdown, written);
      this.folded(live, written, bytes, live.updatesSinceCompaction);
      return markdown;
    }
    const current = (this.reads.lastLogId.get({ documentId })?.id ?? 0) === through;
    this.queue.push({ documentId, tenantId, userId, update: edited.update, origin: null });
    this.commitQueued(documentId);
    const written = this.reads.lastLogId.get({ documentId })?.id;
    if (current && written != null) {
      this.writeState({ id: documentId, tenantId }, state, markdown, written);
      return markdown;
    }
    this.inBackground(this.foldStored(documentId).catch((err: unknown) => this.logger?.warn({ err, documentId }, 'compaction failed')));
    // Changes stored meanwhile were merged: the text is theirs and `markdown`'s, read back.
    return this.getText(documentId);
  }

  /** Folds the log into the state row now (normally automatic), clearing the rows it covers. */
  compact(documentId: string): void {
    this.with(documentId, (loaded) => this.compactLoaded(loaded));
    this.clearCompacted(documentId, Infinity);
  }

  // ---- internals ----

  /**
   * Runs `fn` on the live document, or on a transient load of it, with every queued change stored
   * before (so `fn` sees only durable state) and whatever `fn` changed stored before it returns.
   */
  private with<T>(documentId: string, fn: (loaded: LoadedDoc) => T): T {
    // Looked up after the flush: a failed flush may have dropped the live copy, and then the
    // durable state is the one on disk. (A document leaving memory is live, with no holder.)
    this.flush();
    const live = this.live.get(documentId);
    const loaded = live ?? this.load(documentId);
    let kept = false;
    try {
      const result = fn(loaded);
      this.commitQueued(documentId);
      if (live) return result;
      // A stored state behind its log, or without its text, is brought up to date, so that what
      // follows reads it as stored: a small one now (it costs little), a large one by a worker,
      // kept in memory to serve what follows meanwhile.
      if (loaded.updatesSinceCompaction === 0 && !loaded.lacksMarkdown) return result;
      if (this.offloaded(loaded)) {
        this.live.set(documentId, loaded);
        kept = true;
        this.unload(loaded);
      } else {
        try {
          this.compactLoaded(loaded);
        } catch (err) {
          // The log holds every update; a failed compaction only costs load time later.
          this.logger?.warn({ err, documentId }, 'compaction failed');
        }
      }
      return result;
    } finally {
      if (!live && !kept) loaded.doc.destroy();
    }
  }

  private load(documentId: string): LoadedDoc {
    const stored = this.readStored(documentId);
    const doc = new Y.Doc();
    let dropped: boolean;
    try {
      dropped = replay(doc, stored.body);
    } catch (err) {
      doc.destroy();
      this.logger?.error({ err, documentId }, 'stored document cannot be loaded');
      throw new UnreadableDocumentError(`the stored body of document ${documentId} cannot be loaded: ${(err as Error).message}`);
    }
    return this.track(documentId, stored, doc, dropped);
  }

  /**
   * A loaded Y.Doc as the store keeps it: what its stored state and log rows (`log`, after the
   * state) weigh, and every change to it queued for the log from now on.
   */
  private track(documentId: string, { tenantId, state, log }: Pick<StoredRows, 'tenantId' | 'state' | 'log'>, doc: Y.Doc, dropped: boolean): LoadedDoc {
    const through = state?.throughUpdateId ?? 0;
    let logBytes = 0;
    for (const row of log) logBytes += row.data!.byteLength;
    let slack = logBytes;
    let unmeasured = log.length;
    // Stored before updates were checked: changes that were never integrated (replay let them go).
    if (dropped) {
      this.logger?.warn({ documentId }, 'stored document held changes it could not integrate; dropped them');
      slack = Infinity;
      unmeasured = Infinity;
    }
    const loaded: LoadedDoc = {
      id: documentId,
      tenantId: this.sharedTenantId(tenantId),
      doc,
      refs: 0,
      subscribers: NO_SUBSCRIBERS,
      updatesSinceCompaction: log.length,
      lastUpdateId: log.at(-1)?.id ?? through,
      touchedAt: 0,
      editedAt: 0,
      bytes: (state?.state.byteLength ?? 0) + logBytes,
      slack,
      unmeasured,
      freed: 0,
      lacksMarkdown: state !== undefined && !state.hasMarkdown,
      folding: false,
      leaving: false,
    };
    doc.on('beforeObserverCalls', (transaction: Y.Transaction) => {
      loaded.freed = deletedTextBytes(transaction);
    });
    doc.on('update', (update: Uint8Array, origin: unknown) => this.onDocUpdate(loaded, update, origin));
    return loaded;
  }

  private sharedTenantId(tenantId: string): string {
    const shared = this.tenantIds.get(tenantId);
    if (shared !== undefined) return shared;
    this.tenantIds.set(tenantId, tenantId);
    return tenantId;
  }

  /**
   * Every change to a loaded Y.Doc only queues its row. Whoever made the change writes the queue
   * (`with`), or the flush scheduled here does, so that even a change made directly on an
   * acquired Y.Doc reaches the log.
   */
  private onDocUpdate(loaded: LoadedDoc, update: Uint8Array, origin: unknown): void {
    const authored = origin instanceof Authored ? origin : new Authored(null, origin);
    const charge = authored.charge ?? chargeOf(update);
    loaded.encoded = undefined;
    loaded.text = undefined;
    loaded.bytes += charge - loaded.freed;
    loaded.slack += charge;
    loaded.unmeasured += 1;
    loaded.freed = 0;
    this.queue.push({ documentId: loaded.id, tenantId: loaded.tenantId, userId: authored.userId, update, origin: authored.source, loaded });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One flush per turn, after the poll phase: updates read from every socket in the same
    // phase share one transaction.
    setImmediate(() => {
      this.flushScheduled = false;
      this.writeQueued();
    });
  }

  /** Writes the queue for a caller that must know its own change (to `documentId`) was stored. */
  private commitQueued(documentId: string): void {
    const failure = this.writeQueued().get(documentId);
    if (failure) throw new PersistenceError(`could not store the update: ${failure.message}`);
  }

  /**
   * The one place changes become durable and then visible. All queued rows go in one
   * transaction; if it fails, each document's rows are tried again in a transaction of their own,
   * so that one document that cannot be written (say, erased while editors were connected) does
   * not take the others down with it. Returns the documents whose rows could not be stored.
   */
  private writeQueued(): Map<string, Error> {
    const failed = new Map<string, Error>();
    if (this.queue.length === 0) return failed;
    const batch = this.queue;
    this.queue = [];
    const now = this.clock.now();
    let ids: (number | undefined)[];
    try {
      ids = this.insertRows(batch, now);
    } catch (batchErr) {
      ids = new Array<number | undefined>(batch.length);
      const byDocument = new Map<string, number[]>();
      batch.forEach(({ documentId }, i) => {
        const positions = byDocument.get(documentId);
        if (positions) positions.push(i);
        else byDocument.set(documentId, [i]);
      });
      // A batch of one document has failed as a whole already.
      if (byDocument.size === 1) failed.set(batch[0]!.documentId, batchErr as Error);
      else {
        for (const [documentId, positions] of byDocument) {
          try {
            this.insertRows(positions.map((i) => batch[i]!), now).forEach((id, k) => (ids[positions[k]!] = id));
          } catch (err) {
            failed.set(documentId, err as Error);
          }
        }
      }
      if (failed.size === 0) {
        this.logger?.warn({ err: batchErr, updates: batch.length }, 'a batch of document updates failed; stored them document by document');
      } else {
        this.logger?.error({ err: batchErr, documentIds: [...failed.keys()], updates: batch.length }, 'could not store document updates; dropping their live copies');
        for (const { documentId, loaded } of batch) if (loaded && failed.has(documentId)) this.drop(loaded, failed.get(documentId)!);
      }
    }
    batch.forEach(({ documentId, update, origin, loaded }, i) => {
      if (failed.has(documentId)) return;
      if (loaded) {
        loaded.lastUpdateId = ids[i]!;
        loaded.updatesSinceCompaction += 1;
        for (const subscriber of loaded.subscribers) {
          try {
            subscriber.onUpdate(update, origin);
          } catch (err) {
            this.logger?.error({ err, documentId }, 'update listener failed');
          }
        }
        if (loaded.refs > 0 && loaded.updatesSinceCompaction >= this.compactAfter) {
          try {
            if (this.offloaded(loaded)) this.compactSoon(loaded);
            else this.compactLoaded(loaded);
          } catch (err) {
            // The log already holds every update; a failed compaction only costs load time later.
            this.logger?.warn({ err, documentId }, 'compaction failed');
          }
        }
      }
      this.emitChange(documentId);
    });
    return failed;
  }

  /** Inserts the rows of `changes` in one transaction (all or none) and returns their log ids. */
  private insertRows(changes: QueuedChange[], now: Date): number[] {
    const nowMs = now.getTime();
    const createdAt = now.toISOString();
    let bytes = 0;
    const ids = inTransaction(this.db, () =>
      changes.map(({ documentId, tenantId, userId, update, loaded, inState }) => {
        bytes += update.byteLength;
        const data = inState ? null : Buffer.from(update.buffer, update.byteOffset, update.byteLength);
        const id = Number(this.insertUpdate.run({ documentId, tenantId, userId, createdAt, bytes: update.byteLength, data }).lastInsertRowid);
        // A live document types many updates a second; its updated_at needs no finer grain than
        // that (release writes the last one).
        if (loaded) loaded.editedAt = nowMs;
        if (!loaded || loaded.refs === 0 || nowMs - loaded.touchedAt >= TOUCH_INTERVAL_MS) {
          this.touchDocument.run({ id: documentId, updatedAt: createdAt });
          if (loaded) loaded.touchedAt = nowMs;
        }
        return id;
      }),
    );
    this.metrics?.updatesPersisted(changes.length, bytes);
    return ids;
  }

  /**
   * A live document whose changes could not be stored differs from the disk: it leaves memory (the
   * next acquire reloads it) and its holders are told, which ends their hold.
   */
  private drop(loaded: LoadedDoc, err: Error): void {
    if (this.live.get(loaded.id) !== loaded) return;
    stopExpiry(loaded);
    this.live.delete(loaded.id);
    const subscribers = loaded.subscribers;
    loaded.subscribers = NO_SUBSCRIBERS;
    for (const subscriber of subscribers) {
      try {
        subscriber.onDropped?.(err);
      } catch (listenerErr) {
        this.logger?.error({ err: listenerErr, documentId: loaded.id }, 'drop listener failed');
      }
    }
    loaded.doc.destroy();
  }

  /**
   * Writes the state through the last stored update, with its Markdown read from the same Y.Doc at
   * the same moment; the rows it covers are cleared later.
   */
  private compactLoaded(loaded: LoadedDoc): void {
    const state = Buffer.from(encode(loaded));
    this.writeState(loaded, state, textOf(loaded), loaded.lastUpdateId);
    loaded.updatesSinceCompaction = 0;
    loaded.lacksMarkdown = false;
    this.measured(loaded, state.byteLength);
  }

  /** Stores `state` (and `markdown`, its text) as the document's compacted state through log row `through`. */
  private writeState(doc: { id: string; tenantId: string }, state: Buffer, markdown: string, through: number, cleared = false): void {
    const now = this.clock.now().toISOString();
    const progress = cleared ? { clearedThroughUpdateId: through } : {};
    this.db
      .insert(documentStates)
      .values({ documentId: doc.id, tenantId: doc.tenantId, state, markdown, throughUpdateId: through, updatedAt: now, ...progress })
      .onConflictDoUpdate({ target: documentStates.documentId, set: { state, markdown, throughUpdateId: through, updatedAt: now, ...progress } })
      .run();
    this.metrics?.compacted();
    if (cleared) return;
    this.uncleared.add(doc.id);
    this.scheduleClear();
  }

  /**
   * Refuses a change that may add `growth` bytes to the encoded state if that takes the document
   * past its limit (plus DELETE_HEADROOM for a change that only deletes). The estimate is replaced
   * by a measurement only when it may be far off, so that an editor at the limit cannot make every
   * message encode the whole document.
   */
  private makeRoom(loaded: LoadedDoc, growth: number, deletesOnly: boolean): void {
    const cap = this.maxDocumentBytes + (deletesOnly ? DELETE_HEADROOM : 0);
    if (loaded.bytes + growth <= cap) return;
    if (loaded.slack >= Math.max(1024, this.maxDocumentBytes * REMEASURE_SHARE) || loaded.unmeasured >= REMEASURE_CHANGES) {
      this.measured(loaded, encode(loaded).byteLength);
    }
    if (loaded.bytes + growth > cap) throw new DocumentTooLargeError(loaded.bytes + growth, this.maxDocumentBytes);
  }

  private measured(loaded: LoadedDoc, bytes: number): void {
    loaded.bytes = bytes;
    loaded.slack = 0;
    loaded.unmeasured = 0;
  }

  private scheduleClear(): void {
    if (this.clearScheduled || this.uncleared.size === 0) return;
    this.clearScheduled = true;
    setImmediate(() => {
      this.clearScheduled = false;
      this.clearSlice();
    });
  }

  /** Clears compacted rows, a step of each waiting document in turn, for about CLEAR_SLICE_MS. */
  private clearSlice(): void {
    const started = performance.now();
    try {
      while (this.uncleared.size > 0 && performance.now() - started < CLEAR_SLICE_MS) {
        for (const documentId of this.uncleared) {
          this.clearCompacted(documentId, CLEAR_ROWS_PER_STEP);
          if (performance.now() - started >= CLEAR_SLICE_MS) break;
        }
      }
    } catch (err) {
      // Only space is at stake: the progress is on disk, and the next start resumes from it.
      this.logger?.warn({ err }, 'could not clear compacted document updates');
      this.uncleared.clear();
    }
    this.scheduleClear();
  }

  /**
   * Clears the `data` of up to `rows` compacted log rows of the document, in one transaction with
   * its progress; the document leaves the waiting set once all are cleared (or it is gone).
   */
  private clearCompacted(documentId: string, rows: number): void {
    const statements = this.clearing;
    const done = inTransaction(this.db, () => {
      const progress = statements.progress.get({ documentId });
      if (!progress || progress.cleared >= progress.through) return true;
      const { cleared, through } = progress;
      const stepEnd = rows === Infinity ? undefined : statements.stepEnd.get({ documentId, cleared, through, skip: rows - 1 })?.id;
      const upTo = stepEnd ?? through;
      statements.clearData.run({ documentId, cleared, upTo });
      statements.setProgress.run({ documentId, upTo });
      return upTo >= through;
    });
    if (done) this.uncleared.delete(documentId);
  }

  private emitChange(documentId: string): void {
    for (const listener of this.changeListeners) {
      try {
        listener(documentId);
      } catch (err) {
        this.logger?.error({ err, documentId }, 'change listener failed');
      }
    }
  }
}

/** A preloaded document is held, or leaves: its wait ends. */
function stopExpiry(loaded: LoadedDoc): void {
  clearTimeout(loaded.expiry);
  loaded.expiry = undefined;
}

/**
 * Applies a checked `update`; a failure is the bytes' fault (the store only queues while applying).
 * The check leaves nothing pending; should anything be, it is let go rather than kept in memory.
 */
function integrate(loaded: LoadedDoc, update: Uint8Array, origin: Authored, logger?: Logger): void {
  const doc = loaded.doc;
  try {
    Y.applyUpdate(doc, update, origin);
  } catch (err) {
    throw new InvalidUpdateError(`update could not be applied: ${(err as Error).message}`);
  } finally {
    if (doc.store.pendingStructs || doc.store.pendingDs) {
      logger?.error({ documentId: loaded.id }, 'a checked update left changes pending; dropped them');
      doc.store.pendingStructs = null;
      doc.store.pendingDs = null;
    }
  }
}

/** The loaded document's Markdown, built by Yjs once per change (see LoadedDoc.text). */
function textOf(loaded: LoadedDoc): string {
  return (loaded.text ??= loaded.doc.getText(CONTENT_FIELD).toString());
}

/** No state vector, or an empty one (a peer that has nothing of the document). */
function lacksAll(stateVector?: Uint8Array): boolean {
  return stateVector === undefined || (stateVector.length === 1 && stateVector[0] === 0);
}

/** The document encoded (what a peer at `stateVector` lacks, or all of it). */
function encode(loaded: LoadedDoc, stateVector?: Uint8Array): Uint8Array {
  try {
    return Y.encodeStateAsUpdate(loaded.doc, stateVector);
  } catch (err) {
    throw new UnreadableDocumentError(`document ${loaded.id} cannot be encoded: ${(err as Error).message}`);
  }
}

/** What a change may add to the encoded state, from its update (see STRUCT_ALLOWANCE). */
function chargeOf(update: Uint8Array): number {
  const { structs, ds } = Y.decodeUpdate(update);
  let ranges = 0;
  for (const list of ds.clients.values()) ranges += list.length;
  return update.byteLength + STRUCT_ALLOWANCE * structs.length + RANGE_ALLOWANCE * ranges;
}

/** UTF-8 bytes of the text a transaction deletes: what the encoded state loses once Yjs drops it. */
function deletedTextBytes(transaction: Y.Transaction): number {
  let bytes = 0;
  Y.iterateDeletedStructs(transaction, transaction.deleteSet, (struct) => {
    if (struct instanceof Y.Item && struct.content instanceof Y.ContentString) bytes += Buffer.byteLength(struct.content.str);
  });
  return bytes;
}

/** The Markdown held by an encoded state (a named version). */
export function textOfState(state: Uint8Array): string {
  const doc = new Y.Doc();
  try {
    Y.applyUpdate(doc, state);
    return doc.getText(CONTENT_FIELD).toString();
  } catch (err) {
    throw new UnreadableDocumentError(`the stored version cannot be loaded: ${(err as Error).message}`);
  } finally {
    doc.destroy();
  }
}
