// Worker threads for the Yjs work on large documents (yjs-tasks.ts): loading one made of ~100,000
// small edits, folding it into a state, or diffing 5 MiB of Markdown takes Yjs and the diff
// 100-300 ms, which on the event loop would stall every request and every live editor meanwhile.
// A pool (piscina) of at most WORKER_THREADS threads, started at the first task, ended when idle.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Edited, Folded, StoredBody, YjsTask } from './yjs-tasks';

/** Threads at most: one core is left to the event loop. */
const WORKER_THREADS = Math.max(1, Math.min(4, availableParallelism() - 1));
/** How long an idle thread stays (loading tsx and Yjs into a new one costs ~200 ms). */
const IDLE_TIMEOUT_MS = 60_000;
/** A worker's diff of a large body may search this long for small edits (off the event loop). */
const WORKER_DIFF_TIMEOUT_MS = 1_000;

export class YjsWorkers {
  private pool?: Piscina<YjsTask, Folded | Edited>;
  private closed = false;

  private run(task: YjsTask): Promise<Folded | Edited> {
    if (this.closed) return Promise.reject(new Error('the Yjs workers are closed'));
    this.pool ??= new Piscina<YjsTask, Folded | Edited>({
      filename: new URL('./yjs-worker.mjs', import.meta.url).href,
      minThreads: 0,
      maxThreads: WORKER_THREADS,
      idleTimeout: IDLE_TIMEOUT_MS,
      // The entry registers its own loader: the process's flags (tsx's, vitest's) are not the thread's.
      execArgv: [],
    });
    return this.pool.run(task);
  }

  fold(body: StoredBody): Promise<Folded> {
    return this.run({ kind: 'fold', body }) as Promise<Folded>;
  }

  edit(body: StoredBody, markdown: string): Promise<Edited> {
    return this.run({ kind: 'edit', body, markdown, diffTimeoutMs: WORKER_DIFF_TIMEOUT_MS }) as Promise<Edited>;
  }

  /** Ends the threads; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }
}
