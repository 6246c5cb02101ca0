// Worker threads for the CPU-heavy work on large documents, which on the event loop would stall
// every request and every live editor meanwhile: Yjs loading, folding and diffing a large body
// (collab/yjs-tasks.ts), rendering a large Markdown body as HTML, text or Word (export/render.ts);
// bench/large-documents.ts measures both. One pool (piscina) for the server, of
// at most one thread per core but one (the event loop's), started at the first task and ended when
// idle. A task names a TypeScript module whose default export it calls (worker-entry.mjs).
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';

/** How long an idle thread stays (starting one loads tsx and its modules again). */
const IDLE_TIMEOUT_MS = 60_000;
/** How much lower than the process the threads run (a nice increment; Linux keeps it per thread). */
const NICE_INCREMENT = 10;
/** Tasks waiting for a thread, past which more are refused (WorkersBusyError) rather than queued. */
const DEFAULT_MAX_QUEUE = 64;

/** Too much work is waiting for the worker threads: try again shortly (503 with Retry-After). */
export class WorkersBusyError extends Error {
  readonly retryAfterSeconds = 5;
  constructor() {
    super('Too much work on large documents is waiting; try again shortly');
  }
}

export class WorkerPool {
  private pool?: Piscina<{ module: string; input: unknown }, unknown>;
  private closed = false;
  private readonly maxThreads: number;
  private readonly maxQueue: number;

  constructor(options: { maxThreads?: number; maxQueue?: number } = {}) {
    this.maxThreads = options.maxThreads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    this.maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
  }

  /**
   * Runs the default export of `module` (a file URL) on `input` in a worker thread; its result is
   * structured-cloned back. `transfer`: buffers of `input` moved to the thread rather than copied
   * (they are unusable here afterwards).
   */
  run<T>(module: URL, input: unknown, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the worker threads are closed'));
    this.pool ??= new Piscina({
      filename: new URL('./worker-entry.mjs', import.meta.url).href,
      minThreads: 0,
      maxThreads: this.maxThreads,
      idleTimeout: IDLE_TIMEOUT_MS,
      // Below the event loop's priority (through @napi-rs/nice): on a busy machine the thread that
      // serves requests and live editors gets the CPU first, and this work the time left.
      niceIncrement: NICE_INCREMENT,
      // The entry registers its own loader: the process's flags (tsx's, vitest's) are not the thread's.
      execArgv: [],
    });
    if (this.pool.queueSize >= this.maxQueue) return Promise.reject(new WorkersBusyError());
    return this.pool.run({ module: module.href, input }, transfer.length > 0 ? { transferList: transfer } : undefined) as Promise<T>;
  }

  /** Ends the threads; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }
}
