// Backup files: a consistent copy of the live database through SQLite's online backup API, written
// under a temporary name in the target's folder and renamed only once complete and on disk, so
// that no crash, SIGTERM or failure ever leaves a truncated file under the final name (the partial
// file is removed, or swept by the next backup if the process was killed), with its SHA-256 written
// beside it (FILE.sha256), which a restore verifies. Then the rotation of DATA_DIR/backups.
import { createHash } from 'node:crypto';
import { createReadStream, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/** DATA_DIR/backups: where the API and the command without --out write, and the rotation keeps BACKUP_KEEP. */
const BACKUPS_FOLDER = 'backups';
const BACKUP_NAME = /^lms-(\d{8}T\d{9}Z)(?:-(\d+))?\.sqlite$/;
const PARTIAL = /^\.(.+)\.(\d+)\.partial$/;

export class BackupAbortedError extends Error {
  /** `target`: the file that was being written (its partial file was removed). */
  constructor(readonly target: string) {
    super('the backup was stopped before it was complete; nothing was kept');
  }
}

export interface BackupFile {
  /** The file's name (in DATA_DIR/backups for the API) and its full path. */
  file: string;
  path: string;
  bytes: number;
  sha256: string;
}

/** A backup's name for this time, sortable: lms-20261125T031500123Z.sqlite (another suffix if taken). */
function backupName(dir: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '');
  let name = `lms-${stamp}.sqlite`;
  for (let n = 2; existsSync(path.join(dir, name)); n++) name = `lms-${stamp}-${n}.sqlite`;
  return name;
}

/** Where a backup's SHA-256 is written: beside it, in the format of `sha256sum` (`sha256sum -c` checks it). */
export const checksumFile = (backup: string) => `${backup}.sha256`;

const partialName = (target: string, pid = process.pid) => path.join(path.dirname(target), `.${path.basename(target)}.${pid}.partial`);

function removeQuietly(file: string): void {
  for (const name of [file, `${file}-journal`, `${file}-wal`, `${file}-shm`]) rmSync(name, { force: true });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes partial backups in `dir` left by processes that are gone (killed mid-backup). */
export function sweepPartials(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = PARTIAL.exec(name);
    if (match && !pidAlive(Number(match[2]))) removeQuietly(path.join(dir, name));
  }
}

function fsyncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // Some filesystems (and folders on some platforms) cannot be synced; the rename still stands.
  } finally {
    closeSync(fd);
  }
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Copies the database `source` is connected to into `target`. With `pagesPerStep` the copy goes
 * in steps, between which the event loop runs (the server's own connection: its writes during the
 * copy reach the copy too, so the result is the database as of the end). Without it, the whole
 * database is copied in one step, in one read transaction: the way for a separate connection (the
 * command), whose copy another connection's write would otherwise restart. `signal` stops it at
 * the next step and removes the partial file.
 */
export async function writeBackup(
  source: Database.Database,
  target: string,
  options: { pagesPerStep?: number; signal?: AbortSignal; /** false: no FILE.sha256 (a restore's own copy) */ checksum?: boolean } = {},
): Promise<BackupFile> {
  const { signal } = options;
  const partial = partialName(target);
  const checksumPartial = partialName(checksumFile(target));
  let sha256: string;
  sweepPartials(path.dirname(target));
  removeQuietly(partial);
  try {
    if (signal?.aborted) throw new BackupAbortedError(target);
    await source.backup(partial, {
      progress: () => {
        if (signal?.aborted) throw new BackupAbortedError(target);
        return options.pagesPerStep ?? 0x7fffffff;
      },
    });
    // A file of its own: no -wal beside it to lose, readable where its folder is read-only.
    const copy = new Database(partial);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    fsyncPath(partial);
    if (signal?.aborted) throw new BackupAbortedError(target);
    sha256 = await sha256Of(partial);
    if (options.checksum !== false) {
      // The checksum first: a backup under its final name always has its checksum beside it.
      writeFileSync(checksumPartial, `${sha256}  ${path.basename(target)}\n`);
      fsyncPath(checksumPartial);
      renameSync(checksumPartial, checksumFile(target));
    }
    renameSync(partial, target);
  } catch (err) {
    removeQuietly(partial);
    rmSync(checksumPartial, { force: true });
    throw err;
  }
  fsyncPath(path.dirname(target));
  return { file: path.basename(target), path: target, bytes: statSync(target).size, sha256 };
}

/** Keeps the `keep` newest backups of `dir` (0: all of them) and removes the rest; returns the removed names. */
export function rotateBackups(dir: string, keep: number): string[] {
  if (keep <= 0) return [];
  const backups = readdirSync(dir)
    .map((name) => ({ name, match: BACKUP_NAME.exec(name) }))
    .filter((b): b is { name: string; match: RegExpExecArray } => b.match !== null)
    .map(({ name, match }) => ({ name, key: `${match[1]} ${String(match[2] ?? 1).padStart(6, '0')}` }))
    .sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  const removed = backups.slice(keep).map((b) => b.name);
  for (const name of removed) {
    rmSync(path.join(dir, name), { force: true });
    rmSync(checksumFile(path.join(dir, name)), { force: true });
  }
  return removed;
}

export interface DatedBackup extends BackupFile {
  /** Older backups the rotation removed. */
  removed: string[];
}

/**
 * A backup into DATA_DIR/backups under the dated name of `at` (writeBackup), then the rotation that
 * keeps the `keep` newest there: what the API (Backups) and the command without --out do.
 */
export async function writeDatedBackup(
  source: Database.Database,
  dataDir: string,
  at: Date,
  keep: number,
  options: { pagesPerStep?: number; signal?: AbortSignal } = {},
): Promise<DatedBackup> {
  const dir = path.join(dataDir, BACKUPS_FOLDER);
  mkdirSync(dir, { recursive: true });
  const file = await writeBackup(source, path.join(dir, backupName(dir, at)), options);
  return { ...file, removed: rotateBackups(dir, keep) };
}
