// The real server as a child process on port 0: it starts, answers over HTTP, shuts down cleanly
// on SIGTERM and SIGINT (exit 0), and a second start on the same data directory keeps the first admin.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { children, killChildren, root, signIn, startServer, tsx, type RunningServer } from './helpers/server-process';

const ADMIN = { email: 'operator@example.org', password: 'operator-password-1' };

async function waitForLog(server: RunningServer, match: (line: Record<string, any>) => boolean): Promise<void> {
  for (let i = 0; i < 200 && !server.logs.some(match); i++) await sleep(50);
  if (!server.logs.some(match)) throw new Error('expected log line did not come');
}

async function stop(server: RunningServer, signal: NodeJS.Signals = 'SIGTERM') {
  server.child.kill(signal);
  return server.exited;
}

describe('the real server', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'lms-server-'));
  });
  afterAll(() => {
    killChildren();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts on port 0, serves a signed-in user over HTTP, and exits 0 on SIGTERM', async () => {
    const server = await startServer(dataDir, { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    expect(server.logs.some((l) => l.msg === 'created the default tenant and its admin')).toBe(true);

    const health = await fetch(`${server.baseUrl}/api/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { checks: { database: string } }).checks.database).toBe('ok');

    const tokenRes = await signIn(server.baseUrl, ADMIN.email, ADMIN.password);
    expect(tokenRes.status).toBe(200);
    const { access_token } = (await tokenRes.json()) as { access_token: string };

    const me = await fetch(`${server.baseUrl}/api/users/me`, { headers: { Authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { email: string }).email).toBe(ADMIN.email);

    // The node fast path of the standard headers: on answers and on errors alike.
    const unauthorized = await fetch(`${server.baseUrl}/api/users/me`, { headers: { 'X-Request-Id': 'trace-me-42' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
    expect(unauthorized.headers.get('x-request-id')).toBe('trace-me-42');
    for (const res of [me, unauthorized, await fetch(`${server.baseUrl}/nowhere`)]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-site');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }

    // Over a real socket the body checks see the announced length.
    const tooBig = await fetch(`${server.baseUrl}/api/groups`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(tooBig.status).toBe(413);
    const notJson = await fetch(`${server.baseUrl}/api/groups`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access_token}`, 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expect(notJson.status).toBe(415);

    // One JSON line per request, without the credential.
    const requestLines = server.logs.filter((l) => l.msg === 'request');
    expect(requestLines.find((l) => l.requestId === 'trace-me-42')).toMatchObject({ method: 'GET', path: '/api/users/me', status: 401 });
    expect(requestLines.find((l) => l.path === '/api/users/me' && l.status === 200)).toMatchObject({ userId: expect.any(String) });
    // Every line carries an ISO 8601 UTC time.
    for (const line of server.logs) expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(JSON.stringify(server.logs)).not.toContain(access_token);
    expect(JSON.stringify(server.logs)).not.toContain(ADMIN.password);

    // A request still uploading its body when SIGTERM arrives is finished, not cut off; new
    // connections are refused meanwhile.
    const inFlight = request(`${server.baseUrl}/api/groups`, {
      method: 'POST',
      agent: false,
      headers: { Authorization: `Bearer ${access_token}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      inFlight.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => (body += String(chunk)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      inFlight.on('error', reject);
    });
    inFlight.write('{"name": "in flight');
    await sleep(300);
    server.child.kill('SIGTERM');
    await waitForLog(server, (l) => /shutting down/.test(l.msg));
    await expect(fetch(`${server.baseUrl}/api/health`)).rejects.toThrow();
    inFlight.end(' group"}');
    const { status, body } = await answered;
    expect(status).toBe(201);
    expect(JSON.parse(body)).toMatchObject({ name: 'in flight group' });

    const { code, signal } = await server.exited;
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(server.logs.some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('refuses to start with a bad setting, naming it, and exits 2', async () => {
    const child = spawn(tsx, ['src/server.ts', '--port', 'eighty', '--data-dir', dataDir], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'chatty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    children.delete(child);
    expect(code).toBe(2);
    expect(stderr).toMatch(/PORT/);
    expect(stderr).toMatch(/LOG_LEVEL/);
  });

  it('a second start on the same data directory keeps the first admin and does not create another; SIGINT stops it cleanly', async () => {
    const server = await startServer(dataDir, { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: 'a-different-password' });
    try {
      expect(server.logs.some((l) => l.msg === 'created the default tenant and its admin')).toBe(false);
      expect((await signIn(server.baseUrl, ADMIN.email, 'a-different-password')).status).toBe(401);
      const tokenRes = await signIn(server.baseUrl, ADMIN.email, ADMIN.password);
      expect(tokenRes.status).toBe(200);
      const { access_token } = (await tokenRes.json()) as { access_token: string };
      const admins = await fetch(`${server.baseUrl}/api/users?role=admin`, { headers: { Authorization: `Bearer ${access_token}` } });
      expect(((await admins.json()) as { pagination: { total: number } }).pagination.total).toBe(1);
    } finally {
      // Ctrl-C in a terminal: the same graceful shutdown as SIGTERM, down to the closed database.
      const { code, signal } = await stop(server, 'SIGINT');
      expect(signal).toBeNull();
      expect(code).toBe(0);
      expect(server.logs.some((l) => /shutting down/.test(l.msg) && l.signal === 'SIGINT')).toBe(true);
      expect(server.logs.at(-1)?.msg).toBe('stopped');
    }
  });
});
