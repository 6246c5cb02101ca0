// Live-editing benchmark (issue 7): our hub (the real server, durable SQLite log) beside the
// reference y-websocket server (@y/websocket-server 0.1.1, in memory) and Hocuspocus 3 (in
// memory), on the same workloads, in one run. Each server runs in its own child process on
// 127.0.0.1; every client runs in this process (stock y-websocket WebsocketProvider with `ws` and
// disableBc, or @hocuspocus/provider for Hocuspocus), one WebSocket per client.
//   A: 100 documents × 4 clients, 2 edits/s each, 20 s     B: 10 documents × 5 clients, 5 edits/s, 20 s
// Each edit appends a token `[n]` to the Y.Text `content`; every other client of the document
// times its arrival with performance.now() in this one process. Reported: fan-out latency
// p50/p99/max over all (edit, receiver) pairs, deliveries per second, lost deliveries, convergence
// (and, for ours, equality with what the server stored, before and after the documents unload),
// server CPU, and this process's event-loop delay (the clients must not be the bottleneck).
// Then the RSS of a fresh server process with 1,000 idle open documents (1 synced client each).
// Everything runs in three rounds, each server once per workload and round, in an order that
// rotates from round to round (on this 2-core VM a server's tail moves 2-5x between runs, idle RSS
// by half, and the first server after a quiet spell or a burst of disk writes fared worse); the
// goal is judged on the median of each server's three figures, and every round's is reported.
//   npx tsx bench/collab.ts            full run; writes the "Live editing (issue 7)" section of bench/RESULTS.md
//   npx tsx bench/collab.ts --quick    one 5 s round, 100 idle documents: a smoke run; writes nothing
//   --rounds=N                         N rounds instead of three
//   npx tsx bench/collab.ts --profile  also CPU-profiles our server during the workloads and
//                                      prints its hottest functions
//   --only=ours,yws (some servers), --workloads=B (some workloads), --idle-only (no workloads),
//   --no-idle (no idle memory), --heap-snapshots (heap snapshots at both idle readings, diffed by
//   constructor per document): partial runs that write nothing
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { cpuMs, percentile } from './helpers/common';

const QUICK = process.argv.includes('--quick');
const PROFILE = process.argv.includes('--profile');
const IDLE_ONLY = process.argv.includes('--idle-only');
const HEAP_SNAPSHOTS = process.argv.includes('--heap-snapshots');
/** `--only=ours,yws`: only these servers (a partial run writes nothing and judges nothing). */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const ROUNDS = roundsArgument(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length), QUICK ? 1 : 3);

function roundsArgument(given: string | undefined, fallback: number): number {
  if (given === undefined) return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`--rounds must be a whole number from 1 to 9, not ${given}`);
  return n;
}

interface Workload {
  name: string;
  docs: number;
  clientsPerDoc: number;
  editsPerSecond: number;
  seconds: number;
}

const ALL_WORKLOADS: Workload[] = [
  { name: 'A', docs: 100, clientsPerDoc: 4, editsPerSecond: 2, seconds: QUICK ? 5 : 20 },
  { name: 'B', docs: 10, clientsPerDoc: 5, editsPerSecond: 5, seconds: QUICK ? 5 : 20 },
];
/** `--workloads=B`: only these workloads. */
const ONLY_WORKLOADS = process.argv.find((a) => a.startsWith('--workloads='))?.slice('--workloads='.length).split(',');
const WORKLOADS = ALL_WORKLOADS.filter((w) => !ONLY_WORKLOADS || ONLY_WORKLOADS.includes(w.name));
const NO_IDLE = process.argv.includes('--no-idle');
const IDLE_DOCS = QUICK ? 100 : 1_000;
/** Documents opened and closed before the RSS baseline, so one-time costs are not counted per document. */
const WARMUP_DOCS = 20;
const CONNECT_CONCURRENCY = 50;
const SYNC_TIMEOUT_MS = 30_000;
/** After the last edit, how long deliveries may still arrive before the rest count as lost. */
const DRAIN_MS = 10_000;
const SETTLE_MS = 5_000;
/**
 * Before the baseline: a fresh process's V8 keeps the heap it committed while starting (ours: the
 * TypeScript loader, migrations) and gives it back only after some quiet seconds (heapTotal 59 ->
 * 28 MiB about 8 s after start, in steps), which a baseline read earlier counts against nothing.
 */
const BASELINE_QUIET_MS = 20_000;
/** The whole run is killed past this, children included: a round takes about nine minutes. */
const RUN_DEADLINE_MS = (6 + 10 * ROUNDS) * 60_000;
const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };

type Kind = 'ours' | 'yws' | 'hocuspocus';
const LABEL: Record<Kind, string> = {
  ours: 'ours (hub + SQLite log)',
  yws: '@y/websocket-server 0.1.1',
  hocuspocus: 'Hocuspocus 3.4',
};
const ALL_KINDS: Kind[] = ['ours', 'yws', 'hocuspocus'];
const KINDS = ALL_KINDS.filter((k) => !ONLY || ONLY.includes(k));
const PARTIAL = QUICK || IDLE_ONLY || NO_IDLE || HEAP_SNAPSHOTS || KINDS.length < ALL_KINDS.length || WORKLOADS.length < ALL_WORKLOADS.length;

const root = path.resolve(import.meta.dirname, '..');
const workDir = mkdtempSync(path.join(tmpdir(), 'lms-bench-collab-'));
const dataDir = path.join(workDir, 'data');
const profileDir = path.join(workDir, 'profile');
const memoryDir = path.join(workDir, 'memory');
const children = new Set<ChildProcess>();

// Every WebsocketProvider registers a process 'exit' listener; a thousand of them are expected.
process.setMaxListeners(0);

// ---------------------------------------------------------------- server processes

interface ServerProcess {
  kind: Kind;
  child: ChildProcess;
  pid: number;
  port: number;
}

/**
 * node itself with tsx as a loader (not the tsx CLI, which adds a process), so the pid is the
 * server's; every server also gets the memory probe (bench/helpers/memory-probe.ts).
 */
function spawnNode(nodeArgs: string[], args: string[], env: Record<string, string>, stdout: 'pipe' | number): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, '--expose-gc', '--import', 'tsx', '--import', './bench/helpers/memory-probe.ts', ...args], {
    cwd: root,
    env: { ...process.env, BENCH_MEMORY_DIR: memoryDir, ...env },
    stdio: ['ignore', stdout, stdout === 'pipe' ? 'inherit' : stdout],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startOurs(label: string, opts: { profile?: boolean } = {}): Promise<ServerProcess> {
  const logFile = path.join(workDir, `ours-${label}.log`);
  const fd = openSync(logFile, 'a');
  const nodeArgs = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // BENCH_OURS_NODE_ARGS (e.g. "--trace-gc") adds node flags to our server, for diagnosis.
  nodeArgs.push(...(process.env.BENCH_OURS_NODE_ARGS?.split(' ').filter(Boolean) ?? []));
  const child = spawnNode(
    nodeArgs,
    ['src/server.ts', '--port', '0', '--data-dir', dataDir],
    { HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    fd,
  );
  closeSync(fd);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const match = /"port":(\d+)[^\n]*listening/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { kind: 'ours', child, pid: child.pid!, port: Number(match[1]) };
    await sleep(50);
  }
  throw new Error(`our server did not start; its log:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
}

function startPeer(kind: 'yws' | 'hocuspocus'): Promise<ServerProcess> {
  const child = spawnNode([], ['bench/collab-peer-server.ts', kind], {}, 'pipe');
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${kind} did not start`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      buffered += String(chunk);
      const match = /"port":(\d+)/.exec(buffered);
      if (match) {
        clearTimeout(timer);
        resolve({ kind, child, pid: child.pid!, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Readings (a second apart) that must agree before a memory figure counts as settled. */
const SETTLED_READINGS = 11;

interface MemoryReading {
  rssKiB: number;
  /** The anonymous part of RSS (RssAnon): what the process allocated, without mapped files. */
  anonKiB: number;
  heapUsedKiB: number;
  /** Memory outside the V8 heap that V8 knows of (Buffers, ArrayBuffers). */
  externalKiB: number;
  snapshot?: string;
}

/** Full GC in the server (its memory probe), then its VmRSS and V8 heap figures. */
async function collectAndMeasure(pid: number, opts: { snapshot?: boolean } = {}): Promise<MemoryReading> {
  const file = path.join(memoryDir, `${pid}.json`);
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { sequence: number }).sequence : 0;
  if (opts.snapshot) writeFileSync(path.join(memoryDir, `${pid}.snapshot-next`), '');
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (existsSync(file)) {
      const usage = JSON.parse(readFileSync(file, 'utf8')) as {
        sequence: number;
        collected: boolean;
        heapUsed: number;
        external: number;
        snapshot: string | null;
      };
      if (usage.sequence > before) {
        if (!usage.collected) throw new Error('the memory probe could not run the garbage collector');
        // Freed pages go back to the system shortly after a collection.
        await sleep(500);
        const reading = { ...residentKiB(pid), heapUsedKiB: usage.heapUsed / 1024, externalKiB: usage.external / 1024 };
        return usage.snapshot ? { ...reading, snapshot: usage.snapshot } : reading;
      }
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} did not answer the memory probe`);
    await sleep(50);
  }
}

/**
 * Readings a second apart until anonymous RSS has stayed within 512 KiB for ten seconds (at most a
 * minute): a process keeps returning memory to the system for a while after start-up or a burst
 * of work. Ten seconds, because V8 gives back unused heap pages in steps ~6 s apart (ours dropped
 * 100 → 80 → 63 MiB over its first 15 s, each step after seconds of no change).
 */
async function settledReading(pid: number): Promise<MemoryReading> {
  const window: MemoryReading[] = [await collectAndMeasure(pid)];
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await sleep(1_000);
    window.push(await collectAndMeasure(pid));
    if (window.length > SETTLED_READINGS) window.shift();
    const anon = window.map((r) => r.anonKiB);
    if (window.length === SETTLED_READINGS && Math.max(...anon) - Math.min(...anon) < 512) break;
  }
  return window.at(-1)!;
}

/**
 * VmRSS, and its anonymous part RssAnon: what the process allocated. The rest of RSS is mapped
 * files (the node binary, shared libraries, SQLite's WAL index): shared with the page cache,
 * reclaimable, and not what an open document costs.
 */
function residentKiB(pid: number): { rssKiB: number; anonKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status);
    if (!match) throw new Error(`no ${name} for ${pid}`);
    return Number(match[1]);
  };
  return { rssKiB: field('VmRSS'), anonKiB: field('RssAnon') };
}

// ---------------------------------------------------------------- our REST API

async function api<T>(base: string, method: string, url: string, token?: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function inBatches<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** Another engineer's documents routes may still be landing: wait (bounded) until creation works. */
async function waitForDocumentsApi(base: string, token: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${base}/api/documents`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ title: 'bench probe' }),
    });
    if (res.status === 201) return;
    if (Date.now() > deadline) throw new Error(`POST /api/documents answers ${res.status}: ${await res.text()}`);
    await sleep(2_000);
  }
}

// ---------------------------------------------------------------- clients

interface Client {
  doc: Y.Doc;
  text: Y.Text;
  synced: Promise<void>;
  /** Connections closed by the server or the network while the client wanted to be connected. */
  unexpectedCloses: number;
  destroy(): void;
}

interface Target {
  kind: Kind;
  server: ServerProcess;
  /** Names of `n` documents that exist (ours: created through REST) and nobody has opened. */
  takeDocuments(n: number): string[];
  connect(documentName: string): Client;
}

function withTimeout(promise: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

function yWebsocketClient(serverUrl: string, room: string, params: Record<string, string>): Client {
  const doc = new Y.Doc();
  // disableBc: without it, providers of one room in one process talk through lib0's
  // BroadcastChannel and the server would not be measured at all.
  const provider = new WebsocketProvider(serverUrl, room, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    disableBc: true,
    params,
  });
  let destroyed = false;
  const client: Client = {
    doc,
    text: doc.getText('content'),
    unexpectedCloses: 0,
    synced: new Promise((resolve) => {
      const onSync = (synced: boolean) => {
        if (!synced) return;
        provider.off('sync', onSync);
        resolve();
      };
      provider.on('sync', onSync);
    }),
    destroy() {
      destroyed = true;
      provider.destroy();
      doc.destroy();
    },
  };
  provider.on('connection-close', () => {
    if (!destroyed) client.unexpectedCloses += 1;
  });
  return client;
}

function hocuspocusClient(url: string, name: string): Client {
  const doc = new Y.Doc();
  let destroyed = false;
  let resolveSynced!: () => void;
  // One socket per client, as for the y-websocket clients: an explicit socket (v3 would otherwise
  // build the same thing, but its typings only take the polyfill here) attached to one document.
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name, document: doc, onSynced: () => resolveSynced() });
  provider.attach();
  const client: Client = {
    doc,
    text: doc.getText('content'),
    unexpectedCloses: 0,
    synced: new Promise((resolve) => (resolveSynced = resolve)),
    destroy() {
      destroyed = true;
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
  socket.on('close', () => {
    if (!destroyed) client.unexpectedCloses += 1;
  });
  return client;
}

// ---------------------------------------------------------------- fan-out measurement

const TOKEN = /\[(\d+)\]/g;

class FanOut {
  readonly sentAt: number[] = [];
  readonly receivedBy: number[] = [];
  readonly latencies: number[] = [];
  firstSend = Infinity;
  lastReceive = 0;

  send(): number {
    const id = this.sentAt.length;
    const now = performance.now();
    this.sentAt.push(now);
    this.receivedBy.push(0);
    if (now < this.firstSend) this.firstSend = now;
    return id;
  }

  receive(id: number, now: number): void {
    const sent = this.sentAt[id];
    if (sent === undefined) return;
    this.receivedBy[id]! += 1;
    this.latencies.push(now - sent);
    if (now > this.lastReceive) this.lastReceive = now;
  }

  /** Times every token that reaches `client` from elsewhere. */
  watch(client: Client): void {
    client.text.observe((event) => {
      if (event.transaction.local) return;
      const now = performance.now();
      for (const op of event.delta) {
        if (typeof op.insert !== 'string') continue;
        TOKEN.lastIndex = 0;
        for (let m = TOKEN.exec(op.insert); m; m = TOKEN.exec(op.insert)) this.receive(Number(m[1]), now);
      }
    });
  }
}

async function connectAll(target: Target, names: string[], perDoc: number): Promise<Client[][]> {
  return inBatches(names, Math.max(1, Math.floor(CONNECT_CONCURRENCY / perDoc)), async (name) => {
    const clients = Array.from({ length: perDoc }, () => target.connect(name));
    await withTimeout(Promise.all(clients.map((c) => c.synced)).then(() => undefined), SYNC_TIMEOUT_MS, `sync of ${name}`);
    return clients;
  });
}

interface WorkloadResult {
  kind: Kind;
  workload: Workload;
  /** 0-based round of the run. */
  round: number;
  edits: number;
  expected: number;
  observed: number;
  lost: number;
  p50: number;
  p99: number;
  max: number;
  deliveriesPerSecond: number;
  editsPerSecond: number;
  converged: number;
  complete: number;
  /** Ours only: documents whose stored text equals the clients' (live), and after unloading. */
  serverEqualLive?: number;
  serverEqualReloaded?: number;
  /** Ours only: documents whose change history holds exactly one row per edit. */
  logComplete?: number;
  unexpectedCloses: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  /** Garbage-collection pauses in this (the clients') process during the workload. */
  clientGcMs: number;
  clientGcMaxMs: number;
  clientCpuPct: number;
  serverCpuPct: number;
  /** Server CPU time per edit (all its fan-out included): unlike latency, barely moved by other load. */
  serverCpuMsPerEdit: number;
}

async function runWorkload(target: Target, w: Workload, round: number, base?: { url: string; token: string }): Promise<WorkloadResult> {
  const names = target.takeDocuments(w.docs);
  const groups = await connectAll(target, names, w.clientsPerDoc);
  const fanOut = new FanOut();
  for (const group of groups) for (const client of group) fanOut.watch(client);
  // Awareness from the joins settles before the clock starts.
  await sleep(1_000);

  const editsPerClient = w.editsPerSecond * w.seconds;
  const period = 1000 / w.editsPerSecond;
  const editsByDoc = new Array<number>(groups.length).fill(0);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  const gc = { total: 0, max: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.total += entry.duration;
      gc.max = Math.max(gc.max, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = cpuMs(target.server.pid);
  const wallStart = performance.now();
  lag.enable();

  // Each client edits on its own fixed schedule (random phase), corrected for timer drift.
  const t0 = performance.now() + 50;
  await Promise.all(
    groups.flatMap((group, docIndex) =>
      group.map(
        (client) =>
          new Promise<void>((done) => {
            const offset = Math.random() * period;
            let k = 0;
            const tick = () => {
              const id = fanOut.send();
              editsByDoc[docIndex]! += 1;
              // Appending never splits another client's token, so each arrives whole in one delta.
              client.text.insert(client.text.length, `[${id}]`);
              k += 1;
              if (k >= editsPerClient) return done();
              setTimeout(tick, Math.max(0, t0 + offset + k * period - performance.now()));
            };
            setTimeout(tick, Math.max(0, t0 + offset - performance.now()));
          }),
      ),
    ),
  );
  const editsEnd = performance.now();
  const edits = fanOut.sentAt.length;
  const expected = edits * (w.clientsPerDoc - 1);
  while (fanOut.latencies.length < expected && performance.now() - editsEnd < DRAIN_MS) await sleep(20);
  lag.disable();
  gcObserver.disconnect();
  const wall = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuBefore);
  const serverCpu = cpuMs(target.server.pid) - serverCpuBefore;

  // Convergence: every client of a document holds the same text, with every edit made to it.
  let converged = 0;
  let complete = 0;
  const texts = groups.map((group) => group.map((c) => c.text.toString()));
  texts.forEach((group, i) => {
    if (group.every((t) => t === group[0])) converged += 1;
    if (group.every((t) => (t.match(TOKEN) ?? []).length === editsByDoc[i])) complete += 1;
  });

  let serverEqualLive: number | undefined;
  let logComplete: number | undefined;
  if (target.kind === 'ours' && base) {
    serverEqualLive = 0;
    logComplete = 0;
    const checks = await inBatches(names, 8, async (id, i) => {
      const doc = await api<{ content: string }>(base.url, 'GET', `/api/documents/${id}?include=content`, base.token);
      const changes = await api<{ pagination: { total: number } }>(base.url, 'GET', `/api/documents/${id}/changes?per_page=1`, base.token);
      return { equal: doc.content === texts[i]![0], logged: changes.pagination.total === editsByDoc[i] };
    });
    for (const c of checks) {
      if (c.equal) serverEqualLive += 1;
      if (c.logged) logComplete += 1;
    }
  }

  const unexpectedCloses = groups.flat().reduce((n, c) => n + c.unexpectedCloses, 0);
  for (const client of groups.flat()) client.destroy();

  let serverEqualReloaded: number | undefined;
  if (target.kind === 'ours' && base) {
    // Once the last client leaves the document is compacted and unloaded: read it back from SQLite.
    await sleep(1_000);
    const reread = await inBatches(names, 8, (id) =>
      api<{ content: string }>(base.url, 'GET', `/api/documents/${id}?include=content`, base.token),
    );
    serverEqualReloaded = reread.filter((doc, i) => doc.content === texts[i]![0]).length;
  }

  const sorted = Float64Array.from(fanOut.latencies).sort();
  const activeSeconds = (Math.max(fanOut.lastReceive, editsEnd) - fanOut.firstSend) / 1000;
  return {
    kind: target.kind,
    workload: w,
    round,
    edits,
    expected,
    observed: fanOut.latencies.length,
    lost: expected - fanOut.latencies.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    deliveriesPerSecond: fanOut.latencies.length / activeSeconds,
    editsPerSecond: edits / ((editsEnd - fanOut.firstSend) / 1000),
    converged,
    complete,
    serverEqualLive,
    serverEqualReloaded,
    logComplete,
    unexpectedCloses,
    lagP50: lag.percentile(50) / 1e6,
    lagP99: lag.percentile(99) / 1e6,
    lagMax: lag.max / 1e6,
    clientGcMs: gc.total,
    clientGcMaxMs: gc.max,
    clientCpuPct: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    serverCpuPct: (serverCpu / wall) * 100,
    serverCpuMsPerEdit: serverCpu / edits,
  };
}

// ---------------------------------------------------------------- idle RSS

interface RssResult {
  kind: Kind;
  /** 0-based round of the run. */
  round: number;
  docs: number;
  baseline: MemoryReading;
  loaded: MemoryReading;
  perDocKiB: number;
  anonPerDocKiB: number;
  heapPerDocKiB: number;
  connectSeconds: number;
  /** With --heap-snapshots: what the V8 heap grew by per document, by constructor. */
  heapGrowth?: string[];
}

async function measureIdleRss(target: Target, round: number): Promise<RssResult> {
  const pid = target.server.pid;
  const warm = await connectAll(target, target.takeDocuments(WARMUP_DOCS), 1);
  for (const c of warm.flat()) c.destroy();
  await sleep(BASELINE_QUIET_MS);
  const baseline = await settledReading(pid);
  const baselineSnapshot = HEAP_SNAPSHOTS ? (await collectAndMeasure(pid, { snapshot: true })).snapshot : undefined;

  const started = performance.now();
  const clients = (await connectAll(target, target.takeDocuments(IDLE_DOCS), 1)).flat();
  const connectSeconds = (performance.now() - started) / 1000;
  await sleep(SETTLE_MS);
  const loaded = await settledReading(pid);
  // Snapshots after the readings: writing one costs memory of its own.
  let heapGrowth: string[] | undefined;
  if (HEAP_SNAPSHOTS) {
    const loadedSnapshot = (await collectAndMeasure(pid, { snapshot: true })).snapshot!;
    // Kept past the run (the work directory is removed) for a closer look in DevTools.
    const kept = path.join(tmpdir(), `lms-bench-collab-${target.kind}-idle.heapsnapshot`);
    copyFileSync(loadedSnapshot, kept);
    heapGrowth = [...heapDiff(loadedSnapshot, baselineSnapshot!, IDLE_DOCS), `snapshot with the documents open kept at ${kept}`];
  }
  const unexpected = clients.reduce((n, c) => n + c.unexpectedCloses, 0);
  for (const c of clients) c.destroy();
  if (unexpected > 0) throw new Error(`${target.kind}: ${unexpected} idle connections closed unexpectedly`);
  return {
    heapGrowth,
    kind: target.kind,
    round,
    docs: IDLE_DOCS,
    baseline,
    loaded,
    perDocKiB: (loaded.rssKiB - baseline.rssKiB) / IDLE_DOCS,
    anonPerDocKiB: (loaded.anonKiB - baseline.anonKiB) / IDLE_DOCS,
    heapPerDocKiB: (loaded.heapUsedKiB + loaded.externalKiB - baseline.heapUsedKiB - baseline.externalKiB) / IDLE_DOCS,
    connectSeconds,
  };
}

/** Self size of a heap snapshot's nodes by type and constructor (strings, code and numbers by type only). */
function heapByConstructor(file: string): Map<string, { bytes: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const anonymous = new Set(['string', 'concatenated string', 'sliced string', 'code', 'number', 'bigint', 'symbol']);
  const totals = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const key = anonymous.has(type) ? `(${type})` : `${type} ${snap.strings[snap.nodes[i + nameAt]!]}`;
    const entry = totals.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[i + sizeAt]!;
    entry.count += 1;
    totals.set(key, entry);
  }
  return totals;
}

function heapDiff(loadedFile: string, baselineFile: string, docs: number): string[] {
  const before = heapByConstructor(baselineFile);
  const after = heapByConstructor(loadedFile);
  const grown = [...after.entries()]
    .map(([key, a]) => {
      const b = before.get(key) ?? { bytes: 0, count: 0 };
      return { key, bytes: (a.bytes - b.bytes) / docs, count: (a.count - b.count) / docs };
    })
    .sort((x, y) => y.bytes - x.bytes);
  const total = grown.reduce((n, g) => n + g.bytes, 0);
  return [
    `heap growth per document: ${(total / 1024).toFixed(1)} KiB (self sizes; strings, code and numbers grouped by type)`,
    ...grown.slice(0, 25).map((g) => `  ${g.bytes.toFixed(0).padStart(6)} B  ${g.count.toFixed(1).padStart(5)} ×  ${g.key.slice(0, 90)}`),
  ];
}

// ---------------------------------------------------------------- targets

function peerTarget(server: ServerProcess, prefix: string): Target {
  let next = 0;
  return {
    kind: server.kind,
    server,
    takeDocuments: (n) => Array.from({ length: n }, () => `${prefix}-${next++}`),
    connect:
      server.kind === 'yws'
        ? (name) => yWebsocketClient(`ws://127.0.0.1:${server.port}`, name, {})
        : (name) => hocuspocusClient(`ws://127.0.0.1:${server.port}`, name),
  };
}

/** A fresh access token: they live 15 minutes, and a full run takes longer. */
async function signIn(server: ServerProcess): Promise<string> {
  return (await api<{ access_token: string }>(`http://127.0.0.1:${server.port}`, 'POST', '/api/auth/token', undefined, ADMIN)).access_token;
}

/** Our server, its clients signing in with whatever `token()` holds when they connect. */
function oursTarget(server: ServerProcess, token: () => string, pool: string[]): Target {
  return {
    kind: 'ours',
    server,
    takeDocuments: (n) => {
      if (pool.length < n) throw new Error('not enough pre-created documents');
      return pool.splice(0, n);
    },
    connect: (id) => yWebsocketClient(`ws://127.0.0.1:${server.port}/collab`, id, { token: token() }),
  };
}

// ---------------------------------------------------------------- profile summary

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** The hottest functions by self time, and self time per package/file, of a .cpuprofile. */
function summariseProfile(file: string): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
  const total = profile.samples.length;
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const short = url.replace(/^file:\/\//, '').replace(`${root}/`, '');
    const key = `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(short)?.[1];
    const area = pkg ?? (short.startsWith('node:') ? 'node internals' : short ? short.split('/').slice(0, 2).join('/') : functionName || '(native)');
    byArea.set(area, (byArea.get(area) ?? 0) + hits);
  }
  const pct = (n: number) => `${((n / total) * 100).toFixed(1)}%`;
  const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  return [
    `samples: ${total} over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s`,
    'self time by package / file:',
    ...top(byArea, 12).map(([k, v]) => `  ${pct(v).padStart(6)}  ${k}`),
    'hottest functions (self time):',
    ...top(byFunction, 25).map(([k, v]) => `  ${pct(v).padStart(6)}  ${k}`),
  ];
}

// ---------------------------------------------------------------- report

const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

function workloadLine(w: Workload): string {
  return `${w.docs} documents × ${w.clientsPerDoc} clients, ${w.editsPerSecond} edits/s each for ${w.seconds} s`;
}

/**
 * One server on one workload over every round: p50 and p99 are the medians of the rounds', max and
 * the client loop delay the largest, the rates and CPU share means, and the counts sums.
 */
interface WorkloadSummary
  extends Pick<
    WorkloadResult,
    | 'kind'
    | 'workload'
    | 'edits'
    | 'expected'
    | 'observed'
    | 'lost'
    | 'p50'
    | 'p99'
    | 'max'
    | 'deliveriesPerSecond'
    | 'converged'
    | 'complete'
    | 'serverEqualLive'
    | 'serverEqualReloaded'
    | 'logComplete'
    | 'serverCpuPct'
    | 'serverCpuMsPerEdit'
    | 'lagP99'
    | 'lagMax'
  > {
  rounds: WorkloadResult[];
  /** How many documents the rounds held in all (the workload's documents × rounds). */
  docs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function summariseWorkloads(results: WorkloadResult[]): WorkloadSummary[] {
  const summaries: WorkloadSummary[] = [];
  for (const w of WORKLOADS) {
    for (const kind of KINDS) {
      const rounds = results.filter((r) => r.kind === kind && r.workload === w).sort((a, b) => a.round - b.round);
      if (rounds.length === 0) continue;
      const sum = (f: (r: WorkloadResult) => number) => rounds.reduce((n, r) => n + f(r), 0);
      const optionalSum = (f: (r: WorkloadResult) => number | undefined) =>
        rounds.every((r) => f(r) !== undefined) ? sum((r) => f(r)!) : undefined;
      const edits = sum((r) => r.edits);
      summaries.push({
        kind,
        workload: w,
        rounds,
        edits,
        expected: sum((r) => r.expected),
        observed: sum((r) => r.observed),
        lost: sum((r) => r.lost),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        max: Math.max(...rounds.map((r) => r.max)),
        deliveriesPerSecond: sum((r) => r.deliveriesPerSecond) / rounds.length,
        converged: sum((r) => r.converged),
        complete: sum((r) => r.complete),
        docs: w.docs * rounds.length,
        serverEqualLive: optionalSum((r) => r.serverEqualLive),
        serverEqualReloaded: optionalSum((r) => r.serverEqualReloaded),
        logComplete: optionalSum((r) => r.logComplete),
        serverCpuPct: sum((r) => r.serverCpuPct) / rounds.length,
        serverCpuMsPerEdit: sum((r) => r.serverCpuMsPerEdit * r.edits) / edits,
        lagP99: Math.max(...rounds.map((r) => r.lagP99)),
        lagMax: Math.max(...rounds.map((r) => r.lagMax)),
      });
    }
  }
  return summaries;
}

function workloadTable(summaries: WorkloadSummary[]): string[] {
  const lines = [
    '| Server | Workload | edits | deliveries (expected) | lost | p50 ms | p99 ms | p99 ms by round | max ms | deliveries/s | converged | server CPU (ms per edit) | client loop delay p99 / max ms |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|',
  ];
  for (const r of summaries) {
    const docs = r.docs;
    let converged = `${r.converged}/${docs} identical, ${r.complete}/${docs} complete`;
    if (r.serverEqualLive !== undefined) {
      converged += `; server copy ${r.serverEqualLive}/${docs} live, ${r.serverEqualReloaded}/${docs} reloaded; log ${r.logComplete}/${docs}`;
    }
    lines.push(
      `| ${LABEL[r.kind]} | ${r.workload.name} | ${r.edits} | ${r.observed} (${r.expected}) | ${r.lost} | ${fmt(r.p50)} | ${fmt(r.p99)} | ` +
        `${r.rounds.map((x) => fmt(x.p99)).join(' / ')} | ${fmt(r.max)} | ${Math.round(r.deliveriesPerSecond)} | ${converged} | ` +
        `${Math.round(r.serverCpuPct)}% (${fmt(r.serverCpuMsPerEdit, 2)}) | ${fmt(r.lagP99)} / ${fmt(r.lagMax)} |`,
    );
  }
  return lines;
}

/** One server's idle readings over every round; the figures are the medians of the valid rounds'. */
interface IdleSummary extends Pick<RssResult, 'kind' | 'docs' | 'anonPerDocKiB' | 'perDocKiB' | 'heapPerDocKiB' | 'connectSeconds'> {
  rounds: RssResult[];
  /** The round whose anonymous RSS per document is the median (the lower middle for an even count). */
  middle: RssResult;
}

function summariseIdle(results: RssResult[]): IdleSummary[] {
  return KINDS.flatMap((kind) => {
    const rounds = results.filter((r) => r.kind === kind).sort((a, b) => a.round - b.round);
    // A baseline above the loaded reading (memory freed meanwhile) says nothing about documents:
    // such a round is listed but left out of the medians.
    const readings = rounds.filter((r) => r.anonPerDocKiB > 0);
    if (readings.length === 0) return [];
    const byAnon = [...readings].sort((a, b) => a.anonPerDocKiB - b.anonPerDocKiB);
    return [
      {
        kind,
        docs: rounds[0]!.docs,
        rounds,
        middle: byAnon[Math.floor((byAnon.length - 1) / 2)]!,
        anonPerDocKiB: median(readings.map((r) => r.anonPerDocKiB)),
        perDocKiB: median(readings.map((r) => r.perDocKiB)),
        heapPerDocKiB: median(readings.map((r) => r.heapPerDocKiB)),
        connectSeconds: median(readings.map((r) => r.connectSeconds)),
      },
    ];
  });
}

function rssTable(summaries: IdleSummary[]): string[] {
  const mib = (kib: number) => (kib / 1024).toFixed(1);
  return [
    '| Server | idle documents | RSS before → with clients (MiB) | anonymous RSS before → with clients (MiB) | anonymous RSS per document (KiB) | by round | RSS per document (KiB) | V8 heap + external per document (KiB) | connect + sync all (s) |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|',
    ...summaries.map(
      (r) =>
        `| ${LABEL[r.kind]} | ${r.docs} | ${mib(r.middle.baseline.rssKiB)} → ${mib(r.middle.loaded.rssKiB)} | ` +
          `${mib(r.middle.baseline.anonKiB)} → ${mib(r.middle.loaded.anonKiB)} | ${fmt(r.anonPerDocKiB)} | ` +
          `${r.rounds.map((x) => (x.anonPerDocKiB > 0 ? fmt(x.anonPerDocKiB) : `no reading (${fmt(x.anonPerDocKiB)})`)).join(' / ')} | ${fmt(r.perDocKiB)} | ${fmt(r.heapPerDocKiB)} | ${fmt(r.connectSeconds)} |`,
    ),
  ];
}

interface Verdict {
  ok: boolean;
  lines: string[];
}

function judge(workloads: WorkloadSummary[], rss: IdleSummary[]): Verdict {
  const lines: string[] = [];
  let ok = true;
  for (const w of WORKLOADS) {
    const ours = workloads.find((r) => r.kind === 'ours' && r.workload === w)!;
    const peers = workloads.filter((r) => r.kind !== 'ours' && r.workload === w);
    const best = peers.reduce((a, b) => (a.p99 <= b.p99 ? a : b));
    const pass = ours.p99 <= best.p99 && ours.lost === 0 && ours.converged === ours.docs;
    ok &&= pass;
    lines.push(
      `${pass ? 'PASS' : 'MISS'} workload ${w.name}: our median p99 ${fmt(ours.p99)} ms vs best peer (${LABEL[best.kind]}) ${fmt(best.p99)} ms; ` +
        `lost ${ours.lost}, converged ${ours.converged}/${ours.docs}`,
    );
  }
  // Summaries hold only valid readings (see summariseIdle): a server without one leaves no verdict.
  const ours = rss.find((r) => r.kind === 'ours');
  const peers = rss.filter((r) => r.kind !== 'ours');
  if (!ours || peers.length < ALL_KINDS.length - 1) {
    lines.push('NO READING idle memory: a server had no round whose loaded reading was above its baseline');
    return { ok: false, lines };
  }
  const best = peers.reduce((a, b) => (a.anonPerDocKiB <= b.anonPerDocKiB ? a : b));
  const pass = ours.anonPerDocKiB <= best.anonPerDocKiB;
  ok &&= pass;
  lines.push(
    `${pass ? 'PASS' : 'MISS'} idle memory: ours ${fmt(ours.anonPerDocKiB)} KiB of anonymous RSS per document (median) vs best peer ` +
      `(${LABEL[best.kind]}) ${fmt(best.anonPerDocKiB)} KiB (VmRSS: ours ${fmt(ours.perDocKiB)}, ${LABEL[best.kind]} ${fmt(best.perDocKiB)} KiB)`,
  );
  return { ok, lines };
}

const SECTION = '## Live editing (issue 7)';
const GENERATED_END = '<!-- end of bench/collab.ts figures -->';

/** Replaces the generated part of this benchmark's section; anything written below the marker stays. */
function writeResults(body: string[]): void {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const generated = [SECTION, '', ...body, '', GENERATED_END].join('\n');
  const start = current.indexOf(SECTION);
  let next: string;
  if (start === -1) {
    next = `${current.trimEnd()}\n\n${generated}\n`;
  } else {
    const afterHeading = start + SECTION.length;
    const nextSection = current.indexOf('\n## ', afterHeading);
    const sectionEnd = nextSection === -1 ? current.length : nextSection + 1;
    const marker = current.indexOf(GENERATED_END, afterHeading);
    const kept = marker !== -1 && marker < sectionEnd ? current.slice(marker + GENERATED_END.length, sectionEnd) : '\n';
    next = `${current.slice(0, start)}${generated}${kept.startsWith('\n') ? kept : `\n${kept}`}${current.slice(sectionEnd)}`;
  }
  writeFileSync(file, next);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}`;
  const loadBefore = loadavg();
  console.log(`Live-editing benchmark: ${machine}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  for (const w of WORKLOADS) console.log(`  workload ${w.name}: ${workloadLine(w)}`);
  console.log(`  ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of the workloads, the servers' order rotating`);
  if (!NO_IDLE) console.log(`  idle RSS: ${IDLE_DOCS} documents × 1 client (after ${WARMUP_DOCS} warm-up documents)`);
  console.log('');
  mkdirSync(profileDir, { recursive: true });
  mkdirSync(memoryDir, { recursive: true });

  // Our server needs documents that exist: create them all first, then reuse the token
  // (the signing key is kept in the database, so it stays valid across restarts).
  const servers = await Promise.all(KINDS.map((kind) => (kind === 'ours' ? startOurs('workloads', { profile: PROFILE }) : startPeer(kind))));
  const ours = servers.find((s) => s.kind === 'ours');
  let token = '';
  let workloadPool: string[] = [];
  let idlePool: string[] = [];
  if (ours) {
    const base = `http://127.0.0.1:${ours.port}`;
    token = await signIn(ours);
    await waitForDocumentsApi(base, token);
    const perRound = WORKLOADS.reduce((n, w) => n + w.docs, 0);
    const needed = ROUNDS * (perRound + WARMUP_DOCS + IDLE_DOCS);
    const created = performance.now();
    const ids = await inBatches(Array.from({ length: needed }, (_, i) => i), 8, async (i) =>
      (await api<{ id: string }>(base, 'POST', '/api/documents', token, { title: `bench ${i}` })).id,
    );
    console.log(`Created ${needed} documents through the API in ${((performance.now() - created) / 1000).toFixed(1)} s`);
    // The creation's own writes (WAL checkpoints, search-index rows) settle before any workload starts.
    await sleep(5_000);
    // Fresh documents for every workload of every round, as the peers get fresh rooms.
    workloadPool = ids.slice(0, ROUNDS * perRound);
    idlePool = ids.slice(workloadPool.length);
  }

  const targets = servers.map((server) => (server.kind === 'ours' ? oursTarget(server, () => token, workloadPool) : peerTarget(server, 'workload')));
  const workloadResults: WorkloadResult[] = [];
  for (let round = 0; round < (IDLE_ONLY ? 0 : ROUNDS); round++) {
    // Round r starts with the r-th server: over three rounds each server runs first, second and last once.
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const w of WORKLOADS) {
      for (const target of order) {
        if (target.kind === 'ours') token = await signIn(target.server);
        const r = await runWorkload(target, w, round, target.kind === 'ours' ? { url: `http://127.0.0.1:${target.server.port}`, token } : undefined);
        workloadResults.push(r);
        console.log(
          `  round ${round + 1} ${w.name} ${LABEL[r.kind]}: p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, ` +
            `${Math.round(r.deliveriesPerSecond)} deliveries/s, lost ${r.lost}, converged ${r.converged}/${w.docs}, ` +
            `server CPU ${Math.round(r.serverCpuPct)}% (${fmt(r.serverCpuMsPerEdit, 2)} ms/edit), client CPU ${Math.round(r.clientCpuPct)}%, ` +
            `client loop delay p50/p99/max ${fmt(r.lagP50)}/${fmt(r.lagP99)}/${fmt(r.lagMax)} ms, ` +
            `client GC ${Math.round(r.clientGcMs)} ms (longest ${fmt(r.clientGcMaxMs)} ms), unexpected closes ${r.unexpectedCloses}`,
        );
        await sleep(1_000);
      }
    }
  }
  await Promise.all(servers.map((s) => stopChild(s.child)));
  const summaries = summariseWorkloads(workloadResults);

  let profileLines: string[] = [];
  if (PROFILE) {
    // One profile per thread (the checkpoint worker has its own): the main thread's is the largest.
    const file = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort((a, b) => statSync(path.join(profileDir, b)).size - statSync(path.join(profileDir, a)).size)[0];
    if (file) {
      // Kept past the run (the work directory is removed) for a closer look in DevTools.
      const kept = path.join(tmpdir(), 'lms-bench-collab-ours.cpuprofile');
      copyFileSync(path.join(profileDir, file), kept);
      profileLines = [...summariseProfile(kept), `profile kept at ${kept}`];
    } else profileLines = ['(no profile was written)'];
  }

  // Idle RSS: a fresh process per server and round, one after another, so none shares the
  // machine's memory pressure or the heap left by the workloads; rounds as for the workloads.
  const rssResults: RssResult[] = [];
  for (let round = 0; round < (NO_IDLE ? 0 : ROUNDS); round++) {
    for (const kind of KINDS.map((_, i) => KINDS[(i + round) % KINDS.length]!)) {
      const server = kind === 'ours' ? await startOurs(`idle-${round + 1}`) : await startPeer(kind);
      try {
        if (kind === 'ours') token = await signIn(server);
        const target = kind === 'ours' ? oursTarget(server, () => token, idlePool) : peerTarget(server, `idle-${round + 1}`);
        const r = await measureIdleRss(target, round);
        rssResults.push(r);
        console.log(
          `  round ${round + 1} idle ${LABEL[kind]}: RSS ${(r.baseline.rssKiB / 1024).toFixed(1)} → ${(r.loaded.rssKiB / 1024).toFixed(1)} MiB ` +
            `(anonymous ${(r.baseline.anonKiB / 1024).toFixed(1)} → ${(r.loaded.anonKiB / 1024).toFixed(1)}), ` +
            `${fmt(r.anonPerDocKiB)} KiB anonymous / ${fmt(r.perDocKiB)} KiB RSS per open document (V8 heap + external ${fmt(r.heapPerDocKiB)} KiB); ` +
            `connect + sync ${fmt(r.connectSeconds)} s`,
        );
        for (const line of r.heapGrowth ?? []) console.log(`    ${line}`);
      } finally {
        await stopChild(server.child);
      }
    }
  }
  const idleSummaries = summariseIdle(rssResults);

  const loadAfter = loadavg();
  const judgeable = !IDLE_ONLY && !NO_IDLE && KINDS.length === ALL_KINDS.length && WORKLOADS.length === ALL_WORKLOADS.length;
  const verdict = !judgeable ? { ok: true, lines: ['(partial run: no verdict)'] } : judge(summaries, idleSummaries);
  const lagWorst = Math.max(...workloadResults.map((r) => r.lagP99));
  const body = [
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npx tsx bench/collab.ts\`. Machine: ${machine} ` +
      `(2 cores shared by the servers, the clients and whatever else ran; load average ${loadBefore[0]!.toFixed(2)} before, ` +
      `${loadAfter[0]!.toFixed(2)} after).`,
    '',
    'Each server in its own child process on 127.0.0.1: ours is the real server (`src/server.ts`, every update appended to ' +
      'the SQLite log before it is broadcast); @y/websocket-server 0.1.1 runs `setupWSConnection` in memory (no YPERSISTENCE); ' +
      'Hocuspocus 3.4 runs with no extensions (in memory). All clients run in the benchmark process, one WebSocket each: stock ' +
      'y-websocket `WebsocketProvider` (`ws`, `disableBc: true`) for ours and y-websocket-server, `@hocuspocus/provider` 3 for Hocuspocus.',
    '',
    `Workloads: A = ${workloadLine(ALL_WORKLOADS[0]!)}; B = ${workloadLine(ALL_WORKLOADS[1]!)}. ` +
      'An edit appends a small token (`[n]`, 3–8 bytes) to the Y.Text `content`; latency runs from just before the edit at ' +
      'one client to its arrival (Y.Text observer) at each other client of the document, over all (edit, receiver) pairs. ' +
      '"lost" = expected deliveries not observed within 10 s after the last edit. "converged": all clients of a document ' +
      'hold the same text / hold every edit made to it; for ours also the server copy (`GET /api/documents/{id}?include=content`) ' +
      'while live and again after the last client left (compacted, unloaded and reloaded from SQLite), and the change history ' +
      '(`/changes`) holding exactly one row per edit. Server CPU is % of one core over the workload (edits and drain), and ' +
      'CPU milliseconds per edit, fan-out included.',
    '',
    `The workloads ran in ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each server once per workload and round, the servers' order ` +
      'rotating so that each ran first, second and last once (fresh documents every time). p50 and p99 are the median of ' +
      "the rounds' figures, each round's p99 is listed, and the other columns add the rounds up (max: the largest).",
    '',
    ...workloadTable(summaries),
    '',
    `Idle memory, in ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} as above (the figures are the medians; before → with clients from the ` +
      `median round): a fresh server process, ${WARMUP_DOCS} documents opened and closed first, then ${BASELINE_QUIET_MS / 1000} s of quiet ` +
      `and the baseline; then ${IDLE_DOCS} documents each with one connected, synced, idle client, and ${SETTLE_MS / 1000} s more. ` +
      'Each reading is VmRSS and its anonymous part RssAnon from /proc/<pid>/status right after two full garbage collections, ' +
      'which every server process (ours and the peers alike) runs on SIGUSR2 through a preloaded probe ' +
      '(`bench/helpers/memory-probe.ts`, `--expose-gc`); the V8 figure is process.memoryUsage() heapUsed + external at the same ' +
      'moments. A reading counts once anonymous RSS has stayed within 512 KiB for ten seconds (V8 returns unused heap pages ' +
      'in steps seconds apart after start-up). The goal is judged on anonymous RSS, the memory the documents and their ' +
      'connections take; the rest of RSS is mapped files (the node binary, libraries), shared and reclaimable.',
    '',
    ...rssTable(idleSummaries),
    '',
    `Client process: worst event-loop delay p99 ${fmt(lagWorst)} ms (monitorEventLoopDelay, 10 ms resolution), ` +
      `longest GC pause ${fmt(Math.max(...workloadResults.map((r) => r.clientGcMaxMs)))} ms, ` +
      `CPU ${summaries.map((r) => `${r.workload.name}/${r.kind} ${Math.round(median(r.rounds.map((x) => x.clientCpuPct)))}%`).join(', ')} ` +
      'of one core (median of the rounds).',
    '',
    'Goal (issue 7): our p99 no worse than the best peer and our RSS per idle document no more than the best peer:',
    '',
    ...verdict.lines.map((l) => `- ${l}`),
  ];

  console.log('');
  const printed = [...(summaries.length ? [...workloadTable(summaries), ''] : []), ...(idleSummaries.length ? [...rssTable(idleSummaries), ''] : []), ...verdict.lines];
  for (const line of printed) console.log(line);
  if (profileLines.length) {
    console.log('\nOur server, CPU profile over both workloads:');
    for (const line of profileLines) console.log(line);
  }
  if (PARTIAL) console.log('\n(partial run: bench/RESULTS.md left as it was)');
  else {
    writeResults(body);
    console.log('\nWrote the "Live editing (issue 7)" section of bench/RESULTS.md');
  }
  if (!verdict.ok) process.exitCode = 1;
}

async function cleanUp(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
  rmSync(workDir, { recursive: true, force: true });
}

const deadline = setTimeout(() => {
  console.error(`collab benchmark: over ${RUN_DEADLINE_MS / 60_000} minutes, giving up`);
  for (const child of children) child.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
  process.exit(1);
}, RUN_DEADLINE_MS);
deadline.unref();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(workDir, { recursive: true, force: true });
    process.exit(130);
  });
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanUp();
    clearTimeout(deadline);
    // Providers keep timers (awareness renewal, reconnects): leave without waiting for them.
    process.exit(process.exitCode ?? 0);
  });
