// The one durable job runner of the server (imports, roster imports, mail): work is a row of the
// `jobs` table, taken under a lease, retried with backoff, and its progress and outcome recorded
// there. Areas register a handler per kind (register) and enqueue jobs inside their own
// transactions (enqueue), so a job exists exactly when what asked for it was committed. The
// server runs the loop on a timer (start/stop); tests call runDue()/drain() with a manual clock.
//
// Nothing in memory matters for correctness: a process that dies leaves its jobs `running` with a
// lease that runs out; they are then taken again, or failed once their attempts are spent (a kind
// whose work cannot be resumed, such as an import, has one attempt and cleans up in onFailed).
import { and, eq, lte, or, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../db/client';
import { jobs } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';

export type JobRow = typeof jobs.$inferSelect;

/** Thrown by a handler for a failure that another attempt would not mend (bad input): the job fails at once. */
export class JobFailure extends Error {
  constructor(
    message: string,
    /** Stored as the job's result beside the error (a report of what was found). */
    readonly result?: unknown,
  ) {
    super(message);
  }
}

export interface JobContext {
  readonly id: string;
  readonly tenantId: string;
  readonly kind: string;
  readonly input: unknown;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly createdBy: string | null;
  /** Records how far the job is (written at most every PROGRESS_INTERVAL_MS, and at the end). */
  progress(done: number, total: number): void;
  /** Aborted when the runner stops (shutdown): end soon; the job is taken again after a restart. */
  readonly signal: AbortSignal;
}

export interface JobKind {
  run(job: JobContext): Promise<unknown>;
  /** Attempts before the job fails (default 1: work that cannot be resumed). */
  maxAttempts?: number;
  /** The wait before attempt `attempt + 1`, after `attempt` failed (default: 30 s doubling, at most 1 h, with jitter). */
  retryDelayMs?(attempt: number): number;
  /** How long a lease lasts; the runner renews it while the handler runs (default 60 s). */
  leaseMs?: number;
  /** Called once when the job has failed for good (spent attempts, JobFailure, or found abandoned): undo what it left. */
  onFailed?(job: JobRow, error: string): void | Promise<void>;
  /** Called once when the runner starts: undo what ended jobs left behind when their onFailed did not finish (the process died while cleaning). */
  sweep?(): void | Promise<void>;
}

export interface EnqueueOptions {
  kind: string;
  tenantId: string;
  input: unknown;
  createdBy?: string | null;
  /** Not before this time (default now). */
  runAfter?: Date;
}

const PROGRESS_INTERVAL_MS = 250;
const DEFAULT_LEASE_MS = 60_000;
const defaultRetryDelay = (attempt: number): number => {
  const base = Math.min(3_600_000, 30_000 * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
};

export class JobRunner {
  private readonly kinds = new Map<string, JobKind>();
  private readonly running = new Map<string, Promise<void>>();
  /** Identifies this process's leases. */
  private readonly owner = newId();
  private abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private passQueued = false;
  private started = false;

  constructor(
    private readonly options: {
      db: Db;
      clock: Clock;
      logger: Logger;
      /** Jobs running at once in this process (their heavy parts go to the worker threads). */
      concurrency?: number;
    },
  ) {}

  register(kind: string, definition: JobKind): void {
    if (this.kinds.has(kind)) throw new Error(`job kind ${kind} is registered twice`);
    this.kinds.set(kind, definition);
  }

  /** Adds a job; call it inside the transaction of the change that asks for it. */
  enqueue(tx: Db, job: EnqueueOptions): JobRow {
    const definition = this.kinds.get(job.kind);
    if (!definition) throw new Error(`no handler for job kind ${job.kind}`);
    const now = this.options.clock.now().toISOString();
    const row = tx
      .insert(jobs)
      .values({
        id: newId(),
        tenantId: job.tenantId,
        kind: job.kind,
        input: JSON.stringify(job.input ?? null),
        maxAttempts: definition.maxAttempts ?? 1,
        runAfter: (job.runAfter ?? this.options.clock.now()).toISOString(),
        createdBy: job.createdBy ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
    this.wake();
    return row;
  }

  /**
   * Replaces a job's stored input, for a handler whose input held something that must not outlive
   * its use (a mail's link, once sent or given up).
   */
  replaceInput(id: string, input: unknown): void {
    this.options.db
      .update(jobs)
      .set({ input: JSON.stringify(input ?? null), updatedAt: this.options.clock.now().toISOString() })
      .where(eq(jobs.id, id))
      .run();
  }

  /** One job of a tenant, or undefined. */
  find(tenantId: string, id: string): JobRow | undefined {
    return this.options.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, id), eq(jobs.tenantId, tenantId)))
      .get();
  }

  start(pollMs = 1000): void {
    if (this.started) return;
    this.started = true;
    if (this.abort.signal.aborted) this.abort = new AbortController();
    const tick = () => {
      this.timer = setTimeout(() => {
        void this.runDue()
          .catch((error) => this.options.logger.error({ err: error }, 'job runner pass failed'))
          .finally(() => this.started && tick());
      }, pollMs);
      this.timer.unref?.();
    };
    for (const [name, kind] of this.kinds) {
      if (!kind.sweep) continue;
      void Promise.resolve()
        .then(() => kind.sweep!())
        .catch((error) => this.options.logger.error({ err: error, kind: name }, 'sweeping after ended jobs failed'));
    }
    tick();
    this.wake();
  }

  /** Stops taking jobs, asks running handlers to end, and waits for them. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  /** A pass soon (after an enqueue), when the loop runs. */
  wake(): void {
    if (!this.started || this.passQueued) return;
    this.passQueued = true;
    setImmediate(() => {
      this.passQueued = false;
      if (this.started) void this.runDue().catch((error) => this.options.logger.error({ err: error }, 'job runner pass failed'));
    });
  }

  /** Jobs running in this process now. */
  get busy(): number {
    return this.running.size;
  }

  /** Takes due jobs up to the concurrency and starts them; resolves with how many it started. */
  async runDue(): Promise<number> {
    const { db, clock } = this.options;
    const free = (this.options.concurrency ?? 2) - this.running.size;
    if (free <= 0) return 0;
    const now = clock.now().toISOString();
    const due = db
      .select()
      .from(jobs)
      .where(
        or(
          and(eq(jobs.status, 'queued'), lte(jobs.runAfter, now)),
          and(eq(jobs.status, 'running'), lte(jobs.lockedUntil, now)),
        ),
      )
      .orderBy(jobs.runAfter, jobs.id)
      .limit(free)
      .all();
    let started = 0;
    for (const row of due) {
      if (this.running.has(row.id)) continue;
      const definition = this.kinds.get(row.kind);
      if (!definition) continue; // another version of the server knows it; leave it be
      if (row.status === 'running' && row.attempts >= row.maxAttempts) {
        // Abandoned by a process that died, with no attempt left: fail it, and let the kind clean up.
        await this.fail(row, definition, 'The job was interrupted (the server stopped while it ran)');
        continue;
      }
      const claimed = this.claim(row, definition);
      if (!claimed) continue;
      started += 1;
      const run = this.execute(claimed, definition).finally(() => {
        this.running.delete(row.id);
        this.wake();
      });
      this.running.set(row.id, run);
    }
    return started;
  }

  /** Passes until nothing is due now and nothing runs (tests). */
  async drain(maxPasses = 1000): Promise<void> {
    for (let pass = 0; pass < maxPasses; pass += 1) {
      const started = await this.runDue();
      if (this.running.size === 0) {
        if (started === 0) return;
        continue; // what it started has already finished
      }
      await Promise.race([...this.running.values()]);
    }
    throw new Error('the job runner did not drain');
  }

  /** The lease, taken only if nobody took the job meanwhile (portable: a conditional update). */
  private claim(row: JobRow, definition: JobKind): JobRow | undefined {
    const { db, clock } = this.options;
    const now = clock.now();
    return db
      .update(jobs)
      .set({
        status: 'running',
        attempts: row.attempts + 1,
        lockedUntil: new Date(now.getTime() + (definition.leaseMs ?? DEFAULT_LEASE_MS)).toISOString(),
        leaseOwner: this.owner,
        updatedAt: now.toISOString(),
      })
      .where(and(eq(jobs.id, row.id), eq(jobs.attempts, row.attempts), eq(jobs.status, row.status)))
      .returning()
      .get();
  }

  private async execute(row: JobRow, definition: JobKind): Promise<void> {
    const { db, clock, logger } = this.options;
    const leaseMs = definition.leaseMs ?? DEFAULT_LEASE_MS;
    const renew = setInterval(() => {
      db.update(jobs)
        .set({ lockedUntil: new Date(clock.now().getTime() + leaseMs).toISOString() })
        .where(and(eq(jobs.id, row.id), eq(jobs.leaseOwner, this.owner), eq(jobs.status, 'running')))
        .run();
    }, Math.max(1000, leaseMs / 3));
    renew.unref?.();
    let lastProgressAt = 0;
    const context: JobContext = {
      id: row.id,
      tenantId: row.tenantId,
      kind: row.kind,
      input: JSON.parse(row.input),
      attempt: row.attempts,
      createdBy: row.createdBy,
      signal: this.abort.signal,
      progress: (done, total) => {
        const at = performance.now();
        if (done < total && at - lastProgressAt < PROGRESS_INTERVAL_MS) return;
        lastProgressAt = at;
        db.update(jobs)
          .set({ progressDone: done, progressTotal: total, updatedAt: clock.now().toISOString() })
          .where(and(eq(jobs.id, row.id), eq(jobs.leaseOwner, this.owner)))
          .run();
      },
    };
    try {
      const result = await definition.run(context);
      db.update(jobs)
        .set({
          status: 'succeeded',
          result: JSON.stringify(result ?? null),
          error: null,
          lockedUntil: null,
          finishedAt: clock.now().toISOString(),
          updatedAt: clock.now().toISOString(),
          progressDone: sql`max(${jobs.progressDone}, ${jobs.progressTotal})`,
        })
        .where(and(eq(jobs.id, row.id), eq(jobs.leaseOwner, this.owner)))
        .run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (this.abort.signal.aborted && !(error instanceof JobFailure)) {
        // Shutting down: the lease runs out and the job is taken again after the restart.
        logger.info({ job: row.id, kind: row.kind }, 'job stopped by shutdown');
        return;
      }
      if (error instanceof JobFailure || row.attempts >= row.maxAttempts) {
        if (!(error instanceof JobFailure)) logger.error({ err: error, job: row.id, kind: row.kind }, 'job failed');
        await this.fail(row, definition, message, error instanceof JobFailure ? error.result : undefined);
        return;
      }
      const delay = (definition.retryDelayMs ?? defaultRetryDelay)(row.attempts);
      logger.warn({ err: error, job: row.id, kind: row.kind, attempt: row.attempts, retryInMs: delay }, 'job attempt failed');
      db.update(jobs)
        .set({
          status: 'queued',
          error: message,
          lockedUntil: null,
          leaseOwner: null,
          runAfter: new Date(clock.now().getTime() + delay).toISOString(),
          updatedAt: clock.now().toISOString(),
        })
        .where(and(eq(jobs.id, row.id), eq(jobs.leaseOwner, this.owner)))
        .run();
    } finally {
      clearInterval(renew);
    }
  }

  private async fail(row: JobRow, definition: JobKind, error: string, result?: unknown): Promise<void> {
    const { db, clock, logger } = this.options;
    const now = clock.now().toISOString();
    const failed = db
      .update(jobs)
      .set({
        status: 'failed',
        error,
        result: result === undefined ? row.result : JSON.stringify(result),
        lockedUntil: null,
        finishedAt: now,
        updatedAt: now,
      })
      .where(and(eq(jobs.id, row.id), eq(jobs.status, 'running')))
      .returning()
      .get();
    if (!failed) return;
    try {
      await definition.onFailed?.(failed, error);
    } catch (cleanupError) {
      logger.error({ err: cleanupError, job: row.id, kind: row.kind }, 'cleaning up after a failed job failed');
    }
  }
}
