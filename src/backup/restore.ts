// Restoring a backup into a data directory no server holds: the file is checked (an SQLite
// database whose PRAGMA integrity_check is ok, at a migration level this code knows), copied next
// to the database under a temporary name, and swapped in with one rename; the database it replaces
// is kept beside it (lms.sqlite.before-restore-<time>), never deleted.
import { copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { lockDataDirectory } from '../../db/data-dir-lock';
import { isNewerSchema, migrationLevel, type MigrationLevel } from '../../db/migration-level';
import { DATABASE_FILE, databaseFile } from '../config';
import { writeBackup } from './files';

export class RestoreRefusedError extends Error {}

export interface RestoreResult {
  database: string;
  bytes: number;
  level: MigrationLevel;
  /** Where the database that was there is kept; null when there was none. */
  previous: string | null;
}

/** Throws RestoreRefusedError unless `file` is a sound database at a migration level this code knows. */
export function checkBackupFile(file: string): MigrationLevel {
  if (!existsSync(file)) throw new RestoreRefusedError(`No file at ${file}`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new RestoreRefusedError(`${file} cannot be opened as an SQLite database: ${(err as Error).message}`);
  }
  try {
    let problems: string[];
    try {
      problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    } catch (err) {
      throw new RestoreRefusedError(`${file} is not a sound SQLite database: ${(err as Error).message}`);
    }
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new RestoreRefusedError(`${file} fails PRAGMA integrity_check: ${problems.slice(0, 3).join('; ')}`);
    }
    const level = migrationLevel(db);
    if (level.applied === 0) throw new RestoreRefusedError(`${file} is not a database of this server (it has no migrations)`);
    if (isNewerSchema(level)) {
      throw new RestoreRefusedError(
        `${file} comes from a newer version of the server (${level.applied} migrations applied, ${level.unknown} unknown here; ` +
          `this version has ${level.known}): restore it with that version`,
      );
    }
    return level;
  } finally {
    db.close();
  }
}

const stamp = (at: Date) => at.toISOString().replace(/[-:.]/g, '');

/**
 * Restores `from` into `dataDir`. Holds the data directory meanwhile (DataDirectoryBusyError if a
 * server or another restore holds it).
 */
export async function restoreBackup(from: string, dataDir: string, now = new Date()): Promise<RestoreResult> {
  mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDirectory(dataDir, 'a restore', now);
  try {
    const level = checkBackupFile(from);
    const target = databaseFile({ dataDir });
    if (path.resolve(from) === path.resolve(target)) throw new RestoreRefusedError(`${from} is the database itself`);
    // Copied through the backup API: a file with a -wal beside it is copied whole, and the copy is
    // in its own folder's file system, so the swap below is one rename.
    const source = new Database(from, { readonly: true, fileMustExist: true });
    const incoming = path.join(dataDir, `.${DATABASE_FILE}.restoring`);
    try {
      await writeBackup(source, incoming);
    } finally {
      source.close();
    }
    const previous = existsSync(target) ? `${target}.before-restore-${stamp(now)}` : null;
    try {
      if (previous) setAside(target, previous);
      // The old database's -wal and -shm are set aside with it; none may be left to pair with the new file.
      renameSync(incoming, target);
    } catch (err) {
      rmSync(incoming, { force: true });
      throw err;
    }
    return { database: target, bytes: statSync(target).size, level, previous };
  } finally {
    lock.release();
  }
}

/**
 * Keeps the current database under `aside`: its write-ahead log folded in first (so one file
 * holds it all), then a second name for it (a hard link, or a copy), leaving `target` in place
 * until the rename that replaces it: at no moment is there no database.
 */
function setAside(target: string, aside: string): void {
  try {
    const old = new Database(target, { fileMustExist: true });
    try {
      old.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      old.close();
    }
  } catch {
    // A damaged database cannot be checkpointed: its -wal and -shm go aside with it as they are.
  }
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${aside}${suffix}`);
  }
  try {
    linkSync(target, aside);
  } catch {
    copyFileSync(target, aside);
  }
}
