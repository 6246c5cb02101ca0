// Who holds the data directory: the server, for as long as it runs, and a restore while it swaps
// the database. The lock is an SQLite file (DATA_DIR/lms.lock) whose holder keeps a write
// transaction open: SQLite's file lock is an OS lock that dies with the process, so a crashed or
// killed server never leaves a lock that blocks forever, whatever pid the file names. Readers
// (a restore asking who holds it) can still read the holder's pid and start time.
import path from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'lms.lock';

export interface Holder {
  pid: number;
  since: string;
  what: string;
}

export class DataDirectoryBusyError extends Error {
  readonly code = 'LMS_DATA_DIR_BUSY';
  constructor(
    readonly dataDir: string,
    readonly holder: Holder | null,
  ) {
    super(
      `the data directory ${dataDir} is in use by ${holder ? `${holder.what} (pid ${holder.pid}, since ${holder.since})` : 'another process'}`,
    );
  }
}

export interface DataDirectoryLock {
  release(): void;
}

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown }).code));

function readHolder(lock: Database.Database): Holder | null {
  try {
    return (lock.prepare('SELECT pid, since, what FROM holder LIMIT 1').get() as Holder | undefined) ?? null;
  } catch {
    return null;
  }
}

/**
 * Takes the data directory for this process (`what`: "a server", "a restore"), or throws
 * DataDirectoryBusyError naming the process that holds it.
 */
export function lockDataDirectory(dataDir: string, what: string, now = new Date()): DataDirectoryLock {
  const lock = new Database(path.join(dataDir, LOCK_FILE));
  try {
    lock.pragma('busy_timeout = 0');
    const take = () => lock.exec('BEGIN IMMEDIATE');
    try {
      take();
      lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL, what TEXT NOT NULL)');
      lock.exec('DELETE FROM holder');
      lock.prepare('INSERT INTO holder (pid, since, what) VALUES (?, ?, ?)').run(process.pid, now.toISOString(), what);
      lock.exec('COMMIT');
      // Held from here on: readers see the row above, writers (another holder) get SQLITE_BUSY.
      take();
    } catch (err) {
      if (lock.inTransaction) lock.exec('ROLLBACK');
      if (isBusy(err)) throw new DataDirectoryBusyError(dataDir, readHolder(lock));
      throw err;
    }
  } catch (err) {
    lock.close();
    throw err;
  }
  return {
    release() {
      if (!lock.open) return;
      try {
        lock.exec('ROLLBACK');
      } finally {
        lock.close();
      }
    },
  };
}

/** Who holds the data directory now, or null when nobody does (a stale pid in the file does not count). */
export function dataDirectoryHolder(dataDir: string): Holder | null {
  try {
    lockDataDirectory(dataDir, 'a check').release();
    return null;
  } catch (err) {
    if (err instanceof DataDirectoryBusyError) return err.holder ?? { pid: 0, since: '', what: 'another process' };
    throw err;
  }
}
