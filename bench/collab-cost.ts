// Costly updates benchmark (issue 41): one member sends expensive Yjs updates to their own
// document, ten in a row (reconnecting whenever closed), while another editor works on another
// document. The target: the event loop's longest stall during the attack stays under 100 ms for
// everyone else (measured as bench/large-documents.ts does: the longest gap between the ticks of a
// 1 ms interval timer). The real server on 127.0.0.1 over a SQLite file; the other editor in this
// process, the attacker in a worker thread (bench/helpers/collab-attacker.ts: its own work of
// building and masking megabyte messages is not the server's).
// Attacks: the GC-struct flood of the issue (590,000 GC structs, 1.18 MB: refused from its counts),
// the largest flood of GC structs the caps let through, and updates of 100,000 items each (a
// character typed at a time: applied in slices, charged to the sender, who is closed once past
// their allowance). A baseline in the same run first: the other editor typing alone, for the machine's
// own stalls (a shared VM's load shows there).
//   npx tsx bench/collab-cost.ts        (npm run bench -- collab-cost)
import { cpus, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { WebSocket } from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { startBackgroundCheckpoints } from '../db/client';
import { createApp } from '../src/app';
import { createCollabHub } from '../src/deps';
import { startHttpServer } from '../src/http-server';
import { ATTACKS, type AttackerRequest } from './helpers/collab-attacker';
import { BENCH_ADMIN, benchDeps, stallProbe, tempDatabase } from './helpers/common';

const TARGET_MS = 100;
const ROUNDS = 10;
const BASELINE_MS = 5_000;

const { database, dispose } = tempDatabase('collab-cost');
// As the server runs: WAL checkpoints in a worker, not in the commits of the work measured.
const checkpoints = startBackgroundCheckpoints(database);
const deps = await benchDeps(database);
const app = createApp(deps);
const hub = createCollabHub(deps);
const running = await startHttpServer({ app, hub, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 });
const base = `ws://127.0.0.1:${running.port}/collab`;

async function call<T>(method: string, path: string, token: string | null, body?: unknown): Promise<T> {
  const res = await app.request(path, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const { access_token: token } = await call<{ access_token: string }>('POST', '/api/auth/token', null, BENCH_ADMIN);
const target = (await call<{ id: string }>('POST', '/api/documents', token, { title: 'attacked', content: 'hello' })).id;
const other = (await call<{ id: string }>('POST', '/api/documents', token, { title: 'other', content: 'elsewhere' })).id;

// Another editor, on another document, typing throughout.
const bystander = new Y.Doc();
const provider = new WebsocketProvider(base, other, bystander, {
  params: { token },
  WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
  disableBc: true,
});
await new Promise<void>((resolve) => provider.once('sync', () => resolve()));
const typing = setInterval(() => bystander.getText('content').insert(0, 'k'), 50);

// The attacker, in a thread of its own (bench/helpers/collab-attacker.ts).
// (A thread does not inherit the tsx loader: it registers it, as src/lib/worker-entry.mjs does.)
const attackerModule = new URL('./helpers/collab-attacker.ts', import.meta.url).href;
const attacker = new Worker(
  `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(attackerModule)}); })`,
  { eval: true, workerData: { url: `${base}/${target}?token=${token}` } },
);
const ask = (request: AttackerRequest) =>
  new Promise<string>((resolve, reject) => {
    attacker.once('message', (outcome: string) => {
      attacker.off('error', reject);
      resolve(outcome);
    });
    attacker.once('error', reject);
    attacker.postMessage(request);
  });

console.log(`Node ${process.version}, ${cpus().length} cores; ${ROUNDS} updates per attack, one member on their own document`);
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) at the start`);
console.log('| attack | outcomes | seconds | longest loop stall ms | stall < 100 ms |');
console.log('|---|---|---|---|---|');

/** The event loop's longest stall while `work` runs: the longest gap between ticks of a 1 ms timer. */
async function longestStall(work: () => Promise<void>): Promise<{ longest: number; seconds: number }> {
  const started = performance.now();
  const probe = stallProbe();
  await work();
  return { longest: probe.stop(), seconds: (performance.now() - started) / 1000 };
}

// The baseline, in the same run: the bystander typing alone, as long as an attack takes.
const baseline = await longestStall(() => new Promise((resolve) => setTimeout(resolve, BASELINE_MS)));
console.log(`| none (baseline: the other editor typing alone) | | ${baseline.seconds.toFixed(1)} | ${baseline.longest.toFixed(0)} | |`);
let over = false;
for (const [index, attack] of ATTACKS.entries()) {
  await ask({ prepare: index, rounds: ROUNDS });
  const outcomes = new Map<string, number>();
  const { longest, seconds } = await longestStall(async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const outcome = await ask({ send: i });
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  });
  over ||= longest >= TARGET_MS;
  const told = [...outcomes].map(([o, n]) => `${n} ${o}`).join(', ');
  console.log(`| ${attack.name} | ${told} | ${seconds.toFixed(1)} | ${longest.toFixed(0)} | ${longest < TARGET_MS ? 'yes' : 'NO'} |`);
}
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) when done`);

clearInterval(typing);
attacker.postMessage({ close: true } satisfies AttackerRequest);
await attacker.terminate();
provider.destroy();
await running.close();
await checkpoints.stop();
dispose();
process.exit(over ? 1 : 0);
