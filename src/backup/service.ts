// Online backups taken by the running server (POST /api/admin/backup): one at a time, over the
// server's own connection in small steps so that REST and live edits keep being served, into
// DATA_DIR/backups with the rotation of BACKUP_KEEP. A shutdown stops a backup in progress,
// which removes its partial file.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { Logger } from 'pino';
import { AppError, conflict } from '../http/errors';
import type { Clock } from '../lib/clock';
import { BACKUPS_FOLDER, BackupAbortedError, backupName, rotateBackups, writeBackup, type BackupFile } from './files';

/** Pages copied per step (4 KiB each): a step takes about a millisecond, then the event loop runs. */
const PAGES_PER_STEP = 256;

export interface BackupResult extends BackupFile {
  createdAt: Date;
  /** Older backups the rotation removed. */
  removed: string[];
}

export class Backups {
  private running?: { controller: AbortController; done: Promise<unknown> };

  constructor(
    private readonly opts: {
      sqlite: SqliteDatabase;
      dataDir: string;
      keep: number;
      clock: Clock;
      logger: Logger;
      /** Pages per step; tests make it small to have a backup in progress. */
      pagesPerStep?: number;
    },
  ) {}

  get folder(): string {
    return path.join(this.opts.dataDir, BACKUPS_FOLDER);
  }

  get inProgress(): boolean {
    return this.running !== undefined;
  }

  async create(): Promise<BackupResult> {
    if (this.running) throw conflict('A backup is already being written; try again when it is done');
    const controller = new AbortController();
    const work = this.write(controller.signal);
    this.running = { controller, done: work.catch(() => undefined) };
    try {
      return await work;
    } finally {
      this.running = undefined;
    }
  }

  private async write(signal: AbortSignal): Promise<BackupResult> {
    const { sqlite, clock, logger, keep } = this.opts;
    const dir = this.folder;
    mkdirSync(dir, { recursive: true });
    const createdAt = clock.now();
    const target = path.join(dir, backupName(dir, createdAt));
    const started = performance.now();
    let file: BackupFile;
    try {
      file = await writeBackup(sqlite, target, { pagesPerStep: this.opts.pagesPerStep ?? PAGES_PER_STEP, signal });
    } catch (err) {
      if (err instanceof BackupAbortedError) {
        logger.warn({ file: target }, 'backup stopped by the shutdown; its partial file was removed');
        throw new AppError('service_unavailable', 'The server is shutting down; the backup was not completed');
      }
      throw err;
    }
    const removed = rotateBackups(dir, keep);
    logger.info(
      { file: file.path, bytes: file.bytes, sha256: file.sha256, removed, durationMs: Math.round(performance.now() - started) },
      'backup written',
    );
    return { ...file, createdAt, removed };
  }

  /** Stops a backup in progress (its partial file is removed) and waits for it to end. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.controller.abort();
    await running.done;
  }
}
