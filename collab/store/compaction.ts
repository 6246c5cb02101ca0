// Compaction and state writes. A compacted state is written with its Markdown read from the same
// Y.Doc at the same moment (a large one a part per turn, then named by its row at once); the
// `data` of the log rows it covers is cleared later, a few rows at a time in short slices
// (`cleared_through_update_id` keeps the progress, so a restart resumes it), since clearing them
// in one go would hold every live document up for that long.
import type { Logger } from 'pino';
import { inTransaction, walPressed, type Db } from '../../db/client';
import { documentStates } from '../../db/schema';
import type { Clock } from '../../src/lib/clock';
import { yieldToEventLoop } from '../../src/lib/event-loop';
import { newId } from '../../src/lib/ids';
import { measured } from './budget';
import { encode, textOf, type LoadedDoc } from './loaded';
import { unfinishedClearings, type Statements } from './statements';
import type { StoreMetrics } from './types';

/**
 * Compacted log rows cleared per step at most, and the time a slice of steps may take before it
 * yields (see bench/RESULTS.md, "Compaction clears the log in slices"). Rows of large updates (a
 * large update applied in slices, bench/collab-cost.ts) take longer to clear: a step that took
 * longer than a slice halves the next step of its document, down to one row.
 */
const CLEAR_ROWS_PER_STEP = 100;
const CLEAR_SLICE_MS = 3;
/**
 * A document's first step, doubled while steps stay within a slice: rows of a large update cut in
 * slices hold ~30 KB each, and a first step of 100 of them took 30 ms of CPU in one turn under the
 * costly-updates benchmark's attack (bench/collab-cost.ts, profiled).
 */
const CLEAR_ROWS_FIRST_STEP = 8;
/** While the WAL is large (walPressed), the next clearing step waits this long. */
const CLEAR_WAL_WAIT_MS = 100;

/**
 * A state and Markdown larger than this together are stored in parts of STATE_PART_BYTES, a part
 * per turn (Compaction.storeState); a state part is deleted PARTS_PER_STEP at a time.
 */
const STATE_PARTS_ABOVE = 1024 * 1024;
const STATE_PART_BYTES = 256 * 1024;
const PARTS_PER_STEP = 2;
const EMPTY = Buffer.alloc(0);

function* partsOf(bytes: Buffer, kind: 'state' | 'markdown'): Generator<{ kind: 'state' | 'markdown'; part: number; data: Buffer }> {
  for (let part = 0; part * STATE_PART_BYTES < bytes.byteLength; part++) {
    yield { kind, part, data: bytes.subarray(part * STATE_PART_BYTES, (part + 1) * STATE_PART_BYTES) };
  }
}

export interface CompactionOptions {
  db: Db;
  clock: Clock;
  statements: Statements;
  logger?: Logger;
  metrics: StoreMetrics;
}

export class Compaction {
  /** Documents whose compacted log rows still hold data (see clearSlice), and the rows of their next step. */
  private readonly uncleared = new Map<string, number>();
  /** Generations of state parts to delete (superseded, or left by a stopped process). */
  private readonly discarded: { documentId: string; generation: string }[] = [];
  private clearScheduled = false;

  constructor(private readonly opts: CompactionOptions) {
    // Clearing that a previous process left unfinished, and parts it wrote without naming them.
    for (const { documentId } of unfinishedClearings(opts.db).all()) this.uncleared.set(documentId, CLEAR_ROWS_FIRST_STEP);
    this.discarded.push(...opts.statements.parts.unnamed.all());
    this.scheduleClear();
  }

  /**
   * Writes the state through the last stored update, with its Markdown read from the same Y.Doc at
   * the same moment; the rows it covers are cleared later.
   */
  compactLoaded(loaded: LoadedDoc): void {
    const state = Buffer.from(encode(loaded));
    this.writeState(loaded, state, textOf(loaded), loaded.lastUpdateId);
    loaded.updatesSinceCompaction = 0;
    loaded.lacksMarkdown = false;
    measured(loaded, state.byteLength);
  }

  /**
   * Stores `state` (and `markdown`, its text) as the document's compacted state through log row
   * `through`; `cleared`: the rows it covers hold no data to clear.
   */
  writeState(doc: { id: string; tenantId: string }, state: Buffer, markdown: string, through: number, cleared = false): void {
    this.putStateRow(doc, { state, markdown, partsGeneration: null }, through, cleared);
  }

  /**
   * The state row through `through` (its state and Markdown inline, or naming the generation of
   * their parts); a generation of parts it named before is deleted in the clearing slices.
   */
  private putStateRow(doc: { id: string; tenantId: string }, body: { state: Buffer; markdown: string | null; partsGeneration: string | null }, through: number, cleared = false): void {
    const now = this.opts.clock.now().toISOString();
    const progress = cleared ? { clearedThroughUpdateId: through } : {};
    const before = this.opts.statements.reads.stateMeta.get({ documentId: doc.id })?.partsGeneration;
    this.opts.db
      .insert(documentStates)
      .values({ documentId: doc.id, tenantId: doc.tenantId, ...body, throughUpdateId: through, updatedAt: now, ...progress })
      .onConflictDoUpdate({ target: documentStates.documentId, set: { ...body, throughUpdateId: through, updatedAt: now, ...progress } })
      .run();
    if (before && before !== body.partsGeneration) this.discardParts(doc.id, before);
    this.opts.metrics.compacted();
    if (cleared) return;
    if (!this.uncleared.has(doc.id)) this.uncleared.set(doc.id, CLEAR_ROWS_FIRST_STEP);
    this.scheduleClear();
  }

  /**
   * Whether a state through `through` would be newer than the one stored (of a document that
   * still exists): never an older one over a newer, whose covered log rows may be cleared already.
   */
  private wanted(documentId: string, through: number): boolean {
    const { reads } = this.opts.statements;
    if (!reads.tenantOf.get({ documentId })) return false;
    const current = reads.stateMeta.get({ documentId });
    return !current || current.throughUpdateId < through || (current.throughUpdateId === through && !current.hasMarkdown);
  }

  /**
   * writeState for a state that may be large, unless a state as new is stored (or the document is
   * gone, or `abandoned()` says the store closes). Past STATE_PARTS_ABOVE bytes the state and its
   * Markdown are written a part per turn of the event loop, each part a short write of its own,
   * and the state row then names them in one small write: writing 5 MB at once held the event
   * loop for 100 ms (bench/collab-cost.ts). Resolves true once the state is stored.
   */
  async storeState(doc: { id: string; tenantId: string }, state: Buffer, markdown: string, through: number, abandoned: () => boolean): Promise<boolean> {
    const text = Buffer.from(markdown, 'utf8');
    if (state.byteLength + text.byteLength <= STATE_PARTS_ABOVE) {
      return inTransaction(this.opts.db, () => {
        if (!this.wanted(doc.id, through)) return false;
        this.writeState(doc, state, markdown, through);
        return true;
      });
    }
    const insert = this.opts.statements.parts.insert;
    const generation = newId();
    const parts = [...partsOf(state, 'state'), ...partsOf(text, 'markdown')];
    for (const [i, { kind, part, data }] of parts.entries()) {
      if (i > 0) await yieldToEventLoop();
      if (abandoned()) return false;
      if (!this.wanted(doc.id, through)) {
        this.discardParts(doc.id, generation);
        return false;
      }
      insert.run({ documentId: doc.id, generation, kind, part, tenantId: doc.tenantId, data });
    }
    await yieldToEventLoop();
    if (abandoned()) return false;
    return inTransaction(this.opts.db, () => {
      if (!this.wanted(doc.id, through)) {
        this.discardParts(doc.id, generation);
        return false;
      }
      this.putStateRow(doc, { state: EMPTY, markdown: null, partsGeneration: generation }, through);
      return true;
    });
  }

  /** Deletes the parts of a generation no state row names, a few per clearing step. */
  private discardParts(documentId: string, generation: string): void {
    this.discarded.push({ documentId, generation });
    this.scheduleClear();
  }

  /** Clears every compacted row of the document now. */
  clearAll(documentId: string): void {
    this.clearCompacted(documentId, Infinity);
  }

  private scheduleClear(): void {
    if (this.clearScheduled || (this.uncleared.size === 0 && this.discarded.length === 0)) return;
    this.clearScheduled = true;
    const run = () => {
      this.clearScheduled = false;
      this.clearSlice();
    };
    // Clearing can wait while the WAL is large: its writes would keep the WAL from starting over.
    if (walPressed(this.opts.db)) setTimeout(run, CLEAR_WAL_WAIT_MS);
    else setImmediate(run);
  }

  /** Clears compacted rows, a step of each waiting document in turn, for about CLEAR_SLICE_MS. */
  private clearSlice(): void {
    const started = performance.now();
    try {
      while (this.discarded.length > 0 && performance.now() - started < CLEAR_SLICE_MS) {
        const { documentId, generation } = this.discarded[0]!;
        if (this.opts.statements.parts.deleteSome.run({ documentId, generation, count: PARTS_PER_STEP }).changes < PARTS_PER_STEP) this.discarded.shift();
      }
      while (this.uncleared.size > 0 && performance.now() - started < CLEAR_SLICE_MS) {
        for (const [documentId, rows] of this.uncleared) {
          const stepStarted = performance.now();
          this.clearCompacted(documentId, rows);
          const took = performance.now() - stepStarted;
          if (this.uncleared.has(documentId)) {
            this.uncleared.set(documentId, took > CLEAR_SLICE_MS ? Math.max(1, rows >> 1) : Math.min(CLEAR_ROWS_PER_STEP, rows * 2));
          }
          if (performance.now() - started >= CLEAR_SLICE_MS) break;
        }
      }
    } catch (err) {
      // Only space is at stake: the progress is on disk, and the next start resumes from it.
      this.opts.logger?.warn({ err }, 'could not clear compacted document updates');
      this.uncleared.clear();
      this.discarded.length = 0;
    }
    this.scheduleClear();
  }

  /**
   * Clears the `data` of up to `rows` compacted log rows of the document, in one transaction with
   * its progress; the document leaves the waiting set once all are cleared (or it is gone).
   */
  private clearCompacted(documentId: string, rows: number): void {
    const statements = this.opts.statements.clearing;
    const done = inTransaction(this.opts.db, () => {
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
}
