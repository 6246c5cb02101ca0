// Foundation benchmark (issues 3 and 20): our server's authenticated `GET /api/users/me` (an access
// JWT) against a minimal Hono peer with the same duties (bench/peer-hono-server.ts) and, as the
// ceiling, a bare node:http hello world (bench/hello-server.ts). Each runs in its own process on
// 127.0.0.1; ours is the real server (temp data dir, port 0, LOG_LEVEL=info, its log going to a
// file), the peer reads ours's signing key and users at start and logs to a file too. Before any
// measuring, the peer and ours must answer the same body bytes and the same headers (names; values
// where deterministic) and log one access line of the same fields, or the run fails.
// autocannon, 100 connections, 10 s per target after a 2 s warm-up, in ROUNDS rounds whose order
// rotates (each target runs first, second and last once): this VM's speed drifts within minutes,
// so only figures of the same round are compared. Target: ours ≥ 0.95 of the peer's requests/s,
// the median of the rounds' ratios.
//   npx tsx bench/foundation.ts        (or: npm run bench -- foundation)
//   BENCH_FOUNDATION_SECONDS=2         shorter runs, for a smoke test (figures not comparable)
//   BENCH_FOUNDATION_ALL=1             also, each round: the peer writing its headers onto node's
//                                      response (as ours does), /api/health, /me with an API key, and
//                                      the floors of bench/floor-server.ts
//   BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"   node flags for our server
//   BENCH_PEER_NODE_ARGS=…             the same for the peer
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { cpuMs } from './helpers/common';

const CONNECTIONS = 100;
const SECONDS = Number(process.env.BENCH_FOUNDATION_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
const ROUNDS = 3;
const TARGET_RATIO = 0.95;
const ALL = process.env.BENCH_FOUNDATION_ALL === '1';
const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };
/** Our server's token issuer (its PUBLIC_URL), which the peer pins as ours does. */
const ISSUER = 'http://localhost:3000';

const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-foundation-'));
const children: ChildProcess[] = [];

const nodeArgsOf = (variable: string) => process.env[variable]?.split(' ').filter(Boolean);

/** Starts a child and waits for the first stdout line (or log-file line) that carries a port. */
async function startChild(args: string[], opts: { env?: Record<string, string>; logFile?: string; nodeArgs?: string[] }): Promise<{ port: number; pid: number }> {
  const logFd = opts.logFile ? openSync(opts.logFile, 'a') : undefined;
  // node itself with tsx as a loader (not the tsx CLI, which adds a process): the child's pid is
  // the server's, so its CPU time can be read.
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', ...args], {
    cwd: root,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', logFd ?? 'pipe', 'inherit'],
  });
  if (logFd !== undefined) closeSync(logFd);
  children.push(child);
  let exited = false;
  child.once('exit', () => (exited = true));
  const pid = child.pid!;

  if (!opts.logFile) {
    return new Promise((resolve, reject) => {
      let buffered = '';
      child.stdout!.on('data', (chunk) => {
        buffered += String(chunk);
        const match = /"port":(\d+)/.exec(buffered);
        if (match) resolve({ port: Number(match[1]), pid });
      });
      child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
    });
  }
  for (let i = 0; i < 600 && !exited; i++) {
    const match = /"port":(\d+)[^\n]*listening/.exec(readFileSync(opts.logFile, 'utf8'));
    if (match) return { port: Number(match[1]), pid };
    await sleep(50);
  }
  throw new Error(`${args[0]} did not start; see ${opts.logFile}`);
}

interface Target {
  name: string;
  server: { pid: number };
  url: string;
  headers?: Record<string, string>;
}

interface Figures {
  target: string;
  round: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** CPU time the server process spent per request: unlike req/s, barely moved by other load. */
  cpuUsPerRequest: number;
}

async function measure(t: Target, round: number): Promise<Figures> {
  const { url, headers = {} } = t;
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_SECONDS, headers });
  const cpuBefore = cpuMs(t.server.pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const cpu = cpuMs(t.server.pid) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${t.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const figures = {
    target: t.name,
    round,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuUsPerRequest: (cpu * 1000) / result.requests.total,
  };
  console.log(
    `  round ${round + 1} ${t.name}: ${Math.round(figures.rps)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, ` +
      `${figures.cpuUsPerRequest.toFixed(0)} µs CPU/request`,
  );
  return figures;
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Headers whose values differ from answer to answer by design. */
const VARYING = new Set(['date', 'x-request-id']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Fails unless the peer and ours answer `url` alike: status, body bytes, header names, the values of
 * every header but Date and X-Request-Id, a fresh UUID as request id (a caller's plain id echoed),
 * and a 401 without a credential. Then both logs' last access lines must hold the same fields.
 */
async function checkSameDuties(ours: string, peer: string, token: string, logs: { ours: string; peer: string }): Promise<void> {
  const problems: string[] = [];
  const get = async (base: string, headers: Record<string, string>) => {
    const res = await fetch(`${base}/api/users/me`, { headers });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };
  const auth = { Authorization: `Bearer ${token}` };
  const [a, b] = [await get(ours, auth), await get(peer, auth)];
  if (a.status !== 200 || b.status !== 200) problems.push(`status: ours ${a.status}, peer ${b.status}`);
  if (!a.body.equals(b.body)) problems.push(`body:\n    ours ${a.body.toString()}\n    peer ${b.body.toString()}`);
  const names = (h: Headers) => [...h.keys()].sort();
  if (names(a.headers).join() !== names(b.headers).join()) {
    problems.push(`header names:\n    ours ${names(a.headers).join(', ')}\n    peer ${names(b.headers).join(', ')}`);
  }
  for (const name of names(a.headers)) {
    if (!VARYING.has(name) && a.headers.get(name) !== b.headers.get(name)) {
      problems.push(`header ${name}: ours ${a.headers.get(name)}, peer ${b.headers.get(name)}`);
    }
  }
  for (const [who, r] of [['ours', a], ['peer', b]] as const) {
    if (!UUID.test(r.headers.get('x-request-id') ?? '')) problems.push(`${who}: X-Request-Id ${r.headers.get('x-request-id')} is no UUID`);
  }
  const given = 'bench-check-1';
  for (const [who, base] of [['ours', ours], ['peer', peer]] as const) {
    const r = await get(base, { ...auth, 'X-Request-Id': given });
    if (r.headers.get('x-request-id') !== given) problems.push(`${who}: a caller's X-Request-Id came back as ${r.headers.get('x-request-id')}`);
    const refused = await get(base, {});
    if (refused.status !== 401) problems.push(`${who}: without a credential ${refused.status}, not 401`);
  }
  // Both loggers write asynchronously: give the lines a moment to land.
  await sleep(500);
  const lastAccessLine = (file: string) => {
    const line = readFileSync(file, 'utf8').split('\n').findLast((l) => l.includes('"msg":"request"') && l.includes('"status":200'));
    return line ? Object.keys(JSON.parse(line) as object).sort().join(', ') : '(none)';
  };
  if (lastAccessLine(logs.ours) !== lastAccessLine(logs.peer)) {
    problems.push(`access-log fields:\n    ours ${lastAccessLine(logs.ours)}\n    peer ${lastAccessLine(logs.peer)}`);
  }
  if (problems.length > 0) throw new Error(`The peer and ours do not answer alike:\n  ${problems.join('\n  ')}`);
  console.log(`Same duties: body (${a.body.length} bytes), headers (${names(a.headers).join(', ')}) and access-log fields match.\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  console.log(`Foundation benchmark: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}`);
  console.log(`autocannon: ${CONNECTIONS} connections, ${SECONDS} s per target (after ${WARMUP_SECONDS} s warm-up), ${ROUNDS} rounds\n`);

  const hello = await startChild(['bench/hello-server.ts'], {});
  const logFile = path.join(dir, 'server.log');
  const dataDir = path.join(dir, 'data');
  const server = await startChild(['src/server.ts', '--port', '0', '--data-dir', dataDir], {
    env: { HOST: '127.0.0.1', LOG_LEVEL: 'info', PUBLIC_URL: ISSUER, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    logFile,
    nodeArgs: nodeArgsOf('BENCH_SERVER_NODE_ARGS'),
  });
  const base = `http://127.0.0.1:${server.port}`;
  const { access_token } = await json<{ access_token: string }>(
    await fetch(`${base}/api/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(ADMIN),
    }),
  );
  // Started once ours has its signing key and admin: the peer reads both from ours's file.
  const peerLog = path.join(dir, 'peer.log');
  const peer = await startChild(['bench/peer-hono-server.ts', path.join(dataDir, 'lms.sqlite'), ISSUER], {
    logFile: peerLog,
    nodeArgs: nodeArgsOf('BENCH_PEER_NODE_ARGS'),
  });
  const peerBase = `http://127.0.0.1:${peer.port}`;
  await checkSameDuties(base, peerBase, access_token, { ours: logFile, peer: peerLog });

  const jwt = { Authorization: `Bearer ${access_token}` };
  const BARE = 'bare node:http';
  const PEER = 'minimal Hono peer: GET /api/users/me (JWT)';
  const OURS = 'ours: GET /api/users/me (JWT)';
  const targets: Target[] = [
    { name: BARE, server: hello, url: `http://127.0.0.1:${hello.port}/` },
    { name: PEER, server: peer, url: `${peerBase}/api/users/me`, headers: jwt },
    { name: OURS, server, url: `${base}/api/users/me`, headers: jwt },
  ];
  if (ALL) {
    const { key } = await json<{ key: string }>(
      await fetch(`${base}/api/api-keys`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...jwt },
        body: JSON.stringify({ name: 'bench' }),
      }),
    );
    // The floors under an authenticated route (bench/floor-server.ts): Hono alone, then Hono with
    // this server's per-request middleware and a constant caller and answer.
    const honoFloor = await startChild(['bench/floor-server.ts', 'hono'], {});
    const middlewareFloor = await startChild(['bench/floor-server.ts', 'middleware'], {
      env: { LOG_LEVEL: 'info' },
      logFile: path.join(dir, 'floor.log'),
    });
    const nodePeerLog = path.join(dir, 'peer-node.log');
    const nodePeer = await startChild(['bench/peer-hono-server.ts', path.join(dataDir, 'lms.sqlite'), ISSUER, 'node'], { logFile: nodePeerLog });
    const nodePeerBase = `http://127.0.0.1:${nodePeer.port}`;
    await checkSameDuties(base, nodePeerBase, access_token, { ours: logFile, peer: nodePeerLog });
    targets.push(
      { name: "peer, headers written onto node's response as ours", server: nodePeer, url: `${nodePeerBase}/api/users/me`, headers: jwt },
      { name: 'floor: plain Hono, constant answer', server: honoFloor, url: `http://127.0.0.1:${honoFloor.port}/api/users/me` },
      {
        name: 'floor: + our per-request middleware, constant caller',
        server: middlewareFloor,
        url: `http://127.0.0.1:${middlewareFloor.port}/api/users/me`,
      },
      { name: 'ours: GET /api/health', server, url: `${base}/api/health` },
      { name: 'ours: GET /api/users/me (API key)', server, url: `${base}/api/users/me`, headers: { 'X-API-Key': key } },
    );
  }

  const results: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Round r starts with the r-th target: over three rounds each of the three runs first, second and last once.
    for (const t of targets.map((_, i) => targets[(i + round) % targets.length]!)) results.push(await measure(t, round));
  }

  const of = (name: string, round: number) => results.find((r) => r.target === name && r.round === round)!;
  const rounds = Array.from({ length: ROUNDS }, (_, i) => i);
  console.log('\n| Round | Target | req/s | vs bare | vs peer | p50 ms | p99 ms | server CPU µs/request |');
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const round of rounds) {
    const bare = of(BARE, round);
    const peerRow = of(PEER, round);
    for (const t of targets) {
      const r = of(t.name, round);
      console.log(
        `| ${round + 1} | ${r.target} | ${Math.round(r.rps)} | ${Math.round((r.rps / bare.rps) * 100)}% | ` +
          `${t.name === BARE ? '' : (r.rps / peerRow.rps).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.cpuUsPerRequest.toFixed(0)} |`,
      );
    }
  }
  console.log('\nMedians of the rounds:\n');
  console.log('| Target | req/s | p50 ms | p99 ms | server CPU µs/request |');
  console.log('|---|---:|---:|---:|---:|');
  for (const t of targets) {
    const rows = rounds.map((round) => of(t.name, round));
    const m = (f: (r: Figures) => number) => median(rows.map(f));
    console.log(`| ${t.name} | ${Math.round(m((r) => r.rps))} | ${m((r) => r.p50)} | ${m((r) => r.p99)} | ${m((r) => r.cpuUsPerRequest).toFixed(0)} |`);
  }

  const ratios = rounds.map((round) => {
    const [o, p] = [of(OURS, round), of(PEER, round)];
    return { rps: o.rps / p.rps, p99: o.p99 / p.p99, cpu: o.cpuUsPerRequest / p.cpuUsPerRequest };
  });
  const listed = (f: (r: (typeof ratios)[number]) => number) => `${median(ratios.map(f)).toFixed(2)} (rounds ${ratios.map((r) => f(r).toFixed(2)).join(' / ')})`;
  console.log(`\nOurs / peer, median of the rounds' ratios: req/s ${listed((r) => r.rps)}; p99 ${listed((r) => r.p99)}; CPU per request ${listed((r) => r.cpu)}`);
  const logLines = readFileSync(logFile, 'utf8').split('\n').length - 1;
  console.log(`Our server's log: ${logLines} lines, ${Math.round(statSync(logFile).size / 1024 / 1024)} MiB (one line per request)`);

  const ratio = median(ratios.map((r) => r.rps));
  const pass = ratio >= TARGET_RATIO;
  console.log(`${pass ? 'PASS' : 'MISS'} ${OURS}: ${ratio.toFixed(2)} of the minimal Hono peer's req/s (target ≥ ${TARGET_RATIO})`);
  if (!pass) process.exitCode = 1;
}

async function cleanUp(): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanUp);
