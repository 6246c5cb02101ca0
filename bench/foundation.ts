// Foundation benchmark (issue 3): the real server (its own process, temp data dir, port 0,
// LOG_LEVEL=info with its log going to a file) against a bare node:http hello world (its own
// process) as the ceiling. autocannon, 100 connections, 10 s per target after a short warm-up:
// `GET /api/health`, `GET /api/users/me` with an access JWT, the same with an API key; and two
// floors under that route (bench/floor-server.ts): plain Hono answering a constant, and Hono with
// this server's per-request middleware, a constant caller and the same constant.
// Target: the authenticated endpoint at ≥ 50% of the bare requests/s, p99 < 20 ms.
//   npx tsx bench/foundation.ts        (or: npm run bench -- foundation)
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { cpuMs } from './helpers/common';

const CONNECTIONS = 100;
const SECONDS = 10;
const WARMUP_SECONDS = 2;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 20;
const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };

const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-foundation-'));
const children: ChildProcess[] = [];

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

interface Figures {
  target: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** CPU time the server process spent per request: unlike req/s, barely moved by other load. */
  cpuUsPerRequest: number;
}

async function measure(target: string, server: { pid: number }, url: string, headers: Record<string, string> = {}): Promise<Figures> {
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_SECONDS, headers });
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const cpu = cpuMs(server.pid) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${target}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const figures = {
    target,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuUsPerRequest: (cpu * 1000) / result.requests.total,
  };
  console.log(
    `  ${target}: ${Math.round(figures.rps)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, ` +
      `${figures.cpuUsPerRequest.toFixed(0)} µs CPU/request`,
  );
  return figures;
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function main(): Promise<void> {
  console.log(`Foundation benchmark: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}`);
  console.log(`autocannon: ${CONNECTIONS} connections, ${SECONDS} s per target (after ${WARMUP_SECONDS} s warm-up)\n`);

  const hello = await startChild(['bench/hello-server.ts'], {});
  // The floors under an authenticated route (bench/floor-server.ts): Hono alone, then Hono with
  // this server's per-request middleware and a constant caller and answer.
  const honoFloor = await startChild(['bench/floor-server.ts', 'hono'], {});
  const middlewareFloor = await startChild(['bench/floor-server.ts', 'middleware'], {
    env: { LOG_LEVEL: 'info' },
    logFile: path.join(dir, 'floor.log'),
  });
  const logFile = path.join(dir, 'server.log');
  const server = await startChild(['src/server.ts', '--port', '0', '--data-dir', path.join(dir, 'data')], {
    env: { HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    logFile,
    // BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server.
    nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean),
  });
  const base = `http://127.0.0.1:${server.port}`;

  const { access_token } = await json<{ access_token: string }>(
    await fetch(`${base}/api/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(ADMIN),
    }),
  );
  const { key } = await json<{ key: string }>(
    await fetch(`${base}/api/api-keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ name: 'bench' }),
    }),
  );

  // The ceiling is measured before and after, so that a busy machine shows as a spread.
  const bareUrl = `http://127.0.0.1:${hello.port}/`;
  const bareBefore = await measure('bare node:http (before)', hello, bareUrl);
  const floorPath = '/api/users/me';
  const hono = await measure('floor: plain Hono, constant answer', honoFloor, `http://127.0.0.1:${honoFloor.port}${floorPath}`);
  const middleware = await measure(
    'floor: + our per-request middleware, constant caller',
    middlewareFloor,
    `http://127.0.0.1:${middlewareFloor.port}${floorPath}`,
  );
  const health = await measure('GET /api/health', server, `${base}/api/health`);
  const jwt = await measure('GET /api/users/me (JWT)', server, `${base}/api/users/me`, { Authorization: `Bearer ${access_token}` });
  const apiKey = await measure('GET /api/users/me (API key)', server, `${base}/api/users/me`, { 'X-API-Key': key });
  const bareAfter = await measure('bare node:http (after)', hello, bareUrl);

  const ceiling = (bareBefore.rps + bareAfter.rps) / 2;
  const rows = [bareBefore, bareAfter, hono, middleware, health, jwt, apiKey];
  console.log('\n| Target | req/s | vs bare | p50 ms | p99 ms | server CPU µs/request |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.target} | ${Math.round(r.rps)} | ${Math.round((r.rps / ceiling) * 100)}% | ${r.p50} | ${r.p99} | ${r.cpuUsPerRequest.toFixed(0)} |`,
    );
  }
  const logLines = readFileSync(logFile, 'utf8').split('\n').length - 1;
  console.log(`\nServer log: ${logLines} lines, ${Math.round(statSync(logFile).size / 1024 / 1024)} MiB (one line per request)`);

  let ok = true;
  for (const r of [jwt, apiKey]) {
    const ratio = r.rps / ceiling;
    const pass = ratio >= TARGET_RATIO && r.p99 < TARGET_P99_MS;
    ok &&= pass;
    console.log(
      `${pass ? 'PASS' : 'MISS'} ${r.target}: ${Math.round(ratio * 100)}% of bare (target ≥ ${TARGET_RATIO * 100}%), ` +
        `p99 ${r.p99} ms (target < ${TARGET_P99_MS} ms)`,
    );
  }
  if (!ok) process.exitCode = 1;
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
