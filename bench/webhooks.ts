// Webhooks benchmark (issue 26): the server with its delivery worker in its own process
// (bench/webhooks-server.ts) on a SQLite file; three subscriptions to a local receiver, in a
// process of its own too (bench/webhook-receiver-server.ts). 10,000 events are committed to the log (by this process, on the same file, in
// transactions of 100), and every one must reach all three subscribers. Reported: deliveries per
// second, and p50/p99 from each event's commit to its arrival, for a burst (all 10,000 committed at
// once: the latency is mostly queueing) and for a steady stream (10,000 at a fixed rate). And the
// REST API's p99 (autocannon, GET /api/webhooks, 10 connections) with no delivery running, beside
// its p99 while the burst is being delivered, in the same run.
//   npm run bench -- webhooks   (or npx tsx bench/webhooks.ts)
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { inTransaction, openDatabase } from '../db/client';
import { appendEvent } from '../src/events/log';
import { systemClock } from '../src/lib/clock';
import { BENCH_ADMIN, percentile, startHelper } from './helpers/common';

/** BENCH_EVENTS overrides the count for a quicker run (figures are for 10,000). */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const SUBSCRIBERS = 3;
const BATCH = 100;
const STEADY_RATE = 200; // events per second: 600 deliveries per second, within what the burst shows the worker sustains
const REST_SECONDS = 5;
const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-webhooks-'));
const file = path.join(dir, 'bench.sqlite');

/** When each event id was committed (ms since the epoch, as the receiver notes arrivals). */
const committedAt = new Map<string, number>();
const now = () => performance.timeOrigin + performance.now();

const receiverProcess = await startHelper('bench/webhook-receiver-server.ts', []);
const receiverBase = `http://127.0.0.1:${receiverProcess.port}`;
const receiverPort = receiverProcess.port;
const receiverStatus = async () => (await (await fetch(`${receiverBase}/status`)).json()) as { requests: number; distinct: Record<string, number> };
const resetReceiver = () => fetch(`${receiverBase}/reset`, { method: 'POST' });

// BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server.
const server = await startHelper('bench/webhooks-server.ts', [file], process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []);
const base = `http://127.0.0.1:${server.port}`;
const token = (
  (await (
    await fetch(`${base}/api/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BENCH_ADMIN) })
  ).json()) as { access_token: string }
).access_token;
const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
for (let i = 0; i < SUBSCRIBERS; i++) {
  const res = await fetch(`${base}/api/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/s${i}` }) });
  if (res.status !== 201) throw new Error(`subscription: ${res.status} ${await res.text()}`);
}

const database = openDatabase(file);
const tenantId = (database.sqlite.prepare("select id from tenants where slug = 'default'").get() as { id: string }).id;
const userId = (database.sqlite.prepare('select id from users where email = ?').get(BENCH_ADMIN.email) as { id: string }).id;

/** Commits `count` events in one transaction; records their commit time. */
function commit(count: number, level: number): void {
  const ids = inTransaction(database.db, (tx) =>
    Array.from({ length: count }, (_, i) =>
      appendEvent(tx, systemClock, { tenantId, type: 'level.reached', actorId: userId, subject: { type: 'user', id: userId }, data: { user_id: userId, level: level + i, total_xp: level + i } }).id,
    ),
  );
  const at = now();
  for (const id of ids) committedAt.set(id, at);
}

/** Waits until every subscriber has seen `count` distinct messages since the last reset. */
async function waitForAll(count: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await receiverStatus();
    const counts = Object.values(status.distinct);
    if (counts.length === SUBSCRIBERS && counts.every((n) => n >= count)) return status.requests;
    if (Date.now() > deadline) throw new Error('deliveries did not all arrive in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function latencies(ids: string[]): Promise<{ p50: number; p99: number }> {
  const report = (await (await fetch(`${receiverBase}/report`)).json()) as Record<string, Record<string, number>>;
  const all: number[] = [];
  for (const seen of Object.values(report)) for (const id of ids) all.push(seen[id]! - committedAt.get(id)!);
  all.sort((a, b) => a - b);
  return { p50: percentile(all, 50), p99: percentile(all, 99) };
}

const rest = (seconds: number) => autocannon({ url: `${base}/api/webhooks`, connections: 10, duration: seconds, headers });

// Warm-up: a few events through every subscriber, and the REST route.
commit(50, 0);
await waitForAll(50, 60_000);
await rest(1);
committedAt.clear();
await resetReceiver();

// 1. The REST API alone.
const alone = await rest(REST_SECONDS);

// 2. A burst of 10,000 events, with the REST API under load while it is delivered.
const burstStart = performance.now();
for (let i = 0; i < EVENTS; i += BATCH) commit(BATCH, 1000 + i);
const burstIds = [...committedAt.keys()];
const loaded = rest(REST_SECONDS);
const burstReceived = await waitForAll(EVENTS, 600_000);
const burstSeconds = (performance.now() - burstStart) / 1000;
const during = await loaded;
const burstLatency = await latencies(burstIds);
const burstRate = (EVENTS * SUBSCRIBERS) / burstSeconds;

// 3. A steady stream: 10,000 events at STEADY_RATE per second, in batches of 10.
committedAt.clear();
await resetReceiver();
const streamStart = performance.now();
for (let i = 0; i < EVENTS; i += 10) {
  commit(10, 100_000 + i);
  const due = streamStart + ((i + 10) / STEADY_RATE) * 1000;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const streamIds = [...committedAt.keys()];
await waitForAll(EVENTS, 600_000);
const streamSeconds = (performance.now() - streamStart) / 1000;
const streamLatency = await latencies(streamIds);

const ms = (n: number) => `${n.toFixed(1)} ms`;
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`burst: ${EVENTS} events × ${SUBSCRIBERS} subscribers delivered in ${burstSeconds.toFixed(2)} s: ${Math.round(burstRate)} deliveries/s (${burstReceived} requests received); commit → arrival p50 ${ms(burstLatency.p50)}, p99 ${ms(burstLatency.p99)}`);
console.log(`stream: ${EVENTS} events at ${STEADY_RATE}/s × ${SUBSCRIBERS} subscribers, all delivered ${streamSeconds.toFixed(2)} s after the first commit; commit → arrival p50 ${ms(streamLatency.p50)}, p99 ${ms(streamLatency.p99)}`);
console.log(`REST GET /api/webhooks, 10 connections, ${REST_SECONDS} s: alone p99 ${alone.latency.p99} ms (p50 ${alone.latency.p50} ms, ${Math.round(alone.requests.average)} req/s); during the burst's deliveries p99 ${during.latency.p99} ms (p50 ${during.latency.p50} ms, ${Math.round(during.requests.average)} req/s)`);

database.close();
server.child.kill('SIGTERM');
await new Promise((r) => server.child.once('exit', r));
receiverProcess.child.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
