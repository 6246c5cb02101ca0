// Metrics on the REST hot path (issue 27): the real server with METRICS_TOKEN set against the same
// server without it, `GET /api/users/me` with an access JWT, in one run. Each server runs in its own
// process on 127.0.0.1 with its own data directory, LOG_LEVEL=info (the access log on, as in
// production) to a file. While the metrics server is measured, /metrics is scraped every
// SCRAPE_SECONDS (more often than Prometheus usually does), so the figure includes collecting.
// autocannon, 100 connections, 10 s per target after a 2 s warm-up, in ROUNDS rounds whose order
// alternates (this VM's speed drifts within minutes: only figures of the same round are compared).
// Target: metrics on ≥ 0.95 of metrics off in requests/s, the median of the rounds' ratios; the CPU
// time per request is reported beside it (less moved by other load than req/s).
//   npx tsx bench/metrics.ts        (or: npm run bench -- metrics)
//   BENCH_METRICS_SECONDS=2         shorter runs, for a smoke test (figures not comparable)
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { cpuMs } from './helpers/common';
import { SERVER_NODE_FLAGS } from '../src/node-flags';

const CONNECTIONS = 100;
const SECONDS = Number(process.env.BENCH_METRICS_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
const ROUNDS = 4;
const SCRAPE_SECONDS = 5;
const TARGET_RATIO = 0.95;
const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

const root = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-metrics-'));
const children: ChildProcess[] = [];

interface Server {
  name: string;
  pid: number;
  base: string;
  token: string;
  scrape: boolean;
}

async function startServer(name: string, env: Record<string, string>): Promise<Server> {
  const logFile = path.join(dir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  // node itself with tsx as a loader (not the tsx CLI, which adds a process): the child's pid is the server's.
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'src/server.ts', '--port', '0', '--data-dir', path.join(dir, name)], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ...env },
    stdio: ['ignore', fd, 'inherit'],
  });
  closeSync(fd);
  children.push(child);
  for (let i = 0; i < 600 && child.exitCode === null; i++) {
    const match = /"port":(\d+)[^\n]*listening/.exec(readFileSync(logFile, 'utf8'));
    if (match) {
      const base = `http://127.0.0.1:${match[1]}`;
      const res = await fetch(`${base}/api/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ADMIN) });
      const { access_token } = (await res.json()) as { access_token: string };
      return { name, pid: child.pid!, base, token: access_token, scrape: env.METRICS_TOKEN !== undefined };
    }
    await sleep(50);
  }
  throw new Error(`${name} did not start; see ${logFile}`);
}

interface Figures {
  rps: number;
  p99: number;
  cpuUsPerRequest: number;
  scrapes: number;
}

async function measure(server: Server, round: number): Promise<Figures> {
  const opts = { url: `${server.base}/api/users/me`, connections: CONNECTIONS, headers: { Authorization: `Bearer ${server.token}` } };
  await autocannon({ ...opts, duration: WARMUP_SECONDS });
  let scrapes = 0;
  const scraper = server.scrape
    ? setInterval(() => {
        void fetch(`${server.base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } }).then(async (res) => {
          await res.text();
          if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
          scrapes += 1;
        });
      }, SCRAPE_SECONDS * 1000)
    : undefined;
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({ ...opts, duration: SECONDS });
  const cpu = cpuMs(server.pid) - cpuBefore;
  clearInterval(scraper);
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const figures = { rps: result.requests.average, p99: result.latency.p99, cpuUsPerRequest: (cpu * 1000) / result.requests.total, scrapes };
  console.log(
    `  round ${round + 1} ${server.name}: ${Math.round(figures.rps)} req/s, p99 ${figures.p99} ms, ` +
      `${figures.cpuUsPerRequest.toFixed(1)} µs CPU/request${server.scrape ? `, ${scrapes} scrapes` : ''}`,
  );
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  console.log(`Metrics hot-path benchmark: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}`);
  console.log(`autocannon: ${CONNECTIONS} connections, ${SECONDS} s per server (after ${WARMUP_SECONDS} s warm-up), ${ROUNDS} rounds, /metrics scraped every ${SCRAPE_SECONDS} s\n`);
  const on = await startServer('metrics-on', { METRICS_TOKEN });
  const off = await startServer('metrics-off', {});
  const check = await fetch(`${on.base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  if (check.status !== 200) throw new Error(`/metrics of the metrics server answered ${check.status}`);
  if ((await fetch(`${off.base}/metrics`)).status !== 404) throw new Error('/metrics of the server without METRICS_TOKEN is not 404');

  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const rows: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [on, off] : [off, on];
    const figures = new Map<Server, Figures>();
    for (const server of order) figures.set(server, await measure(server, round));
    const a = figures.get(on)!;
    const b = figures.get(off)!;
    ratios.push(a.rps / b.rps);
    cpuRatios.push(a.cpuUsPerRequest / b.cpuUsPerRequest);
    rows.push(
      `| ${round + 1} | ${order.map((s) => s.name.replace('metrics-', '')).join(' then ')} | ${Math.round(a.rps)} | ${Math.round(b.rps)} | ` +
        `${(a.rps / b.rps).toFixed(3)} | ${a.p99} / ${b.p99} | ${a.cpuUsPerRequest.toFixed(1)} / ${b.cpuUsPerRequest.toFixed(1)} |`,
    );
  }
  // The exposition's size after the run, for the record.
  const exposition = await (await fetch(`${on.base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  console.log('\n| round | order | on req/s | off req/s | on / off | p99 ms on / off | CPU µs/request on / off |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  const ratio = median(ratios);
  console.log(
    `\nmedian on/off: ${ratio.toFixed(3)} in requests/s, ${median(cpuRatios).toFixed(3)} in CPU per request; ` +
      `exposition ${exposition.length} bytes, ${exposition.split('\n').filter((l) => l && !l.startsWith('#')).length} samples`,
  );
  console.log(`target ≥ ${TARGET_RATIO} of metrics off: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}`);
  process.exitCode = ratio >= TARGET_RATIO ? 0 : 1;
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  for (const child of children) child.kill('SIGTERM');
  await sleep(500);
  rmSync(dir, { recursive: true, force: true });
}
