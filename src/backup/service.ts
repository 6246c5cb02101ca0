// Online backups taken by the running server (POST /api/admin/backup): one at a time, over the
// server's own connection in small steps so that REST and live edits keep being served, into
// DATA_DIR/backups with the rotation of BACKUP_KEEP. A shutdown stops a backup in progress,
// which removes its partial file.
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { Logger } from 'pino';
import { AppError, conflict } from '../http/errors';
import type { Clock } from '../lib/clock';
import { BackupAbortedError, writeDatedBackup, type DatedBackup } from './files';

/** Pages copied per step (4 KiB each): a step takes about a millisecond, then the event loop runs. */
const PAGES_PER_STEP = 256;

export interface BackupResult extends DatedBackup {
  createdAt: Date;
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
    const { sqlite, clock, logger, keep, dataDir } = this.opts;
    const createdAt = clock.now();
    const started = performance.now();
    let backup: DatedBackup;
    try {
      backup = await writeDatedBackup(sqlite, dataDir, createdAt, keep, { pagesPerStep: this.opts.pagesPerStep ?? PAGES_PER_STEP, signal });
    } catch (err) {
      if (err instanceof BackupAbortedError) {
        logger.warn({ file: err.target }, 'backup stopped by the shutdown; its partial file was removed');
        throw new AppError('service_unavailable', 'The server is shutting down; the backup was not completed');
      }
      throw err;
    }
    logger.info(
      { file: backup.path, bytes: backup.bytes, sha256: backup.sha256, removed: backup.removed, durationMs: Math.round(performance.now() - started) },
      'backup written',
    );
    return { ...backup, createdAt };
  }

  /** Stops a backup in progress (its partial file is removed) and waits for it to end. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.controller.abort();
    await running.done;
  }
}
