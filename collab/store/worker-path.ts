// The worker-thread path: the whole-body work on large documents (at least `offloadMinBytes`,
// encoded) runs in worker threads (../workers.ts, ../yjs-tasks.ts), never on the event loop. A
// REST write of their Markdown is diffed into one Yjs update by a worker; their compactions, and
// versions of one whose state is behind its log, are folded by a worker; and one an editor opens
// is loaded a few slices per turn of the event loop from updates a worker cut.
import type { Logger } from 'pino';
import * as Y from 'yjs';
import type { Db } from '../../db/client';
import { yieldToEventLoop } from '../../src/lib/event-loop';
import { WorkersBusyError } from '../../src/lib/worker-pool';
import type { YjsWorkers } from '../workers';
import { replay, type Folded } from '../yjs-tasks';
import { chargeOf, estimateOf, measured, measuredSince, type SizeBudget, type SizeEstimate } from './budget';
import type { Compaction } from './compaction';
import { UnknownDocumentError, UnreadableDocumentError } from './errors';
import { Authored, integrate, textOf, type LoadedDoc } from './loaded';
import type { UpdateLog } from './log';
import { readStored, type Statements, type StoredRows } from './statements';
import type { Snapshot } from './types';

/** Documents at least this large (bytes encoded, as estimated) are loaded whole only by the workers. */
export const DEFAULT_OFFLOAD_MIN_BYTES = 256 * 1024;
/** When the worker threads have too much waiting, a document leaving memory asks again after this long. */
const BUSY_RETRY_MS = 1_000;
/**
 * Structs per slice when a large document is loaded for live editors, and the time the slices
 * applied in one turn of the event loop may take before it yields (bench/large-documents.ts).
 */
const STRUCTS_PER_SLICE = 1_000;
const SLICE_TURN_MS = 8;
/** How long a document preloaded for a connection waits for it before it leaves memory. */
export const PRELOAD_WAIT_MS = 10_000;

/** What the worker path needs of the store's front: its documents in memory, and how one enters and leaves. */
export interface WorkerPathHost {
  readonly live: Map<string, LoadedDoc>;
  /** A loaded Y.Doc as the store keeps it (DocumentStore.track). */
  track(documentId: string, stored: Pick<StoredRows, 'tenantId' | 'state' | 'log'>, doc: Y.Doc, dropped: boolean): LoadedDoc;
  /** Compacts a document no one holds and takes it out of memory (inline: without a worker). */
  unload(loaded: LoadedDoc, inline?: boolean): void;
  getText(documentId: string): string;
}

export interface WorkerPathOptions {
  db: Db;
  statements: Statements;
  log: UpdateLog;
  compaction: Compaction;
  budget: SizeBudget;
  host: WorkerPathHost;
  /** Without them, every large document is worked on inline: this path takes nothing. */
  workers?: YjsWorkers;
  offloadMinBytes: number;
  preloadWaitMs: number;
  logger?: Logger;
}

export class WorkerPath {
  private readonly workers?: YjsWorkers;
  /** Documents being loaded a slice at a time (see `preload`). */
  private readonly preloading = new Map<string, Promise<void>>();
  /** Folds running in the workers (see `settled`). */
  private readonly background = new Set<Promise<unknown>>();
  /** Each live document's fold running in the workers, settled once its outcome is applied. */
  private readonly folds = new WeakMap<LoadedDoc, Promise<void>>();
  private closed = false;

  constructor(private readonly opts: WorkerPathOptions) {
    this.workers = opts.workers;
  }

  /** Whether the document is large enough for its whole-body work to go to the workers. */
  offloaded(loaded: LoadedDoc): boolean {
    return this.workers !== undefined && loaded.bytes >= this.opts.offloadMinBytes;
  }

  /** Whether the document (live, or as stored) is large enough for its whole-body work to go to the workers. */
  offloads(documentId: string): boolean {
    if (!this.workers) return false;
    const loaded = this.opts.host.live.get(documentId);
    if (loaded) return this.offloaded(loaded);
    const row = this.opts.statements.reads.storedBytes.get({ documentId });
    if (!row) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    return row.bytes >= this.opts.offloadMinBytes;
  }

  /** Whether a REST write of `markdownBytes` of Markdown to the document goes to the workers. */
  takesWrite(documentId: string, markdownBytes: number): boolean {
    return this.workers !== undefined && (this.offloads(documentId) || markdownBytes >= this.opts.offloadMinBytes);
  }

  /** See DocumentStore.preload. */
  preload(documentId: string): Promise<void> {
    if (this.opts.host.live.has(documentId) || !this.offloads(documentId)) return Promise.resolve();
    let work = this.preloading.get(documentId);
    if (!work) {
      work = this.loadInSlices(documentId).finally(() => this.preloading.delete(documentId));
      this.preloading.set(documentId, work);
    }
    return work;
  }

  private async loadInSlices(documentId: string): Promise<void> {
    const { host, statements, log } = this.opts;
    log.write();
    const stored = readStored(statements, documentId);
    const { state, log: rows } = stored;
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
      log.write();
      const now = statements.reads.stateMeta.get({ documentId });
      if (this.closed || host.live.has(documentId) || now?.throughUpdateId !== state?.throughUpdateId) {
        doc.destroy();
        return;
      }
      // What was written meanwhile (a REST write to a document no one held), after it.
      const since = statements.reads.logAfter.all({ documentId, through: stored.through });
      const dropped = replay(doc, { state: null, updates: since.map((row) => row.data!) });
      const loaded = host.track(documentId, { ...stored, log: [...rows, ...since] }, doc, dropped);
      if (since.length === 0) loaded.encoded = whole;
      host.live.set(documentId, loaded);
      loaded.expiry = setTimeout(() => {
        loaded.expiry = undefined;
        if (host.live.get(documentId) === loaded && loaded.refs === 0) host.unload(loaded);
      }, this.opts.preloadWaitMs);
      loaded.expiry.unref();
    } catch (err) {
      doc.destroy();
      throw new UnreadableDocumentError(`the stored body of document ${documentId} cannot be loaded: ${(err as Error).message}`);
    }
  }

  /**
   * Compacts a large document in a worker (see foldStored), in the background: what follows is
   * served from memory meanwhile. A document leaving memory leaves once its fold is stored, or is
   * folded again if it was written to meanwhile; one acquired again stays.
   */
  compactSoon(loaded: LoadedDoc): void {
    if (loaded.folding) return;
    const { host } = this.opts;
    loaded.folding = true;
    const covered = loaded.updatesSinceCompaction;
    const then = estimateOf(loaded);
    let busy = false;
    const work = this.foldStored(loaded.id)
      .then((fold) => this.folded(loaded, fold.through, fold.state.byteLength, covered, then))
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
        this.opts.logger?.warn({ err, documentId: loaded.id }, 'compaction failed');
        const leaving = loaded.leaving;
        loaded.leaving = false;
        if (leaving && host.live.get(loaded.id) === loaded && loaded.refs === 0) host.unload(loaded, true);
      })
      .finally(() => {
        loaded.folding = false;
        const leaves = () => loaded.leaving && !this.closed && host.live.get(loaded.id) === loaded && loaded.refs === 0;
        if (!leaves()) return;
        if (busy) {
          setTimeout(() => leaves() && this.compactSoon(loaded), BUSY_RETRY_MS).unref();
          return;
        }
        if (loaded.updatesSinceCompaction > 0 || loaded.lacksMarkdown) this.compactSoon(loaded);
        else host.unload(loaded, true);
      });
    this.folds.set(loaded, work);
    this.inBackground(work);
  }

  /**
   * Measures a large live document off the event loop: its fold in a worker (a compaction, see
   * compactSoon) gives its exact size. Null for a document measured on the event loop (a small one,
   * or no workers).
   */
  measureSoon(loaded: LoadedDoc): Promise<void> | null {
    if (!this.offloaded(loaded)) return null;
    this.compactSoon(loaded);
    return this.folds.get(loaded) ?? null;
  }

  /** A fold through log row `through` (covering `covered` of the updates counted since the last one) was stored for `loaded`. */
  private folded(loaded: LoadedDoc, through: number, bytes: number, covered: number, then?: SizeEstimate): void {
    loaded.lacksMarkdown = false;
    if (loaded.lastUpdateId === through) {
      loaded.updatesSinceCompaction = 0;
      measured(loaded, bytes);
    } else {
      loaded.updatesSinceCompaction = Math.max(0, loaded.updatesSinceCompaction - covered);
      // Changed since the fold's read: what those changes added goes on top of the fold's size.
      if (then) measuredSince(loaded, bytes, then);
    }
  }

  private inBackground(work: Promise<unknown>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
  }

  /** Resolves once no fold runs in the background. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /** What folds still running return is dropped from now on (the log holds everything they would have folded). */
  close(): void {
    this.closed = true;
  }

  /** A large document's snapshot, folded by a worker (and that fold stored as its state). */
  async snapshot(documentId: string): Promise<Snapshot> {
    const loaded = this.opts.host.live.get(documentId);
    const covered = loaded?.updatesSinceCompaction ?? 0;
    const fold = await this.foldStored(documentId);
    if (loaded && this.opts.host.live.get(documentId) === loaded) this.folded(loaded, fold.through, fold.state.byteLength, covered);
    // Writing the fold takes a while for a large body; what the caller writes next gets a turn of its own.
    await yieldToEventLoop();
    return fold;
  }

  /**
   * The stored body folded by a worker into one state with its Markdown, of the moment of the call
   * (every queued change stored first). It is written as the compacted state unless one as new was
   * written meanwhile, or the document is gone.
   */
  private async foldStored(documentId: string): Promise<Folded & { through: number }> {
    const { statements, compaction } = this.opts;
    this.opts.log.write();
    const { tenantId, body, through } = readStored(statements, documentId);
    const fold = await this.inWorker(documentId, (workers) => workers.fold(body));
    if (this.closed) return { ...fold, through };
    const state = Buffer.from(fold.state.buffer, fold.state.byteOffset, fold.state.byteLength);
    await compaction.storeState({ id: documentId, tenantId }, state, fold.markdown, through, () => this.closed);
    return { ...fold, through };
  }

  /** Runs whole-body work in a worker; a body the worker cannot load is an UnreadableDocumentError. */
  private async inWorker<T>(documentId: string, work: (workers: YjsWorkers) => Promise<T>): Promise<T> {
    try {
      return await work(this.workers!);
    } catch (err) {
      if (err instanceof WorkersBusyError) throw err;
      if (!this.closed) this.opts.logger?.error({ err, documentId }, 'stored document cannot be worked on');
      throw new UnreadableDocumentError(`the stored body of document ${documentId} cannot be worked on: ${(err as Error).message}`);
    }
  }

  /**
   * A REST write of the document's whole text: the worker loads the stored body, applies the edits
   * and answers them as one update, with the result folded (so its exact size is known). The
   * update is then stored as any editor's: into the live copy if editors hold one (merging with
   * what they wrote meanwhile), else straight to the log, with the fold as the compacted state when
   * no other change came in between. Returns the text as it then is.
   */
  async replace(documentId: string, markdown: string, userId: string | null): Promise<string> {
    const { host, statements, log, compaction, budget } = this.opts;
    // The request's body was just read and parsed in this turn; reading the stored body and
    // handing both to the worker get one of their own.
    await yieldToEventLoop();
    log.write();
    const { tenantId, body, through } = readStored(statements, documentId);
    const edited = await this.inWorker(documentId, (workers) => workers.edit(body, markdown));
    if (edited.update === null) return markdown;
    // The worker's text after the edits is `markdown` (it checks), not sent back.
    const bytes = edited.state.byteLength;
    budget.refuseAbove(bytes, !edited.inserts);
    log.write();
    if (!statements.reads.tenantOf.get({ documentId })) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    const state = Buffer.from(edited.state.buffer, edited.state.byteOffset, edited.state.byteLength);
    const live = host.live.get(documentId);
    if (live) {
      // Current: nothing was written to it since the worker read it; else the update merges as a
      // concurrent editor's would, and the size is estimated as for one.
      const current = live.lastUpdateId === through;
      const charge = chargeOf(edited.update);
      if (!current) budget.makeRoom(live, charge, !edited.inserts);
      integrate(live, edited.update, new Authored(userId, null, charge), this.opts.logger);
      log.commit(documentId);
      if (!current) return textOf(live);
      // The worker's fold is the compacted state, written in a turn of its own (integrating a
      // large edit and writing its state each take a while), if nothing came after.
      const written = live.lastUpdateId;
      await yieldToEventLoop();
      log.write();
      if (this.closed || host.live.get(documentId) !== live || live.lastUpdateId !== written) return markdown;
      const covered = live.updatesSinceCompaction;
      const then = estimateOf(live);
      if (await compaction.storeState(live, state, markdown, written, () => this.closed)) this.folded(live, written, bytes, covered, then);
      return markdown;
    }
    const current = (statements.reads.lastLogId.get({ documentId })?.id ?? 0) === through;
    log.push({ documentId, tenantId, userId, update: edited.update, origin: null });
    log.commit(documentId);
    const written = statements.reads.lastLogId.get({ documentId })?.id;
    if (current && written != null) {
      await compaction.storeState({ id: documentId, tenantId }, state, markdown, written, () => this.closed);
      return markdown;
    }
    this.inBackground(this.foldStored(documentId).catch((err: unknown) => this.opts.logger?.warn({ err, documentId }, 'compaction failed')));
    // Changes stored meanwhile were merged: the text is theirs and `markdown`'s, read back.
    return host.getText(documentId);
  }
}
