// docs/deployment.md's nginx configuration, run for real (nginx from the system's packages, its own
// prefix, configuration and pid file in a temporary folder, a generated certificate, a free port on
// 127.0.0.1) in front of the real server with TRUST_PROXY=127.0.0.1: REST and a live-editing
// WebSocket over TLS, and each client (connecting from its own loopback address) counted on its
// own by the sign-in rate limit and named in the access log, whatever X-Forwarded-For it sends.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { eventually } from './helpers/collab';
import { killChildren, root, startServer, type RunningServer } from './helpers/server-process';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((candidate) => existsSync(candidate));
const ADMIN = { email: 'proxy-admin@example.org', password: 'proxy-password-1' };

let dir: string;
let server: RunningServer;
let nginxPort: number;
let nginxConf: string;

/** The first ```nginx block of docs/deployment.md, pointed at this test's ports and certificate. */
function configFromDocs(serverPort: number, port: number, cert: string, key: string): string {
  const doc = readFileSync(path.join(root, 'docs', 'deployment.md'), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/deployment.md has no nginx block');
  const replacements: [RegExp, string][] = [
    [/server 127\.0\.0\.1:3000;/, `server 127.0.0.1:${serverPort};`],
    [/listen 443 ssl( http2)?;/, `listen 127.0.0.1:${port} ssl$1;`],
    [/\n\s*listen \[::\]:443 ssl( http2)?;/, ''],
    [/ssl_certificate\s+\S+;/, `ssl_certificate ${cert};`],
    [/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${key};`],
  ];
  let config = block;
  for (const [pattern, replacement] of replacements) {
    if (!pattern.test(config)) throw new Error(`docs/deployment.md's nginx block no longer has ${pattern}`);
    config = config.replace(pattern, replacement);
  }
  return config;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const nginx = (...args: string[]) => spawnSync(NGINX!, ['-p', dir, '-c', nginxConf, ...args], { encoding: 'utf8' });

beforeAll(async () => {
  if (!NGINX) throw new Error('nginx is missing: install it (Debian/Ubuntu: apt-get install nginx); CI installs it');
  dir = mkdtempSync(path.join(tmpdir(), 'lms-nginx-'));
  // nginx's workers may run as another user: they read the folder.
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'logs'));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', key, '-out', cert], { stdio: 'ignore' });

  server = await startServer(path.join(dir, 'data'), {
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    SCRYPT_COST: '1024',
    TRUST_PROXY: '127.0.0.1',
    SIGN_IN_MAX_FAILURES_PER_IP: '3',
    WEBHOOK_ALLOW_HTTP: 'true',
  });
  nginxPort = await freePort();
  nginxConf = path.join(dir, 'nginx.conf');
  writeFileSync(
    nginxConf,
    `daemon on;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 256; }
http {
  access_log ${dir}/logs/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${configFromDocs(Number(new URL(server.baseUrl).port), nginxPort, cert, key)}
}
`,
  );
  const started = nginx();
  if (started.status !== 0) throw new Error(`nginx did not start: ${started.stderr}`);
}, 60_000);

afterAll(async () => {
  if (dir && existsSync(path.join(dir, 'nginx.pid'))) nginx('-s', 'stop');
  // SIGTERM, which tsx passes on to the server (a SIGKILL of tsx would leave the server running).
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  killChildren();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An HTTPS request to nginx from the loopback address `from` (each is another client). */
function call(from: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: nginxPort,
        localAddress: from,
        method,
        path: route,
        rejectUnauthorized: false,
        headers: { ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** y-websocket's client over TLS to a self-signed certificate. */
class InsecureWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols, { rejectUnauthorized: false });
  }
}

describe('behind nginx (docs/deployment.md)', () => {
  it('serves REST over TLS, and the server warned at start of WEBHOOK_ALLOW_HTTP (an alias of OUTBOUND_ALLOW_HTTP)', async () => {
    const health = await call('127.0.0.1', 'GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBeDefined();
    expect(server.logs.some((l) => l.level === 40 && l.setting === 'OUTBOUND_ALLOW_HTTP')).toBe(true);
  });

  it('limits failed sign-ins per real client and logs its address, whatever it puts in X-Forwarded-For', async () => {
    const wrong = { email: ADMIN.email, password: 'wrong-password' };
    for (let i = 0; i < 3; i++) {
      expect((await call('127.0.0.2', 'POST', '/api/auth/token', wrong, { 'X-Forwarded-For': `198.51.100.${i}` })).status).toBe(401);
    }
    expect((await call('127.0.0.2', 'POST', '/api/auth/token', ADMIN, { 'X-Forwarded-For': '198.51.100.77' })).status).toBe(429);
    // Another client behind the same proxy signs in.
    const other = await call('127.0.0.3', 'POST', '/api/auth/token', ADMIN);
    expect(other.status).toBe(200);
    const signIns = () => server.logs.filter((l) => l.msg === 'request' && l.path === '/api/auth/token');
    // The access line is written as the answer ends, and reaches this process a moment later.
    await eventually(() => signIns().length >= 5, 10_000, 'the access-log lines');
    const lines = signIns();
    expect(lines.filter((l) => l.ip === '127.0.0.2')).toHaveLength(4);
    expect(lines.filter((l) => l.ip === '127.0.0.3')).toHaveLength(1);
    expect(lines.some((l) => String(l.ip).startsWith('198.51.100.'))).toBe(false);
  });

  it('carries live editing over a WebSocket through the proxy', async () => {
    const signedIn = await call('127.0.0.4', 'POST', '/api/auth/token', ADMIN);
    const token = signedIn.body.access_token as string;
    const created = await call('127.0.0.4', 'POST', '/api/documents', { title: 'Through nginx' }, { Authorization: `Bearer ${token}` });
    expect(created.status).toBe(201);
    const open = () => {
      const doc = new Y.Doc();
      const provider = new WebsocketProvider(`wss://127.0.0.1:${nginxPort}/collab`, created.body.id, doc, {
        params: { token },
        WebSocketPolyfill: InsecureWebSocket as unknown as typeof globalThis.WebSocket,
        disableBc: true,
      });
      return { doc, provider };
    };
    const writer = open();
    const reader = open();
    try {
      await eventually(() => writer.provider.synced && reader.provider.synced, 15_000, 'both editors synced through nginx');
      writer.doc.getText('content').insert(0, 'Hello through the proxy');
      await eventually(() => reader.doc.getText('content').toString() === 'Hello through the proxy', 10_000, 'the edit reached the other editor');
      const read = await call('127.0.0.4', 'GET', `/api/documents/${created.body.id}?include=content`, undefined, { Authorization: `Bearer ${token}` });
      expect(read.body.content).toBe('Hello through the proxy');
    } finally {
      writer.provider.destroy();
      reader.provider.destroy();
    }
  });
});
