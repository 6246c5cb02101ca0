// POST /api/admin/backup and the backup files: the platform operator only (401, 403), a complete
// and sound copy under DATA_DIR/backups answered with its name, size and checksum, the rotation
// of BACKUP_KEEP, one backup at a time (409), a shutdown during a backup (503, nothing kept under
// any name), and the data-directory lock that keeps a restore from running beside a server.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { dataDirectoryHolder, lockDataDirectory, DataDirectoryBusyError } from '../db/data-dir-lock';
import { Backups } from '../src/backup/service';
import { BackupAbortedError, rotateBackups, sweepPartials, writeBackup } from '../src/backup/files';
import { checkBackupFile, RestoreRefusedError, restoreBackup } from '../src/backup/restore';
import { expectProblem, expectUnauthorized, makeTestApp, type TestApp } from './helpers/app';
import { createDoc } from './helpers/documents';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-backup-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const integrity = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true });
  } finally {
    db.close();
  }
};

describe('POST /api/admin/backup', () => {
  let t: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDir();
    t = await makeTestApp({ config: { dataDir, backupKeep: 2 } });
  });
  afterAll(() => t.close());

  it('is for the platform operator alone: 401 without a credential, 403 for members and tenant admins', async () => {
    expectUnauthorized(await t.call('POST', '/api/admin/backup'));
    expectProblem(await t.call('POST', '/api/admin/backup', { as: await t.newUser() }), 403, 'forbidden');
    expectProblem(await t.call('POST', '/api/admin/backup', { as: await t.newUser({ role: 'admin' }) }), 403, 'forbidden');
    const other = await t.newTenant('backup-other');
    expectProblem(await t.call('POST', '/api/admin/backup', { as: other.admin }), 403, 'forbidden');
    expect(existsSync(path.join(dataDir, 'backups'))).toBe(false);
  });

  it('writes a sound copy holding everything written before, answered with its name, size and checksum', async () => {
    const doc = await createDoc(t, t.admin, { title: 'Backed up', content: 'the body to keep' });
    const res = await t.call('POST', '/api/admin/backup', { as: t.admin });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      file: expect.stringMatching(/^lms-\d{8}T\d{9}Z\.sqlite$/),
      bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: t.clock.now().toISOString(),
    });
    const file = path.join(dataDir, 'backups', res.body.file);
    const bytes = readFileSync(file);
    expect(bytes.byteLength).toBe(res.body.bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(res.body.sha256);
    expect(integrity(file)).toBe('ok');
    // One file: not in WAL mode, no -wal beside it to lose.
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      expect(copy.prepare('SELECT title FROM documents WHERE id = ?').get(doc.id)).toEqual({ title: 'Backed up' });
    } finally {
      copy.close();
    }
    expect(checkBackupFile(file)).toMatchObject({ unknown: 0 });
  });

  it('keeps the BACKUP_KEEP newest backups', async () => {
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(60_000);
      const res = await t.call('POST', '/api/admin/backup', { as: t.admin });
      expect(res.status, res.text).toBe(200);
      names.push(res.body.file);
    }
    // Each with its checksum beside it; the rotation removes both.
    expect(readdirSync(path.join(dataDir, 'backups')).sort()).toEqual(names.slice(1).flatMap((n) => [n, `${n}.sha256`]).sort());
  });

  it('takes one backup at a time: another request meanwhile is a 409', async () => {
    // Small steps, so that the first backup is still being written when the second request comes.
    const original = t.deps.backups;
    t.deps.backups = new Backups({ sqlite: t.deps.sqlite, dataDir, keep: 2, clock: t.clock, logger: t.deps.logger, pagesPerStep: 1 });
    try {
      const first = t.call('POST', '/api/admin/backup', { as: t.admin });
      await new Promise((resolve) => setImmediate(resolve));
      expect(t.deps.backups.inProgress).toBe(true);
      expectProblem(await t.call('POST', '/api/admin/backup', { as: t.admin }), 409, 'conflict');
      expect((await first).status).toBe(200);
    } finally {
      t.deps.backups = original;
    }
  });

  it('stopped by a shutdown: the request is a 503 and no file is left, under the final name or any other', async () => {
    const folder = tempDir();
    t.deps.backups = new Backups({ sqlite: t.deps.sqlite, dataDir: folder, keep: 2, clock: t.clock, logger: t.deps.logger, pagesPerStep: 1 });
    const request = t.call('POST', '/api/admin/backup', { as: t.admin });
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.deps.backups.inProgress).toBe(true);
    // What the server's SIGTERM handler does first.
    await t.deps.backups.stop();
    expectProblem(await request, 503, 'service_unavailable');
    expect(readdirSync(path.join(folder, 'backups'))).toEqual([]);
  });
});

describe('backup files', () => {
  it('a stopped copy leaves nothing; a partial file of a killed process is swept by the next backup', async () => {
    const dir = tempDir();
    const source = new Database(':memory:');
    source.exec('CREATE TABLE t (x BLOB)');
    const insert = source.prepare('INSERT INTO t VALUES (randomblob(4000))');
    for (let i = 0; i < 500; i++) insert.run();
    const controller = new AbortController();
    const target = path.join(dir, 'copy.sqlite');
    // One page per step (~500 steps, each its own event-loop turn): stopped once the partial file
    // exists, whatever the machine's speed.
    const copying = writeBackup(source, target, { pagesPerStep: 1, signal: controller.signal });
    const stopOnceStarted = () => {
      if (readdirSync(dir).some((name) => name.endsWith('.partial'))) controller.abort();
      else setImmediate(stopOnceStarted);
    };
    setImmediate(stopOnceStarted);
    await expect(copying).rejects.toBeInstanceOf(BackupAbortedError);
    await expect(copying).rejects.toMatchObject({ target });
    expect(readdirSync(dir)).toEqual([]);

    // A process killed mid-copy (pid 2^22 + 1 is above Linux's pid_max: never alive).
    writeFileSync(path.join(dir, '.copy.sqlite.4194305.partial'), 'half a database');
    const done = await writeBackup(source, target);
    expect(readdirSync(dir).sort()).toEqual(['copy.sqlite', 'copy.sqlite.sha256']);
    expect(done.bytes).toBeGreaterThan(500 * 4000);
    expect(integrity(target)).toBe('ok');
    source.close();
  });

  it('rotation keeps the newest by the time in their names, and 0 keeps them all', () => {
    const dir = tempDir();
    const names = ['lms-20261125T031500000Z.sqlite', 'lms-20261125T031500000Z-2.sqlite', 'lms-20261126T031500000Z.sqlite', 'notes.txt'];
    for (const name of names) writeFileSync(path.join(dir, name), 'x');
    expect(rotateBackups(dir, 0)).toEqual([]);
    expect(rotateBackups(dir, 2).sort()).toEqual(['lms-20261125T031500000Z.sqlite']);
    expect(readdirSync(dir).sort()).toEqual(['lms-20261125T031500000Z-2.sqlite', 'lms-20261126T031500000Z.sqlite', 'notes.txt']);
    sweepPartials(path.join(dir, 'missing'));
  });
});

describe('restore: the checksum beside the file, and the database opened as the server would', () => {
  let backup: string;
  let sha256: string;
  beforeAll(async () => {
    const dataDir = tempDir();
    const t = await makeTestApp({ config: { dataDir } });
    const res = await t.call('POST', '/api/admin/backup', { as: t.admin });
    expect(res.status, res.text).toBe(200);
    backup = path.join(dataDir, 'backups', res.body.file);
    sha256 = res.body.sha256;
    t.close();
  });

  /** A data directory with a database of its own, and what its files hold now. */
  async function liveDirectory() {
    const dataDir = tempDir();
    const t = await makeTestApp({ config: { dataDir } });
    t.close();
    const live = openDatabase(path.join(dataDir, 'lms.sqlite'));
    live.sqlite.pragma('journal_mode = DELETE');
    live.close();
    // (The lock file a restore takes aside.)
    const state = () =>
      readdirSync(dataDir)
        .filter((name) => name !== 'lms.lock')
        .sort()
        .map((name) => [name, createHash('sha256').update(readFileSync(path.join(dataDir, name))).digest('hex')]);
    return { dataDir, before: state(), state };
  }

  /** A copy of the backup with one character of the active signing key's private part changed: a sound SQLite file. */
  function withRottenKey(checksum: 'kept' | 'recomputed' | 'none'): string {
    const file = path.join(tempDir(), 'rotten.sqlite');
    const bytes = readFileSync(backup);
    const at = bytes.indexOf('"d":"') + 10;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    writeFileSync(file, bytes);
    expect(integrity(file)).toBe('ok');
    const digest = checksum === 'kept' ? sha256 : createHash('sha256').update(bytes).digest('hex');
    if (checksum !== 'none') writeFileSync(`${file}.sha256`, `${digest}  rotten.sqlite\n`);
    return file;
  }

  it('the backup writes its SHA-256 beside it, as sha256sum does', () => {
    expect(readFileSync(`${backup}.sha256`, 'utf8')).toBe(`${sha256}  ${path.basename(backup)}\n`);
  });

  it('refuses a file whose bytes no longer match the SHA-256 beside it (bit rot integrity_check cannot see), the live database untouched', async () => {
    const live = await liveDirectory();
    await expect(restoreBackup(withRottenKey('kept'), live.dataDir)).rejects.toThrow(/does not match the SHA-256 written beside it/);
    expect(live.state()).toEqual(live.before);
  });

  it('refuses, saying why, a file the server could not start on (a signing key that does not parse) even when its checksum matches', async () => {
    const live = await liveDirectory();
    const refused = restoreBackup(withRottenKey('recomputed'), live.dataDir);
    await expect(refused).rejects.toBeInstanceOf(RestoreRefusedError);
    await expect(refused).rejects.toThrow(/the server could not start on it: .*signing key/);
    expect(live.state()).toEqual(live.before);
  });

  it('refuses a file with no checksum beside it unless told to go on without one; a sound file is then restored', async () => {
    const live = await liveDirectory();
    const bare = path.join(tempDir(), 'bare.sqlite');
    writeFileSync(bare, readFileSync(backup));
    await expect(restoreBackup(bare, live.dataDir)).rejects.toThrow(/no checksum beside it/);
    expect(live.state()).toEqual(live.before);
    await expect(restoreBackup(withRottenKey('none'), live.dataDir, new Date(), { withoutChecksum: true })).rejects.toThrow(/signing key/);
    expect(live.state()).toEqual(live.before);
    const restored = await restoreBackup(bare, live.dataDir, new Date(), { withoutChecksum: true });
    expect(integrity(restored.database)).toBe('ok');
    expect(readdirSync(live.dataDir).filter((name) => !name.startsWith('lms.sqlite.before-restore-')).sort()).toEqual(['lms.lock', 'lms.sqlite']);
  });
});

describe('the data-directory lock', () => {
  it('is held until released; a holder that is gone (a stale pid in the file) does not block', () => {
    const dir = tempDir();
    expect(dataDirectoryHolder(dir)).toBeNull();
    const lock = lockDataDirectory(dir, 'a server');
    try {
      expect(dataDirectoryHolder(dir)).toMatchObject({ pid: process.pid, what: 'a server' });
      expect(() => lockDataDirectory(dir, 'a restore')).toThrow(DataDirectoryBusyError);
    } finally {
      lock.release();
    }
    // The file still names this pid, but nobody holds the lock.
    expect(dataDirectoryHolder(dir)).toBeNull();
    const stale = new Database(path.join(dir, 'lms.lock'));
    stale.prepare('UPDATE holder SET pid = 4194305').run();
    stale.close();
    expect(dataDirectoryHolder(dir)).toBeNull();
  });

  it('keeps a restore from running while it is held, and the database from being touched', async () => {
    const dataDir = tempDir();
    const t = await makeTestApp({ config: { dataDir } });
    const res = await t.call('POST', '/api/admin/backup', { as: t.admin });
    const backup = path.join(dataDir, 'backups', res.body.file);
    t.close();
    const lock = lockDataDirectory(dataDir, 'a server');
    try {
      await expect(restoreBackup(backup, dataDir)).rejects.toThrow(/in use by a server \(pid \d+/);
      expect(existsSync(path.join(dataDir, 'lms.sqlite'))).toBe(false);
    } finally {
      lock.release();
    }
    const restored = await restoreBackup(backup, dataDir);
    expect(restored.previous).toBeNull();
    expect(integrity(restored.database)).toBe('ok');
    await expect(restoreBackup(path.join(dataDir, 'missing.sqlite'), dataDir)).rejects.toBeInstanceOf(RestoreRefusedError);
  });
});
