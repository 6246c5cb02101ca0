// Soak test (issue 27): the real server, 200 documents opened and closed by stock y-websocket
// clients (BroadcastChannel off) with edits, 10,000 client open/close cycles in all, REST traffic
// and a Prometheus scrape beside them. Then: RSS and V8 heap within 10% of their level after the
// warm-up (both read after full GCs in the server, through bench/helpers/memory-probe.ts), no
// document left loaded and no connection left open (read from /metrics), every pair of clients
// converged, and every acknowledged edit in the store (read from the SQLite file after the server
// has stopped). Not part of `npm test` nor of `npm run bench`: `npm run soak` (minutes; exits 1 if a check fails).
//
// A session is two clients on one document (chosen at random, so that sessions sometimes share a
// document): both sync, each types a marker, and once each has received the other's marker (the
// server broadcasts an edit only after it is durable) both markers count as acknowledged and
// both clients close. SOAK_CONCURRENCY sessions run at a time.
//   SOAK_CYCLES=2000 npm run soak      a shorter run (client open/close cycles; default 10,000)
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { openDatabase } from '../db/client';
import { DocumentStore } from '../collab/store';
import { databaseFile } from '../src/config';
import { systemClock } from '../src/lib/clock';
import { SERVER_NODE_FLAGS } from '../src/node-flags';

const DOCS = 200;
const CYCLES = Number(process.env.SOAK_CYCLES ?? 10_000);
const CLIENTS_PER_SESSION = 2;
const SESSIONS = Math.ceil(CYCLES / CLIENTS_PER_SESSION);
const WARMUP_SESSIONS = Math.ceil(SESSIONS / 10);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 20);
const SESSION_TIMEOUT_MS = 30_000;
const RUN_DEADLINE_MS = 30 * 60_000;
const MEMORY_TOLERANCE = 0.1;
const ADMIN = { email: 'soak@example.org', password: 'soak-password-1' };
const METRICS_TOKEN = 'soak-metrics-token-0123456789';

const root = path.resolve(import.meta.dirname, '..');
// Each open provider listens for the process's exit: 2 × SOAK_CONCURRENCY of them at a time.
process.setMaxListeners(4 * CONCURRENCY + 10);
const work = mkdtempSync(path.join(tmpdir(), 'lms-soak-'));
const dataDir = path.join(work, 'data');
const memoryDir = work;
let server: ChildProcess | undefined;

const deadline = setTimeout(() => {
  console.error(`soak: still running after ${RUN_DEADLINE_MS / 60_000} minutes; stopping`);
  server?.kill('SIGKILL');
  process.exit(1);
}, RUN_DEADLINE_MS);
deadline.unref();

// ---- the server ----

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const logFile = path.join(work, 'server.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...SERVER_NODE_FLAGS, '--expose-gc', '--import', 'tsx', '--import', './bench/helpers/memory-probe.ts', 'src/server.ts', '--port', '0', '--data-dir', dataDir],
    {
      cwd: root,
      env: {
        ...process.env,
        BENCH_MEMORY_DIR: memoryDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
        SCRYPT_COST: '1024',
        ACCESS_TOKEN_TTL_SECONDS: '86400',
        METRICS_TOKEN,
      },
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  for (let i = 0; i < 600 && child.exitCode === null; i++) {
    const match = /"port":(\d+)[^\n]*listening/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { child, port: Number(match[1]) };
    await sleep(50);
  }
  throw new Error(`the server did not start; see ${logFile}`);
}

interface Reading {
  rssKiB: number;
  anonKiB: number;
  heapUsedKiB: number;
}

/** Full GCs in the server (its memory probe), then its RSS and V8 heap. */
async function measure(pid: number): Promise<Reading> {
  const file = path.join(memoryDir, `${pid}.json`);
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { sequence: number }).sequence : 0;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 1200; i++) {
    if (existsSync(file)) {
      const usage = JSON.parse(readFileSync(file, 'utf8')) as { sequence: number; collected: boolean; heapUsed: number };
      if (usage.sequence > before) {
        if (!usage.collected) throw new Error('the memory probe could not run the garbage collector (--expose-gc)');
        await sleep(500);
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
        return { rssKiB: field('VmRSS'), anonKiB: field('RssAnon'), heapUsedKiB: usage.heapUsed / 1024 };
      }
    }
    await sleep(50);
  }
  throw new Error('the server did not answer the memory probe');
}

/** Readings a second apart until RSS has stayed within 1 MiB for ten seconds (at most 90 s): freed memory goes back in steps. */
async function settled(pid: number): Promise<Reading> {
  const window: Reading[] = [await measure(pid)];
  const until = Date.now() + 90_000;
  while (Date.now() < until) {
    await sleep(1_000);
    window.push(await measure(pid));
    if (window.length > 11) window.shift();
    const rss = window.map((r) => r.rssKiB);
    if (window.length === 11 && Math.max(...rss) - Math.min(...rss) < 1024) break;
  }
  return window.at(-1)!;
}

// ---- clients ----

let port = 0;
let token = '';

async function api(method: string, route: string, body?: unknown, auth = `Bearer ${token}`): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { Authorization: auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, text: await res.text() };
}

function connect(documentId: string): { provider: WebsocketProvider; doc: Y.Doc; text: Y.Text } {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`ws://127.0.0.1:${port}/collab`, documentId, doc, {
    params: { token },
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    disableBc: true,
    maxBackoffTime: 500,
  });
  return { provider, doc, text: doc.getText('content') };
}

const whenSynced = (provider: WebsocketProvider) =>
  provider.synced ? Promise.resolve() : new Promise<void>((resolve) => provider.once('sync', (ok: boolean) => ok && resolve()));

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

/** Deterministic choices (a linear congruential generator): the same run each time. */
let seed = 27;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);

const documents: string[] = [];
const acknowledged = new Map<string, string[]>();
const failures: string[] = [];
let cyclesDone = 0;

async function session(n: number): Promise<void> {
  const documentId = documents[Math.floor(random() * DOCS)]!;
  const a = connect(documentId);
  const b = connect(documentId);
  try {
    const synced = await Promise.race([
      Promise.all([whenSynced(a.provider), whenSynced(b.provider)]).then(() => true),
      sleep(SESSION_TIMEOUT_MS).then(() => false),
    ]);
    if (!synced) {
      failures.push(`session ${n}: clients did not sync`);
      return;
    }
    const ma = `<s${n}a>`;
    const mb = `<s${n}b>`;
    a.text.insert(0, ma);
    b.text.insert(b.text.length, mb);
    const converged = await until(() => {
      const ta = a.text.toString();
      return ta === b.text.toString() && ta.includes(ma) && ta.includes(mb);
    }, SESSION_TIMEOUT_MS);
    if (!converged) {
      failures.push(`session ${n}: clients did not converge on ${documentId}`);
      return;
    }
    acknowledged.get(documentId)!.push(ma, mb);
  } finally {
    for (const c of [a, b]) {
      c.provider.destroy();
      c.doc.destroy();
    }
    cyclesDone += CLIENTS_PER_SESSION;
  }
}

async function runSessions(from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < to) await session(next++);
    }),
  );
}

/** REST beside the live editing: reads, renames, listings, and a Prometheus scrape every 2 s. */
function restTraffic(): { stop(): Promise<{ requests: number; errors: number; scrapes: number }> } {
  let running = true;
  let requests = 0;
  let errors = 0;
  let scrapes = 0;
  const loop = (async () => {
    let i = 0;
    while (running) {
      const id = documents[Math.floor(random() * DOCS)]!;
      const calls: [string, string, unknown?][] = [
        ['GET', '/api/users/me'],
        ['GET', `/api/documents/${id}?include=content`],
        ['GET', '/api/documents?per_page=20'],
        ['PATCH', `/api/documents/${id}`, { title: `Soak document, rename ${i}` }],
      ];
      for (const [method, route, body] of calls) {
        const res = await api(method, route, body);
        requests += 1;
        if (res.status >= 300) {
          errors += 1;
          if (errors <= 5) failures.push(`REST ${method} ${route}: ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
      i += 1;
      await sleep(10);
    }
  })();
  const scraper = setInterval(() => {
    void api('GET', '/metrics', undefined, `Bearer ${METRICS_TOKEN}`).then((res) => {
      scrapes += 1;
      if (res.status !== 200) failures.push(`GET /metrics: ${res.status}`);
    });
  }, 2_000);
  return {
    async stop() {
      running = false;
      clearInterval(scraper);
      await loop;
      return { requests, errors, scrapes };
    },
  };
}

async function gauge(name: string): Promise<number> {
  const res = await api('GET', '/metrics', undefined, `Bearer ${METRICS_TOKEN}`);
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text);
  if (!match) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}

// ---- the run ----

async function main(): Promise<void> {
  console.log(`soak: ${DOCS} documents, ${CYCLES} client open/close cycles (${SESSIONS} sessions of ${CLIENTS_PER_SESSION}), ${CONCURRENCY} sessions at a time`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, Node ${process.version}`);
  const started = await startServer();
  server = started.child;
  port = started.port;
  const pid = server.pid!;
  const signIn = await fetch(`http://127.0.0.1:${port}/api/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  token = ((await signIn.json()) as { access_token: string }).access_token;
  for (let i = 0; i < DOCS; i++) {
    const res = await api('POST', '/api/documents', { title: `Soak document ${i}`, content: `Document ${i}\n` });
    if (res.status !== 201) throw new Error(`creating a document: ${res.status} ${res.text}`);
    const id = (JSON.parse(res.text) as { id: string }).id;
    documents.push(id);
    acknowledged.set(id, []);
  }

  const t0 = performance.now();
  const rest = restTraffic();
  await runSessions(0, WARMUP_SESSIONS);
  const restAtWarmup = await rest.stop();
  const warmupSeconds = (performance.now() - t0) / 1000;
  console.log(`warm-up: ${cyclesDone} cycles in ${warmupSeconds.toFixed(1)} s; measuring (settled, after full GCs)…`);
  const warm = await settled(pid);
  console.log(`after warm-up: RSS ${(warm.rssKiB / 1024).toFixed(1)} MiB, heap ${(warm.heapUsedKiB / 1024).toFixed(1)} MiB`);

  const t1 = performance.now();
  const rest2 = restTraffic();
  let lastReport = performance.now();
  const progress = setInterval(() => {
    if (performance.now() - lastReport < 30_000) return;
    lastReport = performance.now();
    console.log(`  ${cyclesDone} of ${CYCLES} cycles, ${((performance.now() - t1) / 1000).toFixed(0)} s`);
  }, 1_000);
  await runSessions(WARMUP_SESSIONS, SESSIONS);
  clearInterval(progress);
  const restTotals = await rest2.stop();
  const mainSeconds = (performance.now() - t1) / 1000;
  console.log(`main run: ${cyclesDone} cycles in all, the last ${CYCLES - CLIENTS_PER_SESSION * WARMUP_SESSIONS} in ${mainSeconds.toFixed(1)} s`);

  // Every client has closed: the hub must have let every document go.
  let openDocuments = -1;
  let connections = -1;
  for (let i = 0; i < 100; i++) {
    openDocuments = await gauge('lms_collab_open_documents');
    connections = await gauge('lms_collab_connections');
    if (openDocuments === 0 && connections === 0) break;
    await sleep(100);
  }
  const after = await settled(pid);
  const rssRatio = after.rssKiB / warm.rssKiB;
  const heapRatio = after.heapUsedKiB / warm.heapUsedKiB;
  console.log(`after the run: RSS ${(after.rssKiB / 1024).toFixed(1)} MiB (${rssRatio.toFixed(3)}×), heap ${(after.heapUsedKiB / 1024).toFixed(1)} MiB (${heapRatio.toFixed(3)}×)`);

  // The store, read from the file once the server has stopped.
  server.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => server!.once('exit', (c) => resolve(c)));
  if (code !== 0) failures.push(`the server exited with ${code}`);
  const database = openDatabase(databaseFile({ dataDir }));
  const store = new DocumentStore({ db: database.db, clock: systemClock });
  let checked = 0;
  let missing = 0;
  for (const [id, markers] of acknowledged) {
    const text = store.getText(id);
    for (const marker of markers) {
      checked += 1;
      if (!text.includes(marker)) missing += 1;
    }
  }
  database.close();

  const restRequests = restAtWarmup.requests + restTotals.requests;
  const restErrors = restAtWarmup.errors + restTotals.errors;
  const checks: [string, boolean][] = [
    [`cycles: ${cyclesDone} of ${CYCLES}`, cyclesDone >= CYCLES],
    [`RSS after / after warm-up: ${rssRatio.toFixed(3)} (≤ ${1 + MEMORY_TOLERANCE})`, rssRatio <= 1 + MEMORY_TOLERANCE],
    [`heap after / after warm-up: ${heapRatio.toFixed(3)} (≤ ${1 + MEMORY_TOLERANCE})`, heapRatio <= 1 + MEMORY_TOLERANCE],
    [`documents still loaded: ${openDocuments}, connections still open: ${connections}`, openDocuments === 0 && connections === 0],
    [`sessions that did not converge or sync: ${failures.filter((f) => f.startsWith('session')).length}`, !failures.some((f) => f.startsWith('session'))],
    [`acknowledged edits in the store: ${checked - missing} of ${checked}`, missing === 0 && checked > 0],
    [`REST requests: ${restRequests}, errors: ${restErrors}; /metrics scrapes: ${restAtWarmup.scrapes + restTotals.scrapes}`, restErrors === 0],
  ];
  console.log('\nchecks:');
  for (const [what, ok] of checks) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  for (const failure of failures.slice(0, 10)) console.log(`  - ${failure}`);
  console.log(
    `\nfigures: warm-up RSS ${(warm.rssKiB / 1024).toFixed(1)} MiB / heap ${(warm.heapUsedKiB / 1024).toFixed(1)} MiB; ` +
      `after RSS ${(after.rssKiB / 1024).toFixed(1)} MiB / heap ${(after.heapUsedKiB / 1024).toFixed(1)} MiB; ` +
      `${(CYCLES / (warmupSeconds + mainSeconds)).toFixed(0)} cycles/s; ${restRequests} REST requests`,
  );
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
