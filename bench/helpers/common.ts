// What several benchmarks need alike: the app's dependencies on a bench database, a process's CPU
// time, percentiles, starting a helper process, an in-process benchmark's database, server and
// clean-up, and timing sequential HTTP requests and printing the figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { openDatabase, type Database_ } from '../../db/client';
import { systemClock } from '../../src/lib/clock';
import { buildConfig, type ConfigInput } from '../../src/config';
import { buildDeps } from '../../src/deps';
import { createLogger } from '../../src/logger';
import { SERVER_NODE_FLAGS } from '../../src/node-flags';

export const BENCH_ADMIN = { email: 'bench@example.com', password: 'bench-password' };

/** The app's dependencies on `database` (bootstrap admin, cheap password hashing, no logging); `config` adds settings. */
export function benchDeps(database: Database_, config: ConfigInput = {}) {
  return buildDeps({
    database,
    config: buildConfig({ adminEmail: BENCH_ADMIN.email, adminPassword: BENCH_ADMIN.password, scryptCost: 1024, logLevel: 'silent', ...config }),
    clock: systemClock,
    logger: createLogger('silent'),
  });
}

/** User + system CPU milliseconds of a process so far (Linux /proc, 100 ticks/s; 0 elsewhere). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Nearest-rank percentile of ascending values; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The figures of one timed URL: wall-clock median and p95, this process's CPU median, body size. */
export interface Timing {
  median: number;
  p95: number;
  cpu: number;
  bytes: number;
}

/**
 * `runs` sequential requests to `url` as `token`'s holder, after `warmup` untimed ones; any status
 * but 200 aborts the benchmark. `request(i)` gives request i's method and body (JSON), GET if none.
 * The CPU figure is this (client + in-process server) process's, per request.
 */
export async function timeRequests(
  url: string,
  token: string,
  { runs, warmup, request }: { runs: number; warmup: number; request?: (i: number) => RequestInit },
): Promise<Timing> {
  const samples: number[] = [];
  const cpuSamples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < warmup + runs; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const init = request?.(i) ?? {};
    const res = await fetch(url, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) } });
    const body = new Uint8Array(await res.arrayBuffer());
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body)}`);
    bytes = body.length;
    if (i >= warmup) {
      samples.push(elapsed);
      cpuSamples.push((cpu.user + cpu.system) / 1000);
    }
  }
  samples.sort((a, b) => a - b);
  cpuSamples.sort((a, b) => a - b);
  return { median: percentile(samples, 50), p95: percentile(samples, 95), cpu: percentile(cpuSamples, 50), bytes };
}

/** A timed URL as printed: `target` is the median to stay under (ms), +Infinity for none; no target, no verdict. */
export type Result = Timing & { name: string; target?: number };

/**
 * Prints how the figures were measured (runs, warm-up, Node, cores, load average, which depend on
 * what else the machine runs), then one line per result with its verdict against its target.
 * Returns whether any result missed its target (each benchmark decides its exit code).
 */
export function printResults(results: Result[], { runs, warmup, nameWidth }: { runs: number; warmup: number; nameWidth: number }): boolean {
  console.log(`${runs} sequential requests each after ${warmup} warm-up, over HTTP on 127.0.0.1, Node ${process.version}`);
  console.log(`${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) when done`);
  for (const r of results) {
    const verdict =
      r.target === undefined ? '' : r.target === Number.POSITIVE_INFINITY ? 'no target' : r.median < r.target ? `target < ${r.target} ms: ok` : `target < ${r.target} ms: OVER`;
    console.log(
      `${r.name.padEnd(nameWidth)} median ${r.median.toFixed(2).padStart(7)} ms   p95 ${r.p95.toFixed(2).padStart(7)} ms   CPU median ${r.cpu.toFixed(2).padStart(7)} ms   ${(r.bytes / 1024).toFixed(0).padStart(4)} KiB${verdict ? `   (${verdict})` : ''}`,
    );
  }
  return results.some((r) => r.target !== undefined && r.median >= r.target);
}

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Starts a bench helper process (node itself with tsx as a loader, from the repository's root: its
 * pid is the helper's) with the Node flags the server runs with (src/node-flags.ts), and resolves
 * with the port it prints; rejects if it exits first.
 */
export function startHelper(script: string, args: string[], nodeArgs: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...nodeArgs, '--import', 'tsx', script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk) => {
      buffered += String(chunk);
      const match = /"port":(\d+)/.exec(buffered);
      if (match) resolve({ child, port: Number(match[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${path.basename(script, '.ts')} exited with ${code}`)));
  });
}

/** A bench database in a new temporary folder, and `dispose` to close it and remove the folder. */
export function tempDatabase(name: string): { database: Database_; dispose: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `lms-bench-${name}-`));
  const database = openDatabase(path.join(dir, 'bench.sqlite'));
  return {
    database,
    dispose: () => {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Serves `fetch` over HTTP on 127.0.0.1, on a free port; `close` stops the server. */
export async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<{ port: number; close: () => Promise<void> }> {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Runs a benchmark's main, then `dispose`s its database; an error is printed, disposes and exits 1. */
export function runBench(main: () => Promise<void>, dispose: () => void): void {
  main().then(dispose, (err) => {
    console.error(err);
    dispose();
    process.exit(1);
  });
}

/**
 * BENCH_TRACE_STALLS_MS=50: a stall probe's gap (performance.now() at its ticks) of at least that
 * long is printed on stderr with its start and end on the monotonic clock in microseconds, the time
 * base of a `node --cpu-prof` profile, to tell what ran in it (bench/RESULTS.md, "Finding a stall").
 */
const TRACE_STALLS_MS = Number(process.env.BENCH_TRACE_STALLS_MS ?? 0);
export function traceStall(from: number, to: number): void {
  if (!TRACE_STALLS_MS || to - from < TRACE_STALLS_MS) return;
  const originUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  process.stderr.write(`stall ${(to - from).toFixed(0)} ms: ${Math.round(originUs + from * 1000)} ${Math.round(originUs + to * 1000)}\n`);
}

/**
 * A 1 ms timer: the longest gap between its ticks is the event loop's longest stall, each gap past
 * BENCH_TRACE_STALLS_MS traced. `stop` ends it and gives that longest gap (ms).
 */
export function stallProbe(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    traceStall(last, now);
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  probe.unref();
  return {
    stop: () => {
      clearInterval(probe);
      return longest;
    },
  };
}

/**
 * The longest gap between the ticks of a 1 ms timer while `work` runs (each gap past
 * BENCH_TRACE_STALLS_MS traced), with a bystander making its request (`ask`) every 10 ms: how many
 * it made and the slowest.
 */
export async function measuredStall<T>(
  work: () => Promise<T>,
  ask: () => Promise<unknown>,
): Promise<{ result: T; longest: number; asked: number; slowest: number; wall: number }> {
  const probe = stallProbe();
  let asked = 0;
  let slowest = 0;
  let working = true;
  const bystander = (async () => {
    while (working) {
      const started = performance.now();
      await ask();
      slowest = Math.max(slowest, performance.now() - started);
      asked++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const started = performance.now();
  const result = await work();
  const wall = (performance.now() - started) / 1000;
  working = false;
  await bystander;
  return { result, longest: probe.stop(), asked, slowest, wall };
}
