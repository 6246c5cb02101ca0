// `npm run admin`: resets a lost password or creates an admin, with the server stopped or running
// (the same SQLite file in WAL mode), and refuses anything unclear in one line.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { createApp } from '../src/app';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { systemClock } from '../src/lib/clock';
import { createLogger } from '../src/logger';
import { expectOneLine, killChildren, runToEnd, signIn, startServer, tsx } from './helpers/server-process';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-admin-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  killChildren();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

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
describe('npm run admin', { timeout: 90_000 }, () => {
  it('reset-password while the server runs: the new password signs in; the old one and its sessions are done', async () => {
    const dataDir = tempDir();
    const server = await startServer(dataDir, { ADMIN_PASSWORD: '', SCRYPT_COST: '1024' });
    try {
      // The first start's password is in the data folder, not on the console.
      const passwordFile = path.join(dataDir, 'initial-admin-password');
      const first = readFileSync(passwordFile, 'utf8').trim();
      expect(server.printed()).toContain(passwordFile);
      expect(server.printed()).not.toContain(first);
      const before = await signIn(server.baseUrl, 'admin@example.com', first);
      expect(before.status).toBe(200);
      // Gone with the first sign-in of that admin.
      expect(existsSync(passwordFile)).toBe(false);
      const { refresh_token } = (await before.json()) as { refresh_token: string };

      const reset = await npmRunAdmin(['reset-password', 'Admin@Example.com'], { DATA_DIR: dataDir });
      expect(reset.stderr).toBe('');
      expect(reset.code).toBe(0);
      expect(reset.stdout).toMatch(/admin@example\.com \(tenant default, admin\) reset/);
      const password = printedPassword(reset.stdout);

      expect((await signIn(server.baseUrl, 'admin@example.com', password)).status).toBe(200);
      expect((await signIn(server.baseUrl, 'admin@example.com', first)).status).toBe(401);
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

    // No database yet: refused, one line, and no empty database left behind. (A wrong command
    // line, beside it.)
    const [missing, usage] = await Promise.all([
      admin(['reset-password', 'admin@example.com', '--data-dir', dataDir], {}),
      admin(['rename', 'x@example.com'], {}),
    ]);
    expect(usage.code).toBe(2);
    expectOneLine(usage.stderr);
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
  });
});
