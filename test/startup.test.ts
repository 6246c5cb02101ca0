// Starting and recovering: the server takes its port before it creates the first admin, so a busy
// port costs nothing; every failure to start is one line on stderr and a non-zero exit; and
// `npm run admin` resets a lost password or creates an admin, with the server stopped or running.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openDatabase } from '../db/client';
import { createApp } from '../src/app';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { startHttpServer } from '../src/http-server';
import { systemClock } from '../src/lib/clock';
import { createLogger } from '../src/logger';
import { makeTestApp } from './helpers/app';
import { killChildren, runToEnd, signIn, startServer, tsx } from './helpers/server-process';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-startup-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  killChildren();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One line on stderr, no stack trace. */
function expectOneLine(stderr: string): void {
  expect(stderr.endsWith('\n'), stderr).toBe(true);
  expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
}

const startOn = (port: number | string, dataDir: string, env: Record<string, string> = {}) =>
  runToEnd(tsx, ['src/server.ts', '--port', String(port), '--data-dir', dataDir], { HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env });

const usersIn = (dataDir: string): number => {
  const db = new Database(path.join(dataDir, 'lms.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

/** The password the admin command printed once. */
const printedPassword = (stdout: string): string => {
  const match = /shown only this once:\s+(\S+)/.exec(stdout);
  expect(match, stdout).not.toBeNull();
  return match![1]!;
};

const adminEnv = { ADMIN_PASSWORD: '', SCRYPT_COST: '1024' };
/** The admin command as `npm run admin -- …` runs it (npm itself adds a second or so: used once). */
const admin = (args: string[], env: Record<string, string>) => runToEnd(tsx, ['scripts/admin.ts', ...args], { ...adminEnv, ...env });
const npmRunAdmin = (args: string[], env: Record<string, string>) =>
  runToEnd('npm', ['run', '--silent', 'admin', '--', ...args], { ...adminEnv, ...env });

// Each test runs the server or the command several times, a second or more each.
describe('a start that fails', { timeout: 90_000 }, () => {
  it('on a busy port: one line, exit 1, nothing created; the next start creates the admin from ADMIN_PASSWORD', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const dataDir = tempDir();
    try {
      const failed = await startOn(port, dataDir);
      expect(failed.code).toBe(1);
      expectOneLine(failed.stderr);
      expect(failed.stderr).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}.*already in use`));
      // No admin, so no one-time password printed and lost.
      expect(failed.stdout).not.toMatch(/generated password/);
      expect(usersIn(dataDir)).toBe(0);
    } finally {
      busy.close();
    }

    const server = await startServer(dataDir, { ADMIN_PASSWORD: 'chosen-password-1', SCRYPT_COST: '1024' });
    try {
      expect((await signIn(server.baseUrl, 'admin@example.com', 'chosen-password-1')).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('on a data folder that is a file, a database file that is not one, or a bad setting: one line naming it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const blocked = await startOn(0, path.join(file, 'data'));
    expect(blocked.code).toBe(1);
    expectOneLine(blocked.stderr);
    expect(blocked.stderr).toMatch(/data folder .*not-a-folder/);

    const garbage = tempDir();
    writeFileSync(path.join(garbage, 'lms.sqlite'), 'this is not a database, just some text that is long enough to be read');
    const unreadable = await startOn(0, garbage);
    expect(unreadable.code).toBe(1);
    expectOneLine(unreadable.stderr);
    expect(unreadable.stderr).toMatch(/lms\.sqlite: the file is not an SQLite database/);

    const badSettings = await startOn('eighty', tempDir(), { LOG_LEVEL: 'chatty' });
    expect(badSettings.code).toBe(2);
    expectOneLine(badSettings.stderr);
    expect(badSettings.stderr).toMatch(/PORT.*LOG_LEVEL/);

    const badFlag = await runToEnd(tsx, ['src/server.ts', '--prot', '80']);
    expect(badFlag.code).toBe(2);
    expectOneLine(badFlag.stderr);
    expect(badFlag.stderr).toMatch(/--prot/);
  });
});

describe('the port before the app', () => {
  it('answers 503 (and refuses WebSockets) until the app is attached, then serves it', async () => {
    const t = await makeTestApp();
    const running = await startHttpServer({ port: 0, host: '127.0.0.1', shutdownTimeoutMs: 1_000 });
    try {
      const base = `http://127.0.0.1:${running.port}`;
      const early = await fetch(`${base}/api/health`);
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).toBe('1');
      expect(await early.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
      const refused = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`ws://127.0.0.1:${running.port}/collab/${t.defaultTenantId}`);
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.on('error', () => resolve(-1));
      });
      expect(refused).toBe(503);

      running.attach(t.app);
      expect((await fetch(`${base}/api/health`)).status).toBe(200);
    } finally {
      await running.close();
      t.close();
    }
  });
});

describe('npm run admin', { timeout: 90_000 }, () => {
  it('reset-password while the server runs: the new password signs in; the old one and its sessions are done', async () => {
    const dataDir = tempDir();
    const server = await startServer(dataDir, { ADMIN_PASSWORD: '', SCRYPT_COST: '1024' });
    try {
      const first = /generated password\s+(\S+)/.exec(server.printed());
      expect(first, server.printed()).not.toBeNull();
      const before = await signIn(server.baseUrl, 'admin@example.com', first![1]!);
      expect(before.status).toBe(200);
      const { refresh_token } = (await before.json()) as { refresh_token: string };

      const reset = await npmRunAdmin(['reset-password', 'Admin@Example.com'], { DATA_DIR: dataDir });
      expect(reset.stderr).toBe('');
      expect(reset.code).toBe(0);
      expect(reset.stdout).toMatch(/admin@example\.com \(tenant default, admin\) reset/);
      const password = printedPassword(reset.stdout);

      expect((await signIn(server.baseUrl, 'admin@example.com', password)).status).toBe(200);
      expect((await signIn(server.baseUrl, 'admin@example.com', first![1]!)).status).toBe(401);
      const refreshed = await fetch(`${server.baseUrl}/api/auth/refresh`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ refresh_token }),
      });
      expect(refreshed.status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('with the server stopped: create-admin and reset-password by --data-dir, --tenant when the email is in several tenants; the app signs them in', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'lms.sqlite');
    const config = buildConfig({ scryptCost: 1024, logLevel: 'silent', adminPassword: 'first-password-1' });
    const open = async () => {
      const database = openDatabase(file);
      const deps = await buildDeps({ database, config, clock: systemClock, logger: createLogger('silent') });
      return { database, app: createApp(deps) };
    };
    const status = async (app: Awaited<ReturnType<typeof open>>['app'], body: object) =>
      (
        await app.request('/api/auth/token', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).status;

    // No database yet: refused, one line, and no empty database left behind.
    const missing = await admin(['reset-password', 'admin@example.com', '--data-dir', dataDir], {});
    expect(missing.code).toBe(1);
    expectOneLine(missing.stderr);
    expect(missing.stderr).toMatch(/No database at/);

    // A first start (as the server makes it), then a second tenant whose admin has the same email.
    const started = await open();
    const second = await admin(['create-admin', 'admin@example.com', '--tenant', 'default', '--data-dir', dataDir], {});
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/already has an account in tenant default/);
    started.database.sqlite.prepare("INSERT INTO tenants (id, name, slug, created_at) VALUES ('0192f6a4-7b1c-7c3e-8e5a-3f1d2c4b5a70', 'Second', 'second', '2026-01-01T00:00:00.000Z')").run();
    started.database.close();
    const created = await admin(['create-admin', 'admin@example.com', '--tenant', 'second', '--name', 'Second admin', '--data-dir', dataDir], {
      ADMIN_PASSWORD: 'second-password-1',
    });
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/Admin admin@example\.com created in tenant second/);

    const ambiguous = await admin(['reset-password', 'admin@example.com', '--data-dir', dataDir], {});
    expect(ambiguous.code).toBe(1);
    expectOneLine(ambiguous.stderr);
    expect(ambiguous.stderr).toMatch(/several tenants \(default, second\).*--tenant/);

    const reset = await admin(['reset-password', 'admin@example.com', '--tenant', 'default'], { DATA_DIR: dataDir });
    expect(reset.code).toBe(0);
    const password = printedPassword(reset.stdout);

    const { database, app } = await open();
    try {
      expect(await status(app, { email: 'admin@example.com', password, tenant: 'default' })).toBe(200);
      expect(await status(app, { email: 'admin@example.com', password: 'first-password-1', tenant: 'default' })).toBe(401);
      expect(await status(app, { email: 'admin@example.com', password: 'second-password-1', tenant: 'second' })).toBe(200);
    } finally {
      database.close();
    }

    const usage = await admin(['rename', 'x@example.com'], {});
    expect(usage.code).toBe(2);
    expectOneLine(usage.stderr);
  });
});
