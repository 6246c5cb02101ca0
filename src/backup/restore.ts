// Restoring a backup into a data directory no server holds: the file is checked (the SHA-256 the
// backup wrote beside it, then an SQLite database whose PRAGMA integrity_check is ok, at a
// migration level this code knows), copied next to the database under a temporary name, opened
// there as the server opens its database (migrated, its signing keys loaded), and only then
// swapped in with one rename; the database it replaces is kept beside it
// (lms.sqlite.before-restore-<time>), never deleted. A refusal leaves the live database as it was.
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { importJWK, type JWK } from 'jose';
import { openDatabase } from '../../db/client';
import { lockDataDirectory } from '../../db/data-dir-lock';
import { isNewerSchema, migrationLevel, type MigrationLevel } from '../../db/migration-level';
import { signingKeys } from '../../db/schema';
import { ACCESS_TOKEN_ALG, TokenSigner } from '../auth/tokens';
import { DATABASE_FILE, databaseFile } from '../config';
import { systemClock } from '../lib/clock';
import { checksumFile, sha256Of, writeBackup } from './files';

export class RestoreRefusedError extends Error {}

export interface RestoreResult {
  database: string;
  bytes: number;
  level: MigrationLevel;
  /** Where the database that was there is kept; null when there was none. */
  previous: string | null;
}

export interface RestoreOptions {
  /** Restore a file that has no FILE.sha256 beside it (a backup of an older version, a copy made by hand). */
  withoutChecksum?: boolean;
}

/** Throws RestoreRefusedError unless `file` has the SHA-256 written beside it by the backup. */
export async function verifyChecksum(file: string, options: RestoreOptions = {}): Promise<void> {
  if (!existsSync(file)) throw new RestoreRefusedError(`No file at ${file}`);
  const beside = checksumFile(file);
  if (!existsSync(beside)) {
    if (options.withoutChecksum) return;
    throw new RestoreRefusedError(
      `${file} has no checksum beside it (${beside}), so damage to its bytes could not be seen; ` +
        'restore it anyway with --without-checksum, if you trust it',
    );
  }
  const expected = /^([0-9a-f]{64})\b/i.exec(readFileSync(beside, 'utf8'))?.[1]?.toLowerCase();
  if (!expected) throw new RestoreRefusedError(`${beside} does not hold a SHA-256`);
  const actual = await sha256Of(file);
  if (actual !== expected) {
    throw new RestoreRefusedError(
      `${file} does not match the SHA-256 written beside it when the backup was taken (${expected}, now ${actual}): the file has changed since`,
    );
  }
}

/**
 * Opens `file` as the server opens its database (migrations applied, the access-token signing keys
 * loaded, each public key imported), so that a backup the server could not start on is refused
 * here, saying why, rather than found out at the next start. Left in rollback-journal mode, one file.
 */
async function openAsTheServerWould(file: string): Promise<void> {
  let database;
  try {
    database = openDatabase(file);
  } catch (err) {
    throw new RestoreRefusedError(`the server could not start on it: ${(err as Error).message}`);
  }
  try {
    try {
      await TokenSigner.load(database.db, { issuer: 'restore-check', ttlSeconds: 60, clock: systemClock });
      for (const key of database.db.select({ kid: signingKeys.kid, publicJwk: signingKeys.publicJwk }).from(signingKeys).all()) {
        await importJWK(JSON.parse(key.publicJwk) as JWK, ACCESS_TOKEN_ALG).catch((err: Error) => {
          throw new Error(`the public key ${key.kid}: ${err.message}`);
        });
      }
    } catch (err) {
      throw new RestoreRefusedError(`the server could not start on it: a signing key of access tokens does not load (${(err as Error).message})`);
    }
    database.sqlite.pragma('journal_mode = DELETE');
  } finally {
    database.close();
  }
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
export async function restoreBackup(from: string, dataDir: string, now = new Date(), options: RestoreOptions = {}): Promise<RestoreResult> {
  mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDirectory(dataDir, 'a restore', now);
  try {
    const level = checkBackupFile(from);
    const target = databaseFile({ dataDir });
    if (path.resolve(from) === path.resolve(target)) throw new RestoreRefusedError(`${from} is the database itself`);
    await verifyChecksum(from, options);
    // Copied through the backup API: a file with a -wal beside it is copied whole, and the copy is
    // in its own folder's file system, so the swap below is one rename.
    const source = new Database(from, { readonly: true, fileMustExist: true });
    const incoming = path.join(dataDir, `.${DATABASE_FILE}.restoring`);
    try {
      await writeBackup(source, incoming, { checksum: false });
    } finally {
      source.close();
    }
    try {
      await openAsTheServerWould(incoming);
    } catch (err) {
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${incoming}${suffix}`, { force: true });
      if (err instanceof RestoreRefusedError) throw new RestoreRefusedError(`${from}: ${err.message}`);
      throw err;
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
