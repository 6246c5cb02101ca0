// The document store's front (DocumentStore): the only writer of document bodies. It keeps the
// documents live editors hold open in memory, loads others for a read or a write and lets them go,
// and composes the parts: the size budget, the batched log writes, compaction, the worker path.
// docs/architecture.md ("The document store") says how they work together.
import { count, desc, eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import * as Y from 'yjs';
import { inTransaction, type Db } from '../../db/client';
import { documentUpdates } from '../../db/schema';
import { sqlLimit } from '../../src/lib/sql';
import { textEdits } from '../text-edits';
import { checkUpdate, UpdateProblem } from '../update-check';
import { applyEdits, CONTENT_FIELD, encodeBody, replay } from '../yjs-tasks';
import { chargeOfEdits, chargeOfShape, DEFAULT_MAX_DOCUMENT_BYTES, deletedTextBytes, SizeBudget } from './budget';
import { Compaction } from './compaction';
import { InvalidUpdateError, PersistenceError, UnreadableDocumentError } from './errors';
import { Authored, encode, integrate, lacksAll, lighten, NO_SUBSCRIBERS, stopExpiry, textOf, type DocumentSubscriber, type LoadedDoc } from './loaded';
import { UpdateLog } from './log';
import { currentStored, prepareStatements, readStored, stateBytes, type Statements, type StoredRows } from './statements';
import type { ChangeRow, Snapshot, StoreMetrics, StoreOptions } from './types';
import { DEFAULT_OFFLOAD_MIN_BYTES, PRELOAD_WAIT_MS, WorkerPath } from './worker-path';

/** A store built without the server's metrics counts nothing. */
const uncounted: StoreMetrics = { updatesPersisted: () => {}, compacted: () => {} };

export class DocumentStore {
  private readonly live = new Map<string, LoadedDoc>();
  private readonly changeListeners = new Set<(documentId: string) => void>();
  /**
   * One string per tenant id for all loaded documents: each read of the column is a new string,
   * and a thousand open documents of one tenant would hold a thousand copies.
   */
  private readonly tenantIds = new Map<string, string>();
  private readonly db: Db;
  private readonly logger?: Logger;
  private readonly compactAfter: number;
  private readonly statements: Statements;
  private readonly budget: SizeBudget;
  private readonly log: UpdateLog;
  private readonly compaction: Compaction;
  private readonly workerPath: WorkerPath;
  /** Per document, the end of the chain of REST writes of its whole text (see `exclusive`). */
  private readonly writers = new Map<string, Promise<unknown>>();
  /** How long a body written inline may take to diff (undefined: DIFF_TIMEOUT_MS). */
  private readonly inlineDiffTimeoutMs: number | undefined;
  /** Each tracked Y.Doc's LoadedDoc, for the listeners every document shares (no closures per document). */
  private readonly tracked = new WeakMap<Y.Doc, LoadedDoc>();
  private readonly onBeforeObserverCalls = (transaction: Y.Transaction, doc: Y.Doc): void => {
    this.tracked.get(doc)!.freed = deletedTextBytes(transaction);
  };
  private readonly onDocUpdate = (update: Uint8Array, origin: unknown, doc: Y.Doc): void => {
    this.log.record(this.tracked.get(doc)!, update, origin);
  };

  constructor(opts: StoreOptions) {
    const { db, clock, logger } = opts;
    const metrics = opts.metrics ?? uncounted;
    this.db = db;
    this.logger = logger;
    this.compactAfter = opts.compactAfter ?? 500;
    this.inlineDiffTimeoutMs = opts.inlineDiffTimeoutMs;
    this.statements = prepareStatements(db);
    this.budget = new SizeBudget(opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES);
    this.log = new UpdateLog({
      db,
      clock,
      logger,
      metrics,
      statements: this.statements,
      stored: (documentId, loaded) => this.stored(documentId, loaded),
      failed: (loaded, err) => this.drop(loaded, err),
    });
    this.compaction = new Compaction({ db, clock, logger, metrics, statements: this.statements });
    this.workerPath = new WorkerPath({
      db,
      logger,
      statements: this.statements,
      log: this.log,
      compaction: this.compaction,
      budget: this.budget,
      workers: opts.workers,
      offloadMinBytes: opts.offloadMinBytes ?? DEFAULT_OFFLOAD_MIN_BYTES,
      preloadWaitMs: opts.preloadWaitMs ?? PRELOAD_WAIT_MS,
      host: {
        live: this.live,
        track: (documentId, stored, doc, dropped) => this.track(documentId, stored, doc, dropped),
        unload: (loaded, inline) => this.unload(loaded, inline),
        getText: (documentId) => this.getText(documentId),
      },
    });
  }

  /** Largest encoded state a change may give a document. */
  get maxDocumentBytes(): number {
    return this.budget.maxDocumentBytes;
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
   * turn of the event loop, instead of in one go at their first acquire: a worker answers its body
   * as updates that each integrate whole (yjs-tasks.ts `slice`). Does nothing for a document in
   * memory or a small one. The hub awaits it while it admits a connection; a document no one
   * acquires within PRELOAD_WAIT_MS leaves again. Should a new state be stored meanwhile (its rows
   * then cleared), what was loaded is let go, and the acquire loads the document as usual.
   */
  preload(documentId: string): Promise<void> {
    return this.workerPath.preload(documentId);
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
        this.statements.touchDocument.run({ id: documentId, updatedAt: new Date(loaded.editedAt).toISOString() });
        loaded.touchedAt = loaded.editedAt;
      }
      if (loaded.updatesSinceCompaction > 0 || loaded.lacksMarkdown) {
        if (!inline && this.workerPath.offloaded(loaded)) {
          loaded.leaving = true;
          this.workerPath.compactSoon(loaded);
          return;
        }
        this.compaction.compactLoaded(loaded);
      }
    } catch (err) {
      // The log already holds every update; a failed compaction only costs load time later.
      this.logger?.warn({ err, documentId }, 'compaction on unload failed');
    }
    this.live.delete(documentId);
    loaded.subscribers = NO_SUBSCRIBERS;
    loaded.doc.destroy();
  }

  /** Resolves once no fold runs in the background (tests, benchmarks). */
  settled(): Promise<void> {
    return this.workerPath.settled();
  }

  /**
   * Stops the background work: what folds still running return is dropped (the log holds
   * everything they would have folded). At shutdown, after unloadIdle, before the database closes.
   */
  close(): void {
    this.workerPath.close();
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
    // concat, not a spread: its array has exactly the room it needs.
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
    const loaded = this.live.get(documentId);
    // A large open document too: every change it holds is in the log (durable before seen, and
    // flushed above), so stored text with no change after it is its text. Reading 500,000
    // characters takes a few milliseconds; building them from the Y.Doc took tens, plus their
    // garbage, in the search index's refresh during bench/collab-cost.ts's attack.
    if (!loaded || this.workerPath.offloaded(loaded)) {
      const stored = currentStored(this.statements, documentId);
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
      const stored = currentStored(this.statements, documentId);
      const row = stored?.markdown != null ? this.statements.reads.storedState.get({ documentId }) : undefined;
      const state = row && stateBytes(this.statements, documentId, row);
      if (stored?.markdown != null && state) return { state: new Uint8Array(state.buffer, state.byteOffset, state.byteLength), markdown: stored.markdown };
    }
    if (this.workerPath.offloads(documentId)) return this.workerPath.snapshot(documentId);
    return this.with(documentId, (loaded) => ({ state: encode(loaded), markdown: textOf(loaded) }));
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
    const { update, stored } = encodeBody(markdown);
    this.createBodyFromState(doc, update, stored, userId);
  }

  /**
   * createBody with the Yjs state already built (by `encodeBody`, in a worker thread for a large
   * import): `update` is the whole state of a new document, `stored` its text. The same rules hold:
   * inside the caller's transaction as a savepoint, flushed first.
   */
  createBodyFromState(doc: { id: string; tenantId: string }, update: Uint8Array, stored: string, userId: string | null): void {
    if (stored.length === 0) return;
    this.budget.refuseAbove(update.byteLength);
    this.flush();
    // The first update of an empty document is its whole state: stored once, as the compacted state
    // with its text, in the transaction of its log row (which keeps its author, time and size), so
    // that no read of the new document loads Yjs.
    inTransaction(this.db, () => {
      this.log.push({ documentId: doc.id, tenantId: doc.tenantId, userId, update, origin: null, inState: true });
      this.log.commit(doc.id);
      const through = this.statements.reads.lastLogId.get({ documentId: doc.id })?.id;
      if (through == null) throw new PersistenceError(`the first change of document ${doc.id} was not stored`);
      this.compaction.writeState({ id: doc.id, tenantId: doc.tenantId }, Buffer.from(update.buffer, update.byteOffset, update.byteLength), stored, through, true);
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
    options: { defer?: boolean; measureInline?: boolean } = {},
  ): void {
    const apply = (loaded: LoadedDoc) => {
      // Judged (decoded first, which rejects garbage) before it can touch the document.
      const shape = checkUpdate(update, loaded.doc);
      if (shape instanceof UpdateProblem) throw new InvalidUpdateError(`update refused: ${shape.reason}`, shape.lacksChanges);
      const charge = chargeOfShape(update, shape);
      // A live editor's change waits for a large document to be measured by a worker.
      this.budget.makeRoom(loaded, charge, shape.structs === 0, live && !options.measureInline ? (l) => this.workerPath.measureSoon(l) : undefined);
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
    this.log.write();
  }

  /**
   * Makes the content equal to `markdown` as ONE transaction of minimal edits (textEdits), so that
   * live editors' cursors outside the changed runs stay where they are and their own concurrent
   * edits merge; with `snapshotBefore`, returns the snapshot of the moment before (taken in the same
   * turn of REST writes). Returns the text as it then is: `markdown`, or with the changes made
   * meanwhile (a live editor's while a worker diffed it, or stored to a document no one holds)
   * merged in. Throws DocumentTooLargeError, changing nothing, if the result would be too large. A
   * large document is diffed and edited by a worker (WorkerPath.replace).
   */
  async replaceText(
    documentId: string,
    markdown: string,
    userId: string | null,
    options: { snapshotBefore?: boolean } = {},
  ): Promise<{ before?: Snapshot; text: string }> {
    const markdownBytes = Buffer.byteLength(markdown);
    this.budget.refuseAbove(markdownBytes);
    return this.exclusive(documentId, async () => {
      const before = options.snapshotBefore ? await this.snapshot(documentId) : undefined;
      if (this.workerPath.takesWrite(documentId, markdownBytes)) {
        return { before, text: await this.workerPath.replace(documentId, markdown, userId) };
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
      const parts = textEdits(current, markdown, this.inlineDiffTimeoutMs);
      const { charge, growth, inserts } = chargeOfEdits(parts);
      this.budget.makeRoom(loaded, growth, !inserts);
      applyEdits(text, parts, new Authored(userId, null, charge));
    });
  }

  /** Folds the log into the state row now (normally automatic), clearing the rows it covers. */
  compact(documentId: string): void {
    this.with(documentId, (loaded) => this.compaction.compactLoaded(loaded));
    this.compaction.clearAll(documentId);
  }

  // ---- internals ----

  /**
   * Runs `fn` after every REST write of the document's whole text started before it has ended:
   * each such write then applies to the result of the one before (two PUTs never merge into
   * neither text).
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
      this.log.commit(documentId);
      if (live) return result;
      // A stored state behind its log, or without its text, is brought up to date, so that what
      // follows reads it as stored: a small one now (it costs little), a large one by a worker,
      // kept in memory to serve what follows meanwhile.
      if (loaded.updatesSinceCompaction === 0 && !loaded.lacksMarkdown) return result;
      if (this.workerPath.offloaded(loaded)) {
        this.live.set(documentId, loaded);
        kept = true;
        this.unload(loaded);
      } else {
        try {
          this.compaction.compactLoaded(loaded);
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
    const stored = readStored(this.statements, documentId);
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
      measurements: 0,
      freed: 0,
      lacksMarkdown: state !== undefined && !state.hasMarkdown,
      folding: false,
      leaving: false,
    };
    lighten(doc, documentId);
    this.tracked.set(doc, loaded);
    doc.on('beforeObserverCalls', this.onBeforeObserverCalls);
    doc.on('update', this.onDocUpdate);
    return loaded;
  }

  private sharedTenantId(tenantId: string): string {
    const shared = this.tenantIds.get(tenantId);
    if (shared !== undefined) return shared;
    this.tenantIds.set(tenantId, tenantId);
    return tenantId;
  }

  /** A change was stored: a live document past the threshold is compacted, and the change listeners told. */
  private stored(documentId: string, loaded: LoadedDoc | undefined): void {
    if (loaded && loaded.refs > 0 && loaded.updatesSinceCompaction >= this.compactAfter) {
      try {
        if (this.workerPath.offloaded(loaded)) this.workerPath.compactSoon(loaded);
        else this.compaction.compactLoaded(loaded);
      } catch (err) {
        // The log already holds every update; a failed compaction only costs load time later.
        this.logger?.warn({ err, documentId }, 'compaction failed');
      }
    }
    for (const listener of this.changeListeners) {
      try {
        listener(documentId);
      } catch (err) {
        this.logger?.error({ err, documentId }, 'change listener failed');
      }
    }
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
}

