// Idle memory per open document, taken apart (issue 36): where a server's memory goes when it holds
// N documents open, each with one synced idle client, and the floor beneath it. Measured in one run,
// one fresh server process after another (bench/collab/servers.ts, the memory probe preloaded):
//   floor        a bare `ws` server (bench/collab-peer-server.ts floor) holding N idle WebSockets,
//                each having had one small message echoed: the least a WebSocket per document costs;
//   yws          @y/websocket-server 0.1.1, stock y-websocket clients;
//   ours         our server (hub + SQLite log), stock y-websocket clients;
//   ours-cache64 ours again with SQLite's page cache held to 64 KiB (bench/helpers/sqlite-cache.ts):
//                the difference is what the page cache took while the documents loaded;
//   ours-base    with --base=DIR: our server from another checkout (e.g. main's, `git archive` into
//                DIR with node_modules linked), for a change's before and after in one run.
// For each: the baseline (20 warm-up documents opened and closed, 20 s quiet, readings settled as
// bench/collab/run.ts settles them), then N documents and the same reading; per document, the growth
// of anonymous RSS, of the V8 heap (used and committed), of memory outside it that V8 knows of
// (external, of which ArrayBuffers), and the rest (anonymous RSS the V8 heap and external do not
// account for: libuv and node's native handles, malloc's own slack, SQLite). With heap snapshots
// (the default; --no-snapshots skips them) also the heap's growth per document by constructor and
// by owner (bench/collab/heap-snapshot.ts: which Y.Doc, LoadedDoc, Room, Connection, WebSocket,
// Socket … holds it).
//   npx tsx bench/collab/idle.ts                       10,000 documents, every variant
//   --docs=N  --only=floor,ours  --client-procs=N (3)  --no-snapshots  --keep-snapshots (kept in the temp dir)  --base=DIR
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientProcess, connectShare } from './client-pool';
import { api, inBatches, signIn, waitForDocumentsApi } from './clients';
import { growth, summarise, type Growth, type OwnerRules, type Sums } from './heap-snapshot';
import { memoryDir } from './options';
import { collectAndMeasure, runWithServers, settledReading, startOurs, startPeer, stopChild, type MemoryReading, type ServerProcess } from './servers';

function arg(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}
const DOCS = Number(arg('docs') ?? 10_000);
if (!Number.isInteger(DOCS) || DOCS < 1 || DOCS > 20_000) throw new Error('--docs takes a whole number from 1 to 20,000');
const CLIENT_PROCS = Number(arg('client-procs') ?? 3);
if (!Number.isInteger(CLIENT_PROCS) || CLIENT_PROCS < 1 || CLIENT_PROCS > 16) throw new Error('--client-procs takes a whole number from 1 to 16');
const SNAPSHOTS = !process.argv.includes('--no-snapshots');
const KEEP_SNAPSHOTS = process.argv.includes('--keep-snapshots');

const BASE = arg('base');
type Variant = 'floor' | 'yws' | 'ours-base' | 'ours' | 'ours-cache64';
const ALL: Variant[] = ['floor', 'yws', ...(BASE ? (['ours-base'] as const) : []), 'ours', 'ours-cache64'];
const ONLY = arg('only')?.split(',');
if (ONLY?.some((v) => !ALL.includes(v as Variant))) throw new Error(`--only takes some of ${ALL.join(',')}`);
const VARIANTS = ALL.filter((v) => !ONLY || ONLY.includes(v));
const LABELS: Record<Variant, string> = {
  floor: 'floor: bare ws, one echo',
  yws: '@y/websocket-server 0.1.1',
  ours: 'ours (hub + SQLite log)',
  'ours-cache64': 'ours, SQLite page cache 64 KiB',
  'ours-base': `ours at ${BASE}`,
};

const WARMUP_DOCS = 20;
const BASELINE_QUIET_MS = 20_000;
const SETTLE_MS = 5_000;
const RUN_LIMIT_MS = 60 * 60_000;

const OWNERS: OwnerRules = {
  constructors: ['Doc', 'WSSharedDoc', 'Room', 'Presence', 'Connection', 'WebSocket', 'Receiver', 'Sender', 'Socket', 'TCP', 'Timeout', 'Awareness'],
  // A property not held as a small integer: the snapshot lists no edges to those.
  literals: { lacksMarkdown: 'LoadedDoc' },
};

interface Result {
  variant: Variant;
  baseline: MemoryReading;
  loaded: MemoryReading;
  connectSeconds: number;
  owners?: Growth[];
  constructors?: Growth[];
}

async function snapshotSums(pid: number, variant: Variant, stage: string): Promise<Sums> {
  const file = (await collectAndMeasure(pid, { snapshot: true })).snapshot!;
  if (KEEP_SNAPSHOTS) copyFileSync(file, path.join(tmpdir(), `lms-bench-idle-${variant}-${stage}.heapsnapshot`));
  try {
    return summarise(file, OWNERS);
  } finally {
    rmSync(file, { force: true });
  }
}


/** Warm-up documents opened and closed, quiet, then the settled baseline. */
async function warmUp(server: ServerProcess, names: string[], token?: string): Promise<MemoryReading> {
  const warm = new ClientProcess();
  await connectShare([warm], server, names.slice(0, WARMUP_DOCS), 1, token);
  await warm.close();
  await sleep(BASELINE_QUIET_MS);
  return settledReading(server.pid);
}

/**
 * The readings, then (with snapshots) the heap snapshot with the documents open. Writing a snapshot
 * leaves memory behind in the process, so the baseline's snapshot is taken by another process
 * (baselineSums), not before the documents open.
 */
async function measure(variant: Variant, server: ServerProcess, names: string[], token?: string): Promise<Omit<Result, 'owners' | 'constructors'> & { after?: Sums }> {
  const baseline = await warmUp(server, names, token);
  const procs = Array.from({ length: CLIENT_PROCS }, () => new ClientProcess());
  try {
    const connectSeconds = await connectShare(procs, server, names.slice(WARMUP_DOCS), 1, token);
    await sleep(SETTLE_MS);
    const loaded = await settledReading(server.pid);
    const after = SNAPSHOTS ? await snapshotSums(server.pid, variant, 'loaded') : undefined;
    return { variant, baseline, loaded, connectSeconds, after };
  } finally {
    await Promise.all(procs.map((p) => p.close()));
  }
}

/** A fresh process of the same server, warmed up on the same documents: its heap snapshot is the baseline's. */
async function baselineSums(variant: Variant, names: string[]): Promise<Sums> {
  const server = await start(variant, 'baseline');
  try {
    await warmUp(server, names, server.kind === 'ours' ? await signIn(server) : undefined);
    return await snapshotSums(server.pid, variant, 'baseline');
  } finally {
    await stopChild(server.child);
  }
}

/** `stage` names our server's log (each process needs one of its own). */
function start(variant: Variant, stage: string): Promise<ServerProcess> {
  if (variant === 'floor' || variant === 'yws') return startPeer(variant);
  return startOurs(`${variant}-${stage}`, variant === 'ours-cache64' ? { sqliteCacheSize: -64 } : variant === 'ours-base' ? { tree: BASE } : {});
}

const kib = (n: number) => (n / DOCS).toFixed(2);

function row(r: Result): string {
  const d = (f: (m: MemoryReading) => number) => f(r.loaded) - f(r.baseline);
  const anon = d((m) => m.anonKiB);
  const heapTotal = d((m) => m.heapTotalKiB);
  const external = d((m) => m.externalKiB);
  return (
    `| ${LABELS[r.variant]} | ${(r.baseline.anonKiB / 1024).toFixed(1)} | ${kib(anon)} | ${kib(d((m) => m.heapUsedKiB))} | ${kib(heapTotal)} | ${kib(d((m) => m.newSpaceKiB))} | ` +
    `${kib(external)} (${kib(d((m) => m.arrayBuffersKiB))}) | ${kib(anon - heapTotal - external)} | ${kib(d((m) => m.rssKiB))} |`
  );
}

function growthLines(title: string, items: Growth[] | undefined, top: number): string[] {
  if (!items) return [];
  const total = items.reduce((n, g) => n + g.bytes, 0);
  return [
    `  ${title} (total ${(total / 1024).toFixed(2)} KiB per document):`,
    ...items
      .filter((g) => Math.abs(g.bytes) >= 8)
      .slice(0, top)
      .map((g) => `    ${g.bytes.toFixed(0).padStart(6)} B  ${g.count.toFixed(2).padStart(6)} ×  ${g.key.slice(0, 90)}`),
  ];
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const started = new Date();
  console.log(
    `Idle memory per open document, taken apart: ${DOCS} documents; ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}; ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
  );
  mkdirSync(memoryDir, { recursive: true });
  const oursVariants = VARIANTS.filter((v) => v.startsWith('ours')).length;
  let pool: string[] = [];
  if (oursVariants > 0) {
    // Fresh documents for each of our variants, created through REST by a first server.
    const setup = await startOurs('setup');
    try {
      const token = await signIn(setup);
      const base = `http://127.0.0.1:${setup.port}`;
      await waitForDocumentsApi(base, token);
      const t = performance.now();
      pool = await inBatches(Array.from({ length: oursVariants * (WARMUP_DOCS + DOCS) }, (_, i) => i), 16, async (i) =>
        (await api<{ id: string }>(base, 'POST', '/api/documents', token, { title: `idle ${i}` })).id,
      );
      console.log(`Created ${pool.length} documents through the API in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } finally {
      await stopChild(setup.child);
    }
  }

  const results: Result[] = [];
  for (const variant of VARIANTS) {
    const names = variant.startsWith('ours') ? pool.splice(0, WARMUP_DOCS + DOCS) : Array.from({ length: WARMUP_DOCS + DOCS }, (_, i) => `idle-${i}`);
    const server = await start(variant, 'measured');
    let measured: Awaited<ReturnType<typeof measure>>;
    try {
      measured = await measure(variant, server, names, server.kind === 'ours' ? await signIn(server) : undefined);
    } finally {
      await stopChild(server.child);
    }
    const { after, ...r }: Result & { after?: Sums } = measured;
    if (after) {
      const before = await baselineSums(variant, names);
      r.owners = growth(after.byOwner, before.byOwner, DOCS);
      r.constructors = growth(after.byConstructor, before.byConstructor, DOCS);
    }
    results.push(r);
    console.log(`\n${row(r)}  (connect + sync ${r.connectSeconds.toFixed(1)} s, load ${loadavg()[0]!.toFixed(2)})`);
    for (const line of [...growthLines('V8 heap growth by owner', r.owners, 20), ...growthLines('by constructor (self sizes)', r.constructors, 30)]) console.log(line);
  }

  const loadAfter = loadavg();
  console.log(
    `\nRun ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${DOCS.toLocaleString('en')} open documents, load average ` +
      `${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after. KiB per open document:\n`,
  );
  console.log(
    '| server | baseline anon MiB | anon RSS | V8 heap used | V8 heap committed | of which new space | external (ArrayBuffers) | anon − heap committed − external | RSS |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) console.log(row(r));
  const floor = results.find((r) => r.variant === 'floor');
  const yws = results.find((r) => r.variant === 'yws');
  if (floor && yws) {
    const per = (r: Result) => (r.loaded.anonKiB - r.baseline.anonKiB) / DOCS;
    const target = per(yws) / 4;
    console.log(
      `\nfloor ${per(floor).toFixed(2)} KiB per connection; 1/4 of y-websocket-server's ${per(yws).toFixed(2)} KiB is ${target.toFixed(2)} KiB: ` +
        (per(floor) > target ? 'the floor alone is above the target, which no server holding a WebSocket per document can meet' : 'the floor is below the target'),
    );
  }
}

runWithServers('idle memory', main, RUN_LIMIT_MS);
