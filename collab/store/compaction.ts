// Compaction and state writes. A compacted state is written at once, with its Markdown read from
// the same Y.Doc at the same moment; the `data` of the log rows it covers is cleared later, a few
// rows at a time in short slices (`cleared_through_update_id` keeps the progress, so a restart
// resumes it), since clearing them in one go would hold every live document up for that long.
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/client';
import { documentStates } from '../../db/schema';
import type { Clock } from '../../src/lib/clock';
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
  private clearScheduled = false;

  constructor(private readonly opts: CompactionOptions) {
    // Clearing that a previous process left unfinished.
    for (const { documentId } of unfinishedClearings(opts.db).all()) this.uncleared.set(documentId, CLEAR_ROWS_FIRST_STEP);
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
    const now = this.opts.clock.now().toISOString();
    const progress = cleared ? { clearedThroughUpdateId: through } : {};
    this.opts.db
      .insert(documentStates)
      .values({ documentId: doc.id, tenantId: doc.tenantId, state, markdown, throughUpdateId: through, updatedAt: now, ...progress })
      .onConflictDoUpdate({ target: documentStates.documentId, set: { state, markdown, throughUpdateId: through, updatedAt: now, ...progress } })
      .run();
    this.opts.metrics.compacted();
    if (cleared) return;
    if (!this.uncleared.has(doc.id)) this.uncleared.set(doc.id, CLEAR_ROWS_FIRST_STEP);
    this.scheduleClear();
  }

  /** Clears every compacted row of the document now. */
  clearAll(documentId: string): void {
    this.clearCompacted(documentId, Infinity);
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
