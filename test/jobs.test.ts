// The durable job runner (src/jobs/runner.ts): jobs run once, record progress and outcome, retry
// with backoff, fail at once on a JobFailure, and a job abandoned by a dead process is taken again
// (or failed and cleaned up when it cannot resume). Driven with a manual clock and drain().
import { afterEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { jobs } from '../db/schema';
import { JobFailure, JobRunner, type JobContext, type JobRow } from '../src/jobs/runner';
import { presentJob, jobResult } from '../src/jobs/present';
import { createLogger } from '../src/logger';
import { makeTestApp } from './helpers/app';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

async function setup() {
  const t = await makeTestApp();
  opened.push(t);
  return { ...t, tenantId: t.defaultTenantId };
}

const rowOf = (t: Awaited<ReturnType<typeof setup>>, id: string): JobRow => t.deps.db.select().from(jobs).where(eq(jobs.id, id)).get()!;

describe('job runner', () => {
  it('runs a job once, with its input, and records progress and result', async () => {
    const t = await setup();
    const seen: unknown[] = [];
    t.deps.jobs.register('test.sum', {
      async run(job: JobContext) {
        const { numbers } = job.input as { numbers: number[] };
        seen.push(job.input);
        job.progress(numbers.length, numbers.length);
        return { sum: numbers.reduce((a, b) => a + b, 0) };
      },
    });
    const job = t.deps.jobs.enqueue(t.deps.db, { kind: 'test.sum', tenantId: t.tenantId, input: { numbers: [1, 2, 3] } });
    expect(presentJob(job)).toMatchObject({ status: 'queued', progress: { done: 0, total: 0 }, attempts: 0 });
    await t.deps.jobs.drain();
    const done = rowOf(t, job.id);
    expect(presentJob(done)).toMatchObject({ status: 'succeeded', progress: { done: 3, total: 3 }, attempts: 1, error: null });
    expect(jobResult(done)).toEqual({ sum: 6 });
    expect(done.finishedAt).not.toBeNull();
    await t.deps.jobs.drain();
    expect(seen).toHaveLength(1);
  });

  it('retries a failing job with backoff until it succeeds, and fails it when its attempts are spent', async () => {
    const t = await setup();
    let calls = 0;
    t.deps.jobs.register('test.flaky', {
      maxAttempts: 3,
      retryDelayMs: (attempt) => attempt * 1000,
      async run() {
        calls += 1;
        throw new Error(`outage ${calls}`);
      },
    });
    const job = t.deps.jobs.enqueue(t.deps.db, { kind: 'test.flaky', tenantId: t.tenantId, input: null });
    await t.deps.jobs.drain();
    expect(rowOf(t, job.id)).toMatchObject({ status: 'queued', attempts: 1, error: 'outage 1' });
    // Not due before its wait.
    t.clock.advance(999);
    await t.deps.jobs.drain();
    expect(calls).toBe(1);
    t.clock.advance(1);
    await t.deps.jobs.drain();
    expect(rowOf(t, job.id)).toMatchObject({ status: 'queued', attempts: 2, error: 'outage 2' });
    t.clock.advance(2000);
    await t.deps.jobs.drain();
    expect(rowOf(t, job.id)).toMatchObject({ status: 'failed', attempts: 3, error: 'outage 3' });
    t.clock.advance(60_000);
    await t.deps.jobs.drain();
    expect(calls).toBe(3);
  });

  it('fails at once on a JobFailure, keeps its report, and calls onFailed once', async () => {
    const t = await setup();
    const cleaned: string[] = [];
    t.deps.jobs.register('test.refused', {
      maxAttempts: 5,
      async run() {
        throw new JobFailure('the file is not a cartridge', { errors: ['no manifest'] });
      },
      onFailed: (row, error) => void cleaned.push(`${row.id}:${error}`),
    });
    const job = t.deps.jobs.enqueue(t.deps.db, { kind: 'test.refused', tenantId: t.tenantId, input: {} });
    await t.deps.jobs.drain();
    const row = rowOf(t, job.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, error: 'the file is not a cartridge' });
    expect(jobResult(row)).toEqual({ errors: ['no manifest'] });
    expect(cleaned).toEqual([`${job.id}:the file is not a cartridge`]);
  });

  it('takes again a job whose process died (its lease ran out), or fails and cleans up one that cannot resume', async () => {
    const t = await setup();
    const runs: string[] = [];
    const cleaned: string[] = [];
    let hang = true;
    const kind = (name: string, maxAttempts: number) => ({
      maxAttempts,
      leaseMs: 10_000,
      run: (job: JobContext) => {
        runs.push(name);
        // The first runner "dies": its handlers do not finish (until the test closes it).
        if (hang) return new Promise((_resolve, reject) => job.signal.addEventListener('abort', () => reject(new Error('closed'))));
        return Promise.resolve({ ok: job.attempt });
      },
      onFailed: (row: JobRow) => void cleaned.push(row.kind),
    });
    t.deps.jobs.register('test.resumable', kind('resumable', 3));
    t.deps.jobs.register('test.once', kind('once', 1));
    const resumable = t.deps.jobs.enqueue(t.deps.db, { kind: 'test.resumable', tenantId: t.tenantId, input: {} });
    const once = t.deps.jobs.enqueue(t.deps.db, { kind: 'test.once', tenantId: t.tenantId, input: {} });
    expect(await t.deps.jobs.runDue()).toBe(2);
    expect(rowOf(t, resumable.id).status).toBe('running');

    // A second process (the restart) over the same database.
    hang = false;
    const restarted = new JobRunner({ db: t.deps.db, clock: t.clock, logger: createLogger('silent') });
    restarted.register('test.resumable', kind('resumable', 3));
    restarted.register('test.once', kind('once', 1));
    await restarted.drain();
    expect(runs).toEqual(['resumable', 'once']); // leases still held
    t.clock.advance(10_001);
    await restarted.drain();
    expect(rowOf(t, resumable.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(jobResult(rowOf(t, resumable.id))).toEqual({ ok: 2 });
    expect(rowOf(t, once.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(rowOf(t, once.id).error).toMatch(/interrupted/);
    expect(cleaned).toEqual(['test.once']);
  });

  it('runs at most its concurrency at once and tells a stopping handler to end', async () => {
    const t = await setup();
    const runner = new JobRunner({ db: t.deps.db, clock: t.clock, logger: createLogger('silent'), concurrency: 1 });
    const signals: AbortSignal[] = [];
    runner.register('test.long', {
      maxAttempts: 2,
      run: (job) =>
        new Promise((_resolve, reject) => {
          signals.push(job.signal);
          job.signal.addEventListener('abort', () => reject(new Error('stopped')));
        }),
    });
    const first = runner.enqueue(t.deps.db, { kind: 'test.long', tenantId: t.tenantId, input: {} });
    const second = runner.enqueue(t.deps.db, { kind: 'test.long', tenantId: t.tenantId, input: {} });
    expect(await runner.runDue()).toBe(1);
    expect(await runner.runDue()).toBe(0);
    expect(runner.busy).toBe(1);
    await runner.stop();
    expect(signals[0]?.aborted).toBe(true);
    // Cut short by the shutdown: still running under its lease, taken again after a restart.
    expect(rowOf(t, first.id)).toMatchObject({ status: 'running', attempts: 1 });
    expect(rowOf(t, second.id)).toMatchObject({ status: 'queued', attempts: 0 });
  });

  it('refuses a kind nobody registered, and a kind registered twice', async () => {
    const t = await setup();
    expect(() => t.deps.jobs.enqueue(t.deps.db, { kind: 'test.unknown', tenantId: t.tenantId, input: {} })).toThrow(/no handler/);
    t.deps.jobs.register('test.twice', { run: async () => null });
    expect(() => t.deps.jobs.register('test.twice', { run: async () => null })).toThrow(/twice/);
  });

  it('enqueues inside the caller\'s transaction: a rolled-back change leaves no job', async () => {
    const t = await setup();
    t.deps.jobs.register('test.tx', { run: async () => null });
    expect(() =>
      t.deps.db.transaction((tx) => {
        t.deps.jobs.enqueue(tx, { kind: 'test.tx', tenantId: t.tenantId, input: {} });
        throw new Error('the change failed');
      }),
    ).toThrow('the change failed');
    expect(t.deps.db.select().from(jobs).all()).toHaveLength(0);
  });
});
