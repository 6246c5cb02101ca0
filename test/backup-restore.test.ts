// Backup and restore as an operator runs them, against the real server process: a backup taken
// during continuous live edits (real y-websocket clients) and REST writes, restored with
// `npm run restore` into a fresh data directory, passes integrity_check and holds every edit and
// write acknowledged before the backup began; the backup command beside a running server; restore
// refused while a server holds the data directory, and for damaged or newer-schema files; a
// database of a newer schema refused at start; the first log line.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { connectEditor, eventually, synced, type Editor } from './helpers/collab';
import { expectOneLine, killChildren, root, runToEnd, signIn, startServer, tsx, type RunningServer } from './helpers/server-process';

const ADMIN = { ADMIN_EMAIL: 'ops@example.org', ADMIN_PASSWORD: 'ops-password-1', SCRYPT_COST: '1024' };
const dirs: string[] = [];
const editors: Editor[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-restore-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const editor of editors) editor.destroy();
  killChildren();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const restore = (from: string, dataDir: string) => runToEnd(tsx, [path.join(root, 'scripts/restore.ts'), '--from', from, '--data-dir', dataDir]);
const backupCommand = (dataDir: string, args: string[] = [], env: Record<string, string> = {}) =>
  runToEnd(tsx, [path.join(root, 'scripts/backup.ts'), '--data-dir', dataDir, ...args], env);

async function tokenOf(server: RunningServer): Promise<string> {
  const res = await signIn(server.baseUrl, ADMIN.ADMIN_EMAIL, ADMIN.ADMIN_PASSWORD);
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function api(server: RunningServer, token: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${server.baseUrl}${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

/** SIGTERM, straight to the server process (see serverCommand): a graceful stop, exit code 0. */
async function stop(server: RunningServer): Promise<void> {
  server.child.kill('SIGTERM');
  const { code, signal } = await server.exited;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
}

const integrity = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
};

describe('backup during live edits and REST writes, restored into a fresh server', { timeout: 120_000 }, () => {
  it('passes integrity_check and holds every edit and write acknowledged before the backup began', async () => {
    const dataDir = tempDir();
    const server = await startServer(dataDir, ADMIN);
    const first = server.logs[0]!;
    expect(first.msg).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+ \(version \d+\.\d+\.\d+\)$/);
    expect(first).toMatchObject({
      version: expect.any(String),
      port: expect.any(Number),
      dataDir,
      databaseBytes: expect.any(Number),
      features: { collab: true, pdf_export: expect.any(Boolean), metrics: false },
    });
    expect(first.databaseBytes).toBeGreaterThan(0);
    const port = Number(new URL(server.baseUrl).port);
    const token = await tokenOf(server);

    // Some bulk, so that the copy takes several steps while the edits go on. Four documents: each
    // y-websocket provider listens for the process's exit, and Node warns past ten listeners.
    const documents: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await api(server, token, 'POST', '/api/documents', { title: `Doc ${i}`, content: `${'lorem ipsum '.repeat(60_000)}\n` });
      expect(created.status).toBe(201);
      documents.push(created.body.id);
    }
    // A writer and an observer per document: an edit the observer has received was broadcast,
    // which the server does only once it is durable.
    const pairs = documents.map((id) => {
      const writer = connectEditor(port, id, token);
      const observer = connectEditor(port, id, token);
      editors.push(writer, observer);
      return { id, writer, observer, sent: [] as string[] };
    });
    await Promise.all(pairs.flatMap((p) => [synced(p.writer), synced(p.observer)]));
    let editing = true;
    let n = 0;
    const typing = (async () => {
      while (editing) {
        for (const pair of pairs) {
          const marker = `[edit ${++n}]`;
          pair.writer.text.insert(0, marker);
          pair.sent.push(marker);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const groups: string[] = [];
    const restWrites = (async () => {
      for (let i = 0; editing; i++) {
        const res = await api(server, token, 'POST', '/api/groups', { name: `group ${i}` });
        expect(res.status).toBe(201);
        groups.push(res.body.id);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 500));

    // What is acknowledged now must be in the backup.
    const acknowledgedEdits = pairs.map((p) => ({ id: p.id, markers: p.sent.filter((m) => p.observer.text.toString().includes(m)) }));
    const acknowledgedGroups = [...groups];
    expect(acknowledgedEdits.every((a) => a.markers.length > 0)).toBe(true);
    const backup = await api(server, token, 'POST', '/api/admin/backup');
    expect(backup.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    editing = false;
    await Promise.all([typing, restWrites]);
    // The server kept serving both while the backup was written.
    const written = server.logs.find((l) => l.msg === 'backup written');
    expect(written).toMatchObject({ bytes: backup.body.bytes, sha256: backup.body.sha256 });
    for (const pair of pairs) await eventually(() => pair.observer.text.toString() === pair.writer.text.toString(), 10_000, 'observers to converge');
    for (const editor of editors.splice(0)) editor.destroy();
    await stop(server);

    const file = path.join(dataDir, 'backups', backup.body.file);
    expect(integrity(file)).toBe('ok');
    const fresh = tempDir();
    const restored = await restore(file, fresh);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^Restored /);
    expect(readdirSync(fresh).sort()).toEqual(['lms.lock', 'lms.sqlite']);
    expect(integrity(path.join(fresh, 'lms.sqlite'))).toBe('ok');

    const again = await startServer(fresh, ADMIN);
    try {
      const token2 = await tokenOf(again);
      for (const { id, markers } of acknowledgedEdits) {
        const doc = await api(again, token2, 'GET', `/api/documents/${id}?include=content`);
        expect(doc.status).toBe(200);
        const missing = markers.filter((m) => !(doc.body.content as string).includes(m));
        expect(missing, `document ${id}`).toEqual([]);
      }
      for (const id of acknowledgedGroups) expect((await api(again, token2, 'GET', `/api/groups/${id}`)).status).toBe(200);
    } finally {
      await stop(again);
    }
  });
});

describe('the backup command beside a running server, and restore refusals', { timeout: 120_000 }, () => {
  it('backs up a running server; restore refuses while it runs, then swaps the file in and keeps the old one', async () => {
    const dataDir = tempDir();
    const server = await startServer(dataDir, ADMIN);
    const token = await tokenOf(server);
    const created = await api(server, token, 'POST', '/api/documents', { title: 'Before the backup', content: 'kept' });
    expect(created.status).toBe(201);

    const out = path.join(tempDir(), 'nightly.sqlite');
    const taken = await backupCommand(dataDir, ['--out', out]);
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toMatch(/^Backup written: .*nightly\.sqlite \(\d+ bytes, sha256 [0-9a-f]{64}\)\n$/);
    expect(integrity(out)).toBe('ok');
    expect((await backupCommand(dataDir, ['--out', out])).code).toBe(1);
    // Without --out: into DATA_DIR/backups, the BACKUP_KEEP newest kept.
    for (let i = 0; i < 3; i++) expect((await backupCommand(dataDir, [], { BACKUP_KEEP: '2' })).code).toBe(0);
    expect(readdirSync(path.join(dataDir, 'backups')).filter((n) => n.endsWith('.sqlite'))).toHaveLength(2);

    const afterBackup = await api(server, token, 'POST', '/api/documents', { title: 'After the backup' });
    expect(afterBackup.status).toBe(201);

    const refused = await restore(out, dataDir);
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr);
    // The server's own pid: the test started node itself (serverCommand), no launcher in between.
    expect(refused.stderr).toContain(`in use by a server (pid ${server.child.pid}, since `);
    expect(refused.stderr).toMatch(/stop the server first/);
    await stop(server);

    const done = await restore(out, dataDir);
    expect(done.code, done.stderr).toBe(0);
    const kept = readdirSync(dataDir).filter((n) => n.startsWith('lms.sqlite.before-restore-'));
    expect(kept).toHaveLength(1);
    expect(integrity(path.join(dataDir, kept[0]!))).toBe('ok');
    expect(existsSync(path.join(dataDir, 'lms.sqlite-wal'))).toBe(false);

    const again = await startServer(dataDir, ADMIN);
    try {
      const token2 = await tokenOf(again);
      expect((await api(again, token2, 'GET', `/api/documents/${created.body.id}`)).status).toBe(200);
      expect((await api(again, token2, 'GET', `/api/documents/${afterBackup.body.id}`)).status).toBe(404);
    } finally {
      await stop(again);
    }
  });

  it('refuses a file that is not a sound database of this server, or of a newer schema, and changes nothing', async () => {
    const dataDir = tempDir();
    const current = openDatabase(path.join(dataDir, 'lms.sqlite'));
    current.close();
    const other = tempDir();
    const text = path.join(other, 'notes.sqlite');
    writeFileSync(text, 'not a database at all, but long enough to be read as a header of one');
    const foreign = path.join(other, 'foreign.sqlite');
    const foreignDb = new Database(foreign);
    foreignDb.exec('CREATE TABLE x (y)');
    foreignDb.close();
    const newer = path.join(other, 'newer.sqlite');
    const newerDb = openDatabase(newer);
    newerDb.sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('f'.repeat(64), 4_102_444_800_000);
    newerDb.sqlite.pragma('journal_mode = DELETE');
    newerDb.close();
    const damaged = path.join(other, 'damaged.sqlite');
    const good = openDatabase(damaged);
    good.sqlite.pragma('journal_mode = DELETE');
    good.close();
    // Overwrite a page in the middle: a b-tree page the integrity check reads.
    const bytes = readFileSync(damaged);
    bytes.fill(0x41, 4096 * 5, 4096 * 5 + 2048);
    writeFileSync(damaged, bytes);

    // One after another: each holds the data directory while it runs.
    const results = [];
    for (const f of [text, foreign, newer, damaged, path.join(other, 'missing.sqlite')]) results.push(await restore(f, dataDir));
    const [notDb, notOurs, fromNewer, broken, missing] = results;
    for (const r of results) {
      expect(r.code, r.stderr).toBe(1);
      expectOneLine(r.stderr);
    }
    expect(notDb!.stderr).toMatch(/not a sound SQLite database|cannot be opened/);
    expect(notOurs!.stderr).toMatch(/not a database of this server/);
    expect(fromNewer!.stderr).toMatch(/newer version of the server/);
    expect(broken!.stderr).toMatch(/integrity_check|not a sound SQLite database/);
    expect(missing!.stderr).toMatch(/No file at/);
    expect(readdirSync(dataDir).sort()).toEqual(['lms.lock', 'lms.sqlite']);
  });
});

describe('a database of a newer schema', { timeout: 60_000 }, () => {
  it('refuses to start with one line and leaves the file as it was', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'lms.sqlite');
    const db = openDatabase(file);
    db.sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('e'.repeat(64), 4_102_444_800_000);
    const applied = (db.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n;
    db.close();

    const started = await runToEnd(tsx, ['src/server.ts', '--port', '0', '--data-dir', dataDir], { HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    expect(started.code).toBe(1);
    expectOneLine(started.stderr);
    expect(started.stderr).toMatch(/schema is newer than this version of the server knows/);
    expect(started.stdout).not.toMatch(/listening/);
    const after = new Database(file, { readonly: true });
    try {
      expect((after.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(applied);
      expect(after.prepare('SELECT count(*) AS n FROM users').get()).toEqual({ n: 0 });
    } finally {
      after.close();
    }
  });

  it('a second server on a data directory in use refuses to start', async () => {
    const dataDir = tempDir();
    const server = await startServer(dataDir, ADMIN);
    try {
      const second = await runToEnd(tsx, ['src/server.ts', '--port', '0', '--data-dir', dataDir], { HOST: '127.0.0.1' });
      expect(second.code).toBe(1);
      expectOneLine(second.stderr);
      expect(second.stderr).toMatch(/in use by a server/);
    } finally {
      await stop(server);
    }
  });
});
