// The Yjs work on large documents (yjs-tasks.ts), run in the server's worker threads.
import type { WorkerPool } from '../src/lib/worker-pool';
import type { Edited, Folded, Sliced, StoredBody, YjsTask } from './yjs-tasks';

const TASKS = new URL('./yjs-tasks.ts', import.meta.url);
/** A worker's diff of a large body may search this long for small edits (off the event loop). */
const WORKER_DIFF_TIMEOUT_MS = 1_000;

export class YjsWorkers {
  constructor(private readonly pool: WorkerPool) {}

  fold(body: StoredBody): Promise<Folded> {
    return this.pool.run<Folded>(TASKS, { kind: 'fold', body } satisfies YjsTask);
  }

  slice(body: StoredBody, structsPerSlice: number): Promise<Sliced> {
    return this.pool.run<Sliced>(TASKS, { kind: 'slice', body, structsPerSlice } satisfies YjsTask);
  }

  edit(body: StoredBody, markdown: string): Promise<Edited> {
    return this.pool.run<Edited>(TASKS, { kind: 'edit', body, markdown, diffTimeoutMs: WORKER_DIFF_TIMEOUT_MS } satisfies YjsTask);
  }
}
