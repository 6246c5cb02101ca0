// Open-loop HTTP load (as bench/compliance.ts): each stream sends one request every 1000/rate ms
// on keep-alive connections for `seconds`, answered or not; latency runs from the send. Run in
// this process (atRates) or in a forked one (loadProcess), so that one stream's client work is
// not in another's measured latency: on two cores a loaded client's own event loop reads as a
// slow server. Each call reports its process's event loop delay beside the rows.
import { fork, spawn } from 'node:child_process';
import http from 'node:http';
import { percentile } from './common';
import { loopDelay } from './loop-delay';

export interface Load {
  name: string;
  rate: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  errors: number;
  /** Every request's latency (ms), sorted: for pooling rounds (pooled). */
  latencies: number[];
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  token: string;
  body?: string;
  contentType?: string;
}

export interface Stream {
  name: string;
  rate: number;
  next: (i: number) => RequestSpec;
}

/** A stream a child process can run: its requests listed, taken in turn. */
export interface ListedStream {
  name: string;
  rate: number;
  requests: RequestSpec[];
}

export interface Loads {
  loads: Load[];
  /** The event loop delay p99 (ms) of the process that sent them. */
  clientLoopP99Ms: number;
}

export async function atRates(base: string, streams: Stream[], seconds: number): Promise<Loads> {
  const { hostname, port } = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const loop = loopDelay();
  const started = performance.now();
  const loads = await Promise.all(
    streams.map(
      (s) =>
        new Promise<Load>((resolve) => {
          const total = s.rate * seconds;
          const intervalMs = 1000 / s.rate;
          const latencies: number[] = [];
          let errors = 0;
          let sent = 0;
          let answered = 0;
          const done = () => {
            if (++answered < total) return;
            const elapsed = (performance.now() - started) / 1000;
            resolve({ ...summary(s.name, s.rate, latencies, errors), rps: total / elapsed });
          };
          const fire = (i: number) => {
            const r = s.next(i);
            const t0 = performance.now();
            const headers: Record<string, string> = { Authorization: `Bearer ${r.token}` };
            if (r.body !== undefined) {
              headers['Content-Type'] = r.contentType ?? 'application/json';
              headers['Content-Length'] = String(Buffer.byteLength(r.body));
            }
            const req = http.request({ agent, host: hostname, port, method: r.method, path: r.path, headers }, (res) => {
              res.resume();
              res.on('end', () => {
                latencies.push(performance.now() - t0);
                if (res.statusCode === undefined || res.statusCode >= 300) errors++;
                done();
              });
            });
            req.on('error', () => {
              errors++;
              done();
            });
            req.end(r.body);
          };
          // Woken when the next request is due, not polled: on two cores every wake-up of a load
          // process may take the core from the server it measures.
          const send = () => {
            const due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
            while (sent < due) fire(sent++);
            if (sent < total) setTimeout(send, Math.max(0, started + sent * intervalMs - performance.now()));
          };
          send();
        }),
    ),
  );
  agent.destroy();
  loop.stop();
  return { loads, clientLoopP99Ms: loop.p99() };
}

const round = (x: number) => Math.round(x * 10) / 10;

function summary(name: string, rate: number, latencies: number[], errors: number): Load {
  latencies.sort((a, b) => a - b);
  return { name, rate, rps: rate, p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1)!), requests: latencies.length, errors, latencies };
}

/** One load of several rounds of the same stream: their requests together, as if one run. */
export function pooled(name: string, loads: Load[]): Load {
  const load = summary(name, loads[0]!.rate, loads.flatMap((l) => l.latencies), loads.reduce((n, l) => n + l.errors, 0));
  return { ...load, requests: loads.reduce((n, l) => n + l.requests, 0), rps: loads.reduce((n, l) => n + l.rps, 0) / loads.length };
}

/**
 * A load process's own garbage collection on its own thread: V8's default helpers (four whatever
 * the machine) would take both cores of a small machine during its collections, and the server
 * measured beside it would wait for a core (seen with `perf sched`: 8–12 ms of scheduling delay).
 */
export const LOAD_CLIENT_FLAGS = ['--single-threaded-gc'] as const;

/**
 * Resolves at once in a process started with LOAD_CLIENT_FLAGS. Otherwise it starts this script
 * again with them (same loader, same arguments), never resolves, and exits with its exit code: for
 * a benchmark's own process when it only seeds and coordinates load processes.
 */
export function withLoadClientFlags(): Promise<void> {
  if (LOAD_CLIENT_FLAGS.every((flag) => process.execArgv.includes(flag))) return Promise.resolve();
  const child = spawn(process.execPath, [...LOAD_CLIENT_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  return new Promise(() => {});
}

const listed = (s: ListedStream): Stream => ({ name: s.name, rate: s.rate, next: (i) => s.requests[i % s.requests.length]! });

/**
 * A forked process of its own that runs atRates when asked (started once, for several rounds):
 * `run` resolves with its loads once it has sent them all; `close` lets it exit.
 */
export function loadProcess(): { run(base: string, streams: ListedStream[], seconds: number): Promise<Loads>; close(): void } {
  const child = fork(import.meta.filename, [], { execArgv: [...LOAD_CLIENT_FLAGS, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let exited: Error | null = null;
  child.once('exit', (code) => (exited = new Error(`the load process exited with ${code}`)));
  return {
    run: (base, streams, seconds) =>
      new Promise((resolve, reject) => {
        if (exited) return reject(exited);
        const onExit = () => reject(exited);
        child.once('exit', onExit);
        child.once('message', (result: Loads) => {
          child.off('exit', onExit);
          resolve(result);
        });
        child.send({ base, streams, seconds });
      }),
    close: () => child.connected && child.disconnect(),
  };
}

if (process.send && process.argv[1] === import.meta.filename) {
  process.on('message', (job: { base: string; streams: ListedStream[]; seconds: number }) => {
    void atRates(job.base, job.streams.map(listed), job.seconds).then((result) => process.send!(result));
  });
}
