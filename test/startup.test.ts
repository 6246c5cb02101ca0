// Starting: the server takes its port before it creates the first admin, so a busy port costs
// nothing, and every failure to start is one line on stderr and a non-zero exit.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startHttpServer } from '../src/http-server';
import { SERVER_NODE_FLAGS } from '../src/node-flags';
import { makeTestApp } from './helpers/app';
import { expectOneLine, killChildren, runToEnd, signIn, startServer, tsx } from './helpers/server-process';

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

describe('npm start', () => {
  it('runs Node with the flags the server is benchmarked with (src/node-flags.ts)', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(`exec node ${SERVER_NODE_FLAGS.join(' ')} scripts/start.mjs`);
    expect(scripts.dev).toBe(`tsx watch ${SERVER_NODE_FLAGS.join(' ')} src/server.ts`);
  });

  it('loads the heavy libraries of exports, mail, SAML and course imports when first used, not at start', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/helpers/packages-child.ts'], { timeout: 60_000 });
    const loaded = JSON.parse(stdout) as string[];
    // The hook sees the packages the app does load at start.
    expect(loaded).toEqual(expect.arrayContaining(['hono', 'yjs', 'drizzle-orm', 'better-sqlite3']));
    for (const lazy of ['docx', 'nodemailer', '@node-saml/node-saml', 'sanitize-html', 'turndown', 'fast-xml-parser', 'puppeteer-core']) {
      expect(loaded, lazy).not.toContain(lazy);
    }
  });
});

// Each test runs the server several times, a second or more each.
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
    const garbage = tempDir();
    writeFileSync(path.join(garbage, 'lms.sqlite'), 'this is not a database, just some text that is long enough to be read');
    // Independent starts, run side by side: each costs a second or more.
    const [blocked, unreadable, badSettings, badFlag] = await Promise.all([
      startOn(0, path.join(file, 'data')),
      startOn(0, garbage),
      startOn('eighty', tempDir(), { LOG_LEVEL: 'chatty' }),
      runToEnd(tsx, ['src/server.ts', '--prot', '80']),
    ]);

    expect(blocked.code).toBe(1);
    expectOneLine(blocked.stderr);
    expect(blocked.stderr).toMatch(/data folder .*not-a-folder/);

    expect(unreadable.code).toBe(1);
    expectOneLine(unreadable.stderr);
    expect(unreadable.stderr).toMatch(/lms\.sqlite: the file is not an SQLite database/);

    expect(badSettings.code).toBe(2);
    expectOneLine(badSettings.stderr);
    expect(badSettings.stderr).toMatch(/PORT.*LOG_LEVEL/);

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
