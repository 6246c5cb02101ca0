// Live editing at ten times the documents (issue 36): our hub (the real server, every edit in the
// SQLite log before anyone sees it) beside @y/websocket-server and Hocuspocus 3 (both in memory),
// in one run, with the clients in their own processes. Each server runs in a child process on
// 127.0.0.1 (bench/collab/servers.ts); the clients run in several forked client processes
// (bench/collab/client-process.ts), each holding many stock providers, every client of a document in
// the same process so that a delivery is timed on one clock. Measured:
//   1. the 10× workload: --docs documents × 4 clients × 1 edit/s for --seconds: fan-out latency
//      p50/p99/max, lost deliveries, convergence (for ours also the stored copy and the change
//      history), server CPU per edit and per delivery (the server's own process.cpuUsage(), asked
//      over IPC through the preloaded bench/helpers/cpu-probe.ts) and each client process's
//      event-loop delay p99 beside it;
//   2. idle RSS per open document at 1,000 and 10,000 open documents (one synced client each), read
//      as bench/collab.ts reads it (two full GCs through the memory probe, anonymous RSS settled);
//   3. ours only, REST beside the hub: GET /api/users/me at a constant 500 requests/s from an
//      open-loop client process (latency from each request's scheduled time), alone, then while
//      --rest-docs documents × 4 clients edit at 1 edit/s; the ratio of the p99s.
// Everything on 127.0.0.1, bounded (the whole run is killed past RUN_LIMIT_MS) and stopped by itself.
//   npx tsx bench/collab/run.ts --docs 500                  the full run; writes the issue 36 section of bench/RESULTS.md
//   --quick                                                 100 docs, 5 s, idle at 200/1,000: a smoke run, writes nothing
//   --only=ours,yws   --no-idle   --no-rest   --no-workload partial runs (write nothing)
//   --profile                                               CPU-profiles our server over the workload, prints its hottest parts
//   --client-procs=N (default 3)  --seconds=N (15)  --rest-docs=N (200)  --rest-rate=N (500)  --idle=1000,10000
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from '../helpers/common';
import { ClientProcess, connectShare } from './client-pool';
import type { Edited, Rested } from './client-process';
import { api, inBatches, signIn, waitForDocumentsApi } from './clients';
import { summariseProfile } from './measures';
import { LABEL, memoryDir, profileDir, root, type Kind } from './options';
import { children, runWithServers, serverCpuMs, settledReading, startOurs, startPeer, startServerProfile, stopChild, stopServerProfile, type MemoryReading, type ServerProcess } from './servers';

// ---------------------------------------------------------------- command line

function arg(name: string): string | undefined {
  const i = process.argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  const a = process.argv[i]!;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : process.argv[i + 1];
}
function numberArg(name: string, fallback: number, min: number, max: number): number {
  const given = arg(name);
  if (given === undefined) return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be a whole number from ${min} to ${max}, not ${given}`);
  return n;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const QUICK = flag('quick');
const PROFILE = flag('profile');
const DOCS = numberArg('docs', QUICK ? 100 : 500, 1, 5_000);
const CLIENTS_PER_DOC = 4;
const EDITS_PER_SECOND = 1;
const SECONDS = numberArg('seconds', QUICK ? 5 : 15, 1, 120);
const CLIENT_PROCS = numberArg('client-procs', 3, 1, 16);
const REST_DOCS = numberArg('rest-docs', QUICK ? 50 : 200, 1, 5_000);
const REST_RATE = numberArg('rest-rate', 500, 1, 5_000);
const REST_SECONDS = SECONDS;
const IDLE_STEPS = (arg('idle') ?? (QUICK ? '200,1000' : '1000,10000')).split(',').map(Number);
if (IDLE_STEPS.some((n, i) => !Number.isInteger(n) || n < 1 || n > 20_000 || (i > 0 && n <= IDLE_STEPS[i - 1]!))) {
  throw new Error('--idle takes increasing document counts up to 20,000, e.g. 1000,10000');
}
const ONLY = arg('only')?.split(',');
const KINDS = (['ours', 'yws', 'hocuspocus'] as Kind[]).filter((k) => !ONLY || ONLY.includes(k));
const NO_IDLE = flag('no-idle');
const NO_REST = flag('no-rest') || !KINDS.includes('ours');
const NO_WORKLOAD = flag('no-workload');
const PARTIAL = QUICK || PROFILE || Boolean(ONLY) || NO_IDLE || flag('no-rest') || NO_WORKLOAD || arg('docs') !== undefined && DOCS !== 500;

/** Where --profile keeps our server's profile of the workload (past the run, for DevTools). */
const PROFILE_FILE = path.join(tmpdir(), 'lms-bench-collab10x-ours.cpuprofile');
const WARMUP_DOCS = 20;
const DRAIN_MS = 10_000;
const SETTLE_MS = 5_000;
const BASELINE_QUIET_MS = 20_000;
const RUN_LIMIT_MS = 60 * 60_000;
const SECTION = '## Live editing at ten times the documents (issue 36)';
const GENERATED_END = '<!-- end of bench/collab/run.ts figures -->';

// Every WebsocketProvider the parent never makes, but fork() children add exit listeners.
process.setMaxListeners(0);


// ---------------------------------------------------------------- the workload

interface LoopSummary {
  lagP99: number[];
  lagMax: number;
  cpuPct: number[];
}

function loopSummary(answers: Array<{ lagP99: number; lagMax: number; cpuMs: number; wallMs: number }>): LoopSummary {
  return {
    lagP99: answers.map((a) => a.lagP99),
    lagMax: Math.max(...answers.map((a) => a.lagMax)),
    cpuPct: answers.map((a) => (a.cpuMs / a.wallMs) * 100),
  };
}

interface WorkloadResult {
  kind: Kind;
  docs: number;
  edits: number;
  expected: number;
  observed: number;
  p50: number;
  p99: number;
  max: number;
  converged: number;
  complete: number;
  unexpectedCloses: number;
  serverCpuMs: number;
  wallMs: number;
  clients: LoopSummary;
  connectSeconds: number;
  /** Ours only: stored copies equal to the clients' text while live and after unloading; change histories with one row per edit. */
  serverEqualLive?: number;
  serverEqualReloaded?: number;
  logComplete?: number;
}

async function editWorkload(
  server: ServerProcess,
  names: string[],
  procs: ClientProcess[],
  token: string | undefined,
  seconds: number,
): Promise<{ answers: Edited[]; serverCpuMs: number; wallMs: number; connectSeconds: number }> {
  const connectSeconds = await connectShare(procs, server, names, CLIENTS_PER_DOC, token);
  // Awareness from the joins settles before the clock starts.
  await sleep(1_000);
  if (PROFILE && server.kind === 'ours') await startServerProfile(server.child);
  const cpuBefore = await serverCpuMs(server.child);
  const wallStart = performance.now();
  const answers = await Promise.all(
    procs.map((p) => p.ask<Edited>({ type: 'edit', startInMs: 300, editsPerSecond: EDITS_PER_SECOND, seconds, drainMs: DRAIN_MS })),
  );
  const wallMs = performance.now() - wallStart;
  const cpu = (await serverCpuMs(server.child)) - cpuBefore;
  if (PROFILE && server.kind === 'ours') await stopServerProfile(server.child, PROFILE_FILE);
  return { answers, serverCpuMs: cpu, wallMs, connectSeconds };
}

async function runWorkload(server: ServerProcess, names: string[], token: string | undefined): Promise<WorkloadResult> {
  const procs = Array.from({ length: CLIENT_PROCS }, () => new ClientProcess());
  try {
    const { answers, serverCpuMs: cpu, wallMs, connectSeconds } = await editWorkload(server, names, procs, token, SECONDS);
    const latencies = Float64Array.from(answers.flatMap((a) => a.latencies)).sort();
    const texts = answers.flatMap((a) => a.texts);
    const editsByDoc = answers.flatMap((a) => a.editsByDoc);
    const edits = answers.reduce((n, a) => n + a.edits, 0);
    const result: WorkloadResult = {
      kind: server.kind,
      docs: names.length,
      edits,
      expected: answers.reduce((n, a) => n + a.expected, 0),
      observed: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.length ? latencies[latencies.length - 1]! : NaN,
      converged: answers.reduce((n, a) => n + a.converged, 0),
      complete: answers.reduce((n, a) => n + a.complete, 0),
      unexpectedCloses: answers.reduce((n, a) => n + a.unexpectedCloses, 0),
      serverCpuMs: cpu,
      wallMs,
      clients: loopSummary(answers),
      connectSeconds,
    };
    if (server.kind === 'ours' && token) {
      // Shares are contiguous and answered in order: texts[i] is names[i]'s.
      const base = `http://127.0.0.1:${server.port}`;
      const checks = await inBatches(names, 8, async (id, i) => {
        const doc = await api<{ content: string }>(base, 'GET', `/api/documents/${id}?include=content`, token);
        const changes = await api<{ pagination: { total: number } }>(base, 'GET', `/api/documents/${id}/changes?per_page=1`, token);
        return { equal: doc.content === texts[i], logged: changes.pagination.total === editsByDoc[i] };
      });
      result.serverEqualLive = checks.filter((c) => c.equal).length;
      result.logComplete = checks.filter((c) => c.logged).length;
      await Promise.all(procs.map((p) => p.close()));
      // Once the last client leaves, the document is compacted and unloaded: read it back from SQLite.
      await sleep(2_000);
      const reread = await inBatches(names, 8, (id) => api<{ content: string }>(base, 'GET', `/api/documents/${id}?include=content`, token));
      result.serverEqualReloaded = reread.filter((doc, i) => doc.content === texts[i]).length;
    }
    return result;
  } finally {
    await Promise.all(procs.map((p) => p.close()));
  }
}

// ---------------------------------------------------------------- REST beside the hub

interface RestFigures {
  p50: number;
  p99: number;
  max: number;
  sent: number;
  errors: number;
  lateSends: number;
  lagP99: number;
}

function restFigures(r: Rested): RestFigures {
  const sorted = Float64Array.from(r.latencies).sort();
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    sent: r.sent,
    errors: r.errors,
    lateSends: r.lateSends,
    lagP99: r.lagP99,
  };
}

interface RestResult {
  alone: RestFigures;
  beside: RestFigures;
  editing: { p50: number; p99: number; expected: number; observed: number; serverCpuPct: number; clients: LoopSummary };
}

async function restBesideHub(server: ServerProcess, names: string[], token: string): Promise<RestResult> {
  const url = `http://127.0.0.1:${server.port}/api/users/me`;
  const restProc = new ClientProcess();
  const procs = Array.from({ length: CLIENT_PROCS }, () => new ClientProcess());
  try {
    // A short untimed warm-up, then alone.
    await restProc.ask<Rested>({ type: 'rest', url, token, rate: REST_RATE, seconds: 2, drainMs: 5_000 });
    const alone = restFigures(await restProc.ask<Rested>({ type: 'rest', url, token, rate: REST_RATE, seconds: REST_SECONDS, drainMs: 5_000 }));
    await sleep(1_000);
    // Beside: the editors connect first; then both start together (the REST client's schedule
    // begins 50 ms after its message, the editors' 300 ms after theirs).
    const connectSeconds = await connectShare(procs, server, names, CLIENTS_PER_DOC, token);
    void connectSeconds;
    await sleep(1_000);
    const cpuBefore = await serverCpuMs(server.child);
    const wallStart = performance.now();
    const editing = Promise.all(
      procs.map((p) =>
        p.ask<Edited>({ type: 'edit', startInMs: 300, editsPerSecond: EDITS_PER_SECOND, seconds: REST_SECONDS + 1, drainMs: DRAIN_MS }),
      ),
    );
    await sleep(750);
    const beside = restFigures(await restProc.ask<Rested>({ type: 'rest', url, token, rate: REST_RATE, seconds: REST_SECONDS, drainMs: 5_000 }));
    const answers = await editing;
    const wallMs = performance.now() - wallStart;
    const cpu = (await serverCpuMs(server.child)) - cpuBefore;
    const latencies = Float64Array.from(answers.flatMap((a) => a.latencies)).sort();
    return {
      alone,
      beside,
      editing: {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        expected: answers.reduce((n, a) => n + a.expected, 0),
        observed: latencies.length,
        serverCpuPct: (cpu / wallMs) * 100,
        clients: loopSummary(answers),
      },
    };
  } finally {
    await Promise.all([restProc, ...procs].map((p) => p.close()));
  }
}

// ---------------------------------------------------------------- idle memory

interface IdleResult {
  kind: Kind;
  baseline: MemoryReading;
  steps: Array<{ docs: number; reading: MemoryReading; anonPerDocKiB: number; rssPerDocKiB: number; connectSeconds: number }>;
  clientLagP99: number;
}

async function measureIdle(server: ServerProcess, names: string[], token?: string): Promise<IdleResult> {
  const procs = Array.from({ length: CLIENT_PROCS }, () => new ClientProcess());
  try {
    // One-time costs (the first document, the first connection) are not counted per document.
    const warm = new ClientProcess();
    await connectShare([warm], server, names.slice(0, WARMUP_DOCS), 1, token);
    await warm.close();
    await sleep(BASELINE_QUIET_MS);
    const baseline = await settledReading(server.pid);
    const steps: IdleResult['steps'] = [];
    let open = 0;
    for (const docs of IDLE_STEPS) {
      const connectSeconds = await connectShare(procs, server, names.slice(WARMUP_DOCS + open, WARMUP_DOCS + docs), 1, token);
      open = docs;
      await sleep(SETTLE_MS);
      const reading = await settledReading(server.pid);
      steps.push({
        docs,
        reading,
        anonPerDocKiB: (reading.anonKiB - baseline.anonKiB) / docs,
        rssPerDocKiB: (reading.rssKiB - baseline.rssKiB) / docs,
        connectSeconds,
      });
      console.log(
        `  idle ${LABEL[server.kind]}: ${docs} open documents, anonymous RSS ${(baseline.anonKiB / 1024).toFixed(1)} → ${(reading.anonKiB / 1024).toFixed(1)} MiB, ` +
          `${fmt(steps.at(-1)!.anonPerDocKiB)} KiB anonymous / ${fmt(steps.at(-1)!.rssPerDocKiB)} KiB RSS per document (connect + sync ${fmt(connectSeconds)} s)`,
      );
    }
    return { kind: server.kind, baseline, steps, clientLagP99: NaN };
  } finally {
    await Promise.all(procs.map((p) => p.close()));
  }
}

// ---------------------------------------------------------------- report

const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

function workloadRow(r: WorkloadResult): string {
  const cpuPerEdit = r.serverCpuMs / r.edits;
  const cpuPerDelivery = (r.serverCpuMs * 1000) / Math.max(1, r.observed);
  const oursChecks = r.kind === 'ours' ? `; stored = clients ${r.serverEqualLive}/${r.docs} live, ${r.serverEqualReloaded}/${r.docs} reloaded; history complete ${r.logComplete}/${r.docs}` : '';
  return (
    `| ${LABEL[r.kind]} | ${fmt(r.p50, 2)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.observed}/${r.expected} | ${r.converged}/${r.docs}${oursChecks} | ` +
    `${fmt(r.serverCpuMs / 1000, 2)} s (${Math.round((r.serverCpuMs / r.wallMs) * 100)}%) | ${fmt(cpuPerEdit, 3)} | ${fmt(cpuPerDelivery, 0)} | ` +
    `${r.clients.lagP99.map((l) => fmt(l)).join(' / ')} (max ${fmt(r.clients.lagMax)}) | ${r.clients.cpuPct.map((c) => Math.round(c)).join(' / ')}% |`
  );
}

function workloadTable(results: WorkloadResult[]): string[] {
  return [
    '| server | p50 ms | p99 ms | max ms | delivered | converged | server CPU (share of a core) | CPU ms / edit | CPU µs / delivery | client loops p99 ms (each process) | client CPU |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---|---|',
    ...results.map(workloadRow),
  ];
}

function idleTable(results: IdleResult[]): string[] {
  return [
    `| server | baseline anon MiB | ${IDLE_STEPS.map((n) => `anon KiB / doc at ${n.toLocaleString('en')} (RSS KiB / doc)`).join(' | ')} |`,
    `|---|---:|${IDLE_STEPS.map(() => '---:').join('|')}|`,
    ...results.map(
      (r) =>
        `| ${LABEL[r.kind]} | ${fmt(r.baseline.anonKiB / 1024)} | ${r.steps.map((s) => `${fmt(s.anonPerDocKiB, 2)} (${fmt(s.rssPerDocKiB, 2)})`).join(' | ')} |`,
    ),
  ];
}

function restTable(r: RestResult): string[] {
  const row = (name: string, f: RestFigures) =>
    `| ${name} | ${fmt(f.p50, 2)} | ${fmt(f.p99, 2)} | ${fmt(f.max)} | ${f.sent - f.errors}/${f.sent} | ${f.lateSends} | ${fmt(f.lagP99)} |`;
  return [
    '| GET /api/users/me at ' + `${REST_RATE} req/s | p50 ms | p99 ms | max ms | answered 200 | sent > 5 ms late | REST client loop p99 ms |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    row('alone', r.alone),
    row(`beside ${REST_DOCS} docs × ${CLIENTS_PER_DOC} clients editing`, r.beside),
  ];
}

interface Verdict {
  ok: boolean;
  lines: string[];
}

function judge(workloads: WorkloadResult[], idle: IdleResult[], rest: RestResult | undefined): Verdict {
  const lines: string[] = [];
  let ok = true;
  const check = (pass: boolean, line: string) => {
    ok &&= pass;
    lines.push(`${pass ? 'met' : 'NOT met'}: ${line}`);
  };
  const ours = workloads.find((r) => r.kind === 'ours');
  const yws = workloads.find((r) => r.kind === 'yws');
  const peers = workloads.filter((r) => r.kind !== 'ours');
  if (ours && yws && peers.length === 2) {
    const bestP99 = Math.min(...peers.map((p) => p.p99));
    check(ours.p50 <= 1.2 * yws.p50, `p50 ${fmt(ours.p50, 2)} ms ≤ 1.2 × y-websocket's ${fmt(yws.p50, 2)} ms (${fmt(1.2 * yws.p50, 2)})`);
    check(ours.p99 <= bestP99, `p99 ${fmt(ours.p99)} ms ≤ best peer's ${fmt(bestP99)} ms`);
    const oursPerEdit = ours.serverCpuMs / ours.edits;
    const ywsPerEdit = yws.serverCpuMs / yws.edits;
    check(oursPerEdit <= 1.3 * ywsPerEdit, `server CPU ${fmt(oursPerEdit, 3)} ms / edit ≤ 1.3 × y-websocket's ${fmt(ywsPerEdit, 3)} (${fmt(1.3 * ywsPerEdit, 3)})`);
    check(ours.observed === ours.expected && ours.converged === ours.docs && ours.serverEqualLive === ours.docs && ours.logComplete === ours.docs,
      'every delivery arrived, every document converged, the stored copy equals the clients\' and the history holds every edit');
  }
  const oursIdle = idle.find((r) => r.kind === 'ours');
  const peersIdle = idle.filter((r) => r.kind !== 'ours');
  if (oursIdle && peersIdle.length === 2) {
    const last = IDLE_STEPS.length - 1;
    const best = Math.min(...peersIdle.map((p) => p.steps[last]!.anonPerDocKiB));
    const mine = oursIdle.steps[last]!.anonPerDocKiB;
    check(mine <= best / 4, `idle anonymous RSS per document at ${IDLE_STEPS[last]} open: ${fmt(mine, 2)} KiB ≤ 1/4 of the best peer's ${fmt(best, 2)} KiB (${fmt(best / 4, 2)})`);
  }
  if (rest) {
    const ratio = rest.beside.p99 / rest.alone.p99;
    check(ratio <= 1.5, `REST p99 beside the hub ${fmt(rest.beside.p99, 2)} ms ≤ 1.5 × alone ${fmt(rest.alone.p99, 2)} ms (ratio ${fmt(ratio, 2)})`);
  }
  return { ok, lines };
}

function writeResults(body: string[]): void {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const generated = [SECTION, '', ...body, '', GENERATED_END].join('\n');
  const start = current.indexOf(SECTION);
  let next: string;
  if (start === -1) next = `${current.trimEnd()}\n\n${generated}\n`;
  else {
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
  const started = new Date();
  console.log(`Live editing at ten times the documents: ${machine}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    `  workload: ${DOCS} documents × ${CLIENTS_PER_DOC} clients × ${EDITS_PER_SECOND} edit/s for ${SECONDS} s; ${CLIENT_PROCS} client processes; ` +
      `idle at ${IDLE_STEPS.join(', ')} documents; REST ${REST_RATE} req/s beside ${REST_DOCS} documents × ${CLIENTS_PER_DOC} clients`,
  );
  mkdirSync(profileDir, { recursive: true });
  if (PROFILE) rmSync(PROFILE_FILE, { force: true });
  mkdirSync(memoryDir, { recursive: true });

  // Our documents exist before anything is measured: created through REST by a first server on
  // the data folder the later ones reuse (the signing key lives in the database, so a token stays valid).
  let pool: string[] = [];
  if (KINDS.includes('ours')) {
    const setup = await startOurs('setup');
    try {
      const token = await signIn(setup);
      const base = `http://127.0.0.1:${setup.port}`;
      await waitForDocumentsApi(base, token);
      const needed = (NO_WORKLOAD ? 0 : DOCS) + (NO_REST ? 0 : REST_DOCS) + (NO_IDLE ? 0 : WARMUP_DOCS + IDLE_STEPS.at(-1)!);
      const t = performance.now();
      pool = await inBatches(Array.from({ length: needed }, (_, i) => i), 16, async (i) =>
        (await api<{ id: string }>(base, 'POST', '/api/documents', token, { title: `bench ${i}` })).id,
      );
      console.log(`Created ${needed} documents through the API in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } finally {
      await stopChild(setup.child);
    }
  }
  const take = (n: number) => pool.splice(0, n);
  const workloadNames = NO_WORKLOAD ? [] : take(DOCS);
  const restNames = NO_REST ? [] : take(REST_DOCS);
  const idleNames = NO_IDLE ? [] : take(WARMUP_DOCS + IDLE_STEPS.at(-1)!);

  const workloads: WorkloadResult[] = [];
  let profileLines: string[] = [];
  for (const kind of NO_WORKLOAD ? [] : KINDS) {
    const server = kind === 'ours' ? await startOurs('workload') : await startPeer(kind);
    try {
      const token = kind === 'ours' ? await signIn(server) : undefined;
      if (kind === 'ours') await sleep(2_000);
      const names = kind === 'ours' ? workloadNames : Array.from({ length: DOCS }, (_, i) => `workload-${i}`);
      const r = await runWorkload(server, names, token);
      workloads.push(r);
      console.log(
        `  ${LABEL[kind]}: p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, delivered ${r.observed}/${r.expected}, ` +
          `converged ${r.converged}/${r.docs}, server CPU ${fmt(r.serverCpuMs / 1000, 2)} s (${fmt(r.serverCpuMs / r.edits, 3)} ms/edit), ` +
          `client loops p99 ${r.clients.lagP99.map((l) => fmt(l)).join('/')} ms, client CPU ${r.clients.cpuPct.map((c) => Math.round(c)).join('/')}%, ` +
          `connect ${fmt(r.connectSeconds)} s, unexpected closes ${r.unexpectedCloses}` +
          (kind === 'ours' ? `, stored = clients ${r.serverEqualLive}/${r.docs} live, ${r.serverEqualReloaded}/${r.docs} reloaded, history ${r.logComplete}/${r.docs}` : ''),
      );
    } finally {
      await stopChild(server.child);
    }
    if (kind === 'ours' && PROFILE && existsSync(PROFILE_FILE)) profileLines = [...summariseProfile(PROFILE_FILE), `profile kept at ${PROFILE_FILE}`];
    await sleep(1_000);
  }

  let rest: RestResult | undefined;
  if (!NO_REST) {
    const server = await startOurs('rest');
    try {
      const token = await signIn(server);
      await sleep(2_000);
      rest = await restBesideHub(server, restNames, token);
      console.log(
        `  REST alone: p50 ${fmt(rest.alone.p50, 2)} ms, p99 ${fmt(rest.alone.p99, 2)} ms; beside the hub: p50 ${fmt(rest.beside.p50, 2)} ms, ` +
          `p99 ${fmt(rest.beside.p99, 2)} ms (ratio ${fmt(rest.beside.p99 / rest.alone.p99, 2)}); editing meanwhile p50 ${fmt(rest.editing.p50, 2)} ms, ` +
          `p99 ${fmt(rest.editing.p99)} ms, delivered ${rest.editing.observed}/${rest.editing.expected}, server CPU ${Math.round(rest.editing.serverCpuPct)}%`,
      );
    } finally {
      await stopChild(server.child);
    }
  }

  const idle: IdleResult[] = [];
  for (const kind of NO_IDLE ? [] : KINDS) {
    const server = kind === 'ours' ? await startOurs('idle') : await startPeer(kind);
    try {
      const token = kind === 'ours' ? await signIn(server) : undefined;
      const names = kind === 'ours' ? idleNames : Array.from({ length: WARMUP_DOCS + IDLE_STEPS.at(-1)! }, (_, i) => `idle-${i}`);
      idle.push(await measureIdle(server, names, token));
    } finally {
      await stopChild(server.child);
    }
  }

  const loadAfter = loadavg();
  const verdict = judge(workloads, idle, rest);
  const body = [
    `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npx tsx bench/collab/run.ts --docs ${DOCS}\`. Machine: ${machine}; ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after ` +
      '(the 2 cores are shared by the server, the client processes and whatever else runs).',
    '',
    `Each server in its own child process on 127.0.0.1 (ours: \`src/server.ts\`, every update in the SQLite log before it is ` +
      'broadcast; @y/websocket-server and Hocuspocus 3 in memory, as in bench/collab.ts). The clients run in ' +
      `${CLIENT_PROCS} forked client processes (\`bench/collab/client-process.ts\`), stock y-websocket \`WebsocketProvider\`s over \`ws\` ` +
      '(`@hocuspocus/provider` for Hocuspocus), one WebSocket each, every client of a document in the same process. Server CPU is ' +
      "the server process's own `process.cpuUsage()` over the workload (edits and drain), asked over IPC; the client loops are each " +
      "client process's `monitorEventLoopDelay` p99 over the same time.",
    '',
    `Workload: ${DOCS} documents × ${CLIENTS_PER_DOC} clients × ${EDITS_PER_SECOND} edit/s for ${SECONDS} s (an edit appends a 3–8 byte token; ` +
      'latency from just before the edit to its arrival at each other client of the document).',
    '',
    ...workloadTable(workloads),
    '',
    `Idle memory: a fresh server process, ${WARMUP_DOCS} documents opened and closed, ${BASELINE_QUIET_MS / 1000} s of quiet, the baseline; ` +
      `then documents with one synced idle client each, up to each count, ${SETTLE_MS / 1000} s, and a reading; readings after two full GCs ` +
      '(the memory probe), anonymous RSS settled within 512 KiB over ten seconds.',
    '',
    ...idleTable(idle),
    '',
    ...(rest
      ? [
          `REST beside the hub (ours): \`GET /api/users/me\` at a constant ${REST_RATE} requests/s for ${REST_SECONDS} s from an open-loop client ` +
            'process (keep-alive, requests sent when due whatever is outstanding, latency from each scheduled time), alone and then while ' +
            `${REST_DOCS} documents × ${CLIENTS_PER_DOC} clients edit at ${EDITS_PER_SECOND} edit/s (their deliveries meanwhile: p50 ${fmt(rest.editing.p50, 2)} ms, ` +
            `p99 ${fmt(rest.editing.p99)} ms, ${rest.editing.observed}/${rest.editing.expected} delivered, server CPU ${Math.round(rest.editing.serverCpuPct)}% of a core).`,
          '',
          ...restTable(rest),
          '',
        ]
      : []),
    'Goals (issue 36):',
    '',
    ...verdict.lines.map((l) => `- ${l}`),
  ];
  console.log('');
  for (const line of body.slice(2)) console.log(line);
  if (profileLines.length) {
    console.log('\nOur server, CPU profile over the workload:');
    for (const line of profileLines) console.log(line);
  }
  if (PARTIAL) console.log('\n(partial run: bench/RESULTS.md left as it was)');
  else {
    writeResults(body);
    console.log(`\nWrote the "${SECTION.slice(3)}" section of bench/RESULTS.md`);
  }
  if (!verdict.ok) process.exitCode = 1;
}

runWithServers('collab run', main, RUN_LIMIT_MS);
