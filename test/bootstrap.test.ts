// First start: the default tenant and its admin (the platform operator) are created once, from
// ADMIN_EMAIL/ADMIN_PASSWORD or with a generated password written once to a file only the server's
// user can read (the console says where, not what); never again afterwards.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database_ } from '../db/client';
import { systemState, tenants, users } from '../db/schema';
import { createApp } from '../src/app';
import { ManualClock } from '../src/lib/clock';
import { buildConfig, type ConfigInput } from '../src/config';
import { buildDeps } from '../src/deps';
import { createLogger } from '../src/logger';

const dirs: string[] = [];
const opened: Database_[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const db of opened.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-bootstrap-'));
  dirs.push(dir);
  return dir;
}

function tempDbFile(): string {
  return path.join(tempDir(), 'lms.sqlite');
}

function open(file: string): Database_ {
  const database = openDatabase(file);
  opened.push(database);
  return database;
}

function captureLog() {
  const lines: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _e, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return { logger, lines };
}

async function start(database: Database_, config: ConfigInput, logger = createLogger('silent')) {
  const deps = await buildDeps({ database, config: buildConfig({ scryptCost: 1024, dataDir: tempDir(), ...config }), clock: new ManualClock(), logger });
  return { deps, app: createApp(deps) };
}

async function signIn(app: Awaited<ReturnType<typeof start>>['app'], email: string, password: string) {
  const res = await app.request('/api/auth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return res.status;
}

describe('first-start bootstrap', () => {
  it('creates the default tenant and its platform admin from ADMIN_EMAIL/ADMIN_PASSWORD', async () => {
    const database = open(':memory:');
    const { deps, app } = await start(database, { adminEmail: 'Owner@Example.org', adminPassword: 'owner-password' });
    const rows = deps.db.select().from(users).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ email: 'owner@example.org', role: 'admin', isPlatformAdmin: true });
    expect(deps.db.select().from(tenants).all().map((t) => t.slug)).toEqual(['default']);
    expect(await signIn(app, 'owner@example.org', 'owner-password')).toBe(200);
  });

  it('runs once: a second start on the same database creates no second admin and keeps the password', async () => {
    const file = tempDbFile();
    const first = open(file);
    const one = await start(first, { adminEmail: 'owner@example.org', adminPassword: 'owner-password' });
    const jwks = one.deps.signer.jwks();
    first.close();

    const second = open(file);
    const { deps, app } = await start(second, { adminEmail: 'owner@example.org', adminPassword: 'changed-in-env' });
    expect(deps.db.select().from(users).all()).toHaveLength(1);
    expect(deps.db.select().from(tenants).all()).toHaveLength(1);
    expect(await signIn(app, 'owner@example.org', 'owner-password')).toBe(200);
    expect(await signIn(app, 'owner@example.org', 'changed-in-env')).toBe(401);
    // The signing key generated at first start is kept, so earlier tokens stay valid.
    expect(deps.signer.jwks()).toEqual(jwks);
  });

  it('runs once on the very same database handle too', async () => {
    const database = open(':memory:');
    await start(database, { adminEmail: 'owner@example.org', adminPassword: 'owner-password' });
    const { deps } = await start(database, { adminEmail: 'someone.else@example.org', adminPassword: 'other-password' });
    expect(deps.db.select({ email: users.email }).from(users).all()).toEqual([{ email: 'owner@example.org' }]);
  });

  it('never re-creates the admin, even when the admin account was renamed away', async () => {
    const database = open(':memory:');
    const { deps } = await start(database, { adminEmail: 'owner@example.org', adminPassword: 'owner-password' });
    deps.db.update(users).set({ email: 'renamed@example.org' }).run();
    const again = await start(database, { adminEmail: 'owner@example.org', adminPassword: 'owner-password' });
    expect(again.deps.db.select({ email: users.email }).from(users).all()).toEqual([{ email: 'renamed@example.org' }]);
    expect(again.deps.db.select().from(systemState).all().map((r) => r.key)).toContain('bootstrapped_at');
  });

  it('without ADMIN_PASSWORD: generates one into a 0600 file in the data folder, says where but never what, and removes the file at the first sign-in', async () => {
    const printed: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    const { logger, lines } = captureLog();
    const database = open(':memory:');
    const dataDir = tempDir();
    const { app } = await start(database, { dataDir }, logger);
    const file = path.join(dataDir, 'initial-admin-password');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = readFileSync(file, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(20);
    const output = printed.join('');
    expect(output).toContain(file);
    expect(output).toContain('admin@example.com');
    expect(output).not.toContain(password);
    expect(lines.join('')).not.toContain(password);
    expect(lines.join('')).toContain('created the default tenant and its admin');
    vi.restoreAllMocks();

    // A failed sign-in, or another account's, leaves the file.
    expect(await signIn(app, 'admin@example.com', 'not-the-password')).toBe(401);
    expect(existsSync(file)).toBe(true);
    expect(await signIn(app, 'admin@example.com', password)).toBe(200);
    expect(existsSync(file)).toBe(false);
    expect(await signIn(app, 'admin@example.com', password)).toBe(200);

    // A second start prints nothing, writes no file and logs no creation.
    const later: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      later.push(String(chunk));
      return true;
    });
    const second = captureLog();
    await start(database, { dataDir }, second.logger);
    expect(later.join('')).toBe('');
    expect(existsSync(file)).toBe(false);
    expect(second.lines.join('')).not.toContain('created the default tenant');
  });

  it('with ADMIN_PASSWORD: no file', async () => {
    const dataDir = tempDir();
    await start(open(':memory:'), { dataDir, adminPassword: 'chosen-password' });
    expect(existsSync(path.join(dataDir, 'initial-admin-password'))).toBe(false);
  });

  it('a data folder that cannot take the file fails the start before anyone is created', async () => {
    const database = open(':memory:');
    await expect(start(database, { dataDir: path.join(tempDir(), 'missing', 'folder') })).rejects.toThrow(/ENOENT/);
    expect(database.db.select().from(users).all()).toEqual([]);
  });

  it('generates a different password on each fresh database', async () => {
    const passwords: string[] = [];
    for (let i = 0; i < 2; i++) {
      const printed: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        printed.push(String(chunk));
        return true;
      });
      const dataDir = tempDir();
      await start(open(':memory:'), { dataDir });
      vi.restoreAllMocks();
      passwords.push(readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8'));
    }
    expect(passwords[0]).not.toBe(passwords[1]);
  });
});
