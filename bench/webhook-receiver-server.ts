// Bench helper, not a benchmark: the webhook receiver of bench/webhooks.ts in its own process (so
// that the load generator beside the benchmark does not slow its answers), on 127.0.0.1, port 0.
// Answers every POST with 204 and notes when each webhook-id first reached each path (ms since the
// epoch, sub-millisecond, comparable across processes). GET /status: distinct ids per path; GET
// /report: the arrival times; POST /reset forgets them. Prints `{"port":N}` once listening.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const now = () => performance.timeOrigin + performance.now();
let arrivals = new Map<string, Map<string, number>>();
let requests = 0;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method === 'POST' && req.url !== '/reset') {
      const id = String(req.headers['webhook-id']);
      const seen = arrivals.get(req.url ?? '') ?? new Map<string, number>();
      arrivals.set(req.url ?? '', seen);
      if (!seen.has(id)) seen.set(id, now());
      requests++;
      res.writeHead(204).end();
      return;
    }
    if (req.url === '/reset') {
      arrivals = new Map();
      requests = 0;
      res.writeHead(204).end();
      return;
    }
    const body =
      req.url === '/report'
        ? Object.fromEntries([...arrivals].map(([path, seen]) => [path, Object.fromEntries(seen)]))
        : { requests, distinct: Object.fromEntries([...arrivals].map(([path, seen]) => [path, seen.size])) };
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
