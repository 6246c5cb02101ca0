// The live-editing benchmark's measurements: fan-out latency, convergence and CPU over a workload,
// the memory of idle open documents, heap growth by constructor, and a CPU profile's hottest parts.
import { copyFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMs, percentile } from '../helpers/common';
import { loopDelay } from '../helpers/loop-delay';
import { api, inBatches, withTimeout, type Client, type Target } from './clients';
import { growth, summarise } from './heap-snapshot';
import {
  BASELINE_QUIET_MS,
  CONNECT_CONCURRENCY,
  DRAIN_MS,
  HEAP_SNAPSHOTS,
  IDLE_DOCS,
  SETTLE_MS,
  SYNC_TIMEOUT_MS,
  WARMUP_DOCS,
  root,
  type Kind,
  type Workload,
} from './options';
import { collectAndMeasure, settledReading, type MemoryReading } from './servers';

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

export interface WorkloadResult {
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

export async function runWorkload(target: Target, w: Workload, round: number, base?: { url: string; token: string }): Promise<WorkloadResult> {
  const names = target.takeDocuments(w.docs);
  const groups = await connectAll(target, names, w.clientsPerDoc);
  const fanOut = new FanOut();
  for (const group of groups) for (const client of group) fanOut.watch(client);
  // Awareness from the joins settles before the clock starts.
  await sleep(1_000);

  const editsPerClient = w.editsPerSecond * w.seconds;
  const period = 1000 / w.editsPerSecond;
  const editsByDoc = new Array<number>(groups.length).fill(0);
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
  const lag = loopDelay();

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
  lag.stop();
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
    lagP50: lag.p50(),
    lagP99: lag.p99(),
    lagMax: lag.max(),
    clientGcMs: gc.total,
    clientGcMaxMs: gc.max,
    clientCpuPct: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    serverCpuPct: (serverCpu / wall) * 100,
    serverCpuMsPerEdit: serverCpu / edits,
  };
}

// ---------------------------------------------------------------- idle RSS

export interface RssResult {
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

export async function measureIdleRss(target: Target, round: number): Promise<RssResult> {
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

function heapDiff(loadedFile: string, baselineFile: string, docs: number): string[] {
  const rules = { constructors: [] };
  const grown = growth(summarise(loadedFile, rules).byConstructor, summarise(baselineFile, rules).byConstructor, docs);
  const total = grown.reduce((n, g) => n + g.bytes, 0);
  return [
    `heap growth per document: ${(total / 1024).toFixed(1)} KiB (self sizes; strings, code and numbers grouped by type)`,
    ...grown.slice(0, 25).map((g) => `  ${g.bytes.toFixed(0).padStart(6)} B  ${g.count.toFixed(1).padStart(5)} ×  ${g.key.slice(0, 90)}`),
  ];
}

// ---------------------------------------------------------------- profile summary

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** The hottest functions by self time, and self time per package/file, of a .cpuprofile. */
export function summariseProfile(file: string): string[] {
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

