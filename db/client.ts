// Opens the SQLite file with the project's pragmas and applies drizzle-kit migrations.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { isNewerSchema, migrationLevel, migrationsFolder, NewerSchemaError } from './migration-level';
import * as schema from './schema';

/**
 * The database, whether or not a transaction is open on it: transactions run on the same handle
 * (see inTransaction), so there is no separate transaction type.
 */
export type Db = BetterSQLite3Database<typeof schema>;

type TransactionBehavior = 'deferred' | 'immediate' | 'exclusive';
const transactionRunners = new WeakMap<Database.Database, Database.Transaction<(fn: () => unknown) => unknown>>();

/** The better-sqlite3 connection under a drizzle database. */
export const clientOf = (db: Db): Database.Database => (db as Db & { $client: Database.Database }).$client;

/**
 * Runs `fn` in one SQLite transaction (a savepoint when one is already open), committed when `fn`
 * returns and rolled back when it throws. `fn` gets the database itself: better-sqlite3 is
 * synchronous over one connection. Cheaper than drizzle's `db.transaction`, which builds a query
 * builder per table on every call.
 *
 * It takes the write lock when it begins (BEGIN IMMEDIATE) unless told `deferred`: another
 * connection may write the file too (the admin command beside a running server), and a deferred
 * transaction that read before that connection committed could no longer write
 * (SQLITE_BUSY_SNAPSHOT, which no waiting cures).
 */
export function inTransaction<T>(db: Db, fn: (tx: Db) => T, options?: { behavior?: TransactionBehavior }): T {
  const client = clientOf(db);
  let run = transactionRunners.get(client);
  if (!run) transactionRunners.set(client, (run = client.transaction((body: () => unknown) => body())));
  return run[options?.behavior ?? 'immediate'](() => fn(db)) as T;
}

export interface Database_ {
  db: Db;
  sqlite: Database.Database;
  close(): void;
}

/**
 * How large the WAL may grow before the serving connection checkpoints it itself (a safety net).
 * The WAL starts over only when a write begins after a checkpoint has copied all of it, which a
 * steady stream of large writes (5 MiB documents copied one after another) can deny it for a
 * while: it then grows, to 100–300 MB in the benchmark, and the serving connection's own
 * checkpoint stalls the event loop for its fsyncs (150–500 ms on a busy disk).
 */
const FALLBACK_WAL_BYTES = 256 * 1024 * 1024;
/** SQLite's own default, for when the serving connection checkpoints by itself. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * Moves WAL checkpoints of a file database to a worker thread: the serving connection then only
 * appends to the WAL, and live edits never wait for a checkpoint's writes and fsyncs. The worker
 * looks every `intervalMs` (100 ms): soon enough after each write that the WAL mostly starts over
 * rather than grows, and a look with nothing to copy costs no I/O. After a look that copied all of
 * a WAL past 4 MiB it looks again at once (a few times), so that a steady writer's next write finds
 * it all copied and starts it over (db/checkpoint-worker.mjs). A WAL past WAL_PRESSURE_FRAMES
 * is started over by the worker once all of it is copied (a TRUNCATE checkpoint: the serving
 * connection's next write waits the few milliseconds it takes); while it is large and not all
 * copied, writers that may wait (walRoom) hold back until it is.
 *
 * The worker is plain JavaScript and starts with no node flags of its own (`execArgv: []`): it
 * would otherwise inherit the process's preloads (`--import`/`--require` of a TypeScript file, an
 * APM agent), which a worker may be unable to load. If it fails anyway, the serving connection
 * checkpoints itself again, and the log says so.
 */
export function startBackgroundCheckpoints(
  database: Database_,
  options: {
    intervalMs?: number;
    /** WAL frames past which walRoom waits (WAL_PRESSURE_FRAMES), and its longest wait (WAL_ROOM_MAX_WAIT_MS): test seams. */
    pressureFrames?: number;
    maxWaitMs?: number;
    logger?: Pick<Logger, 'warn'>;
    onCheckpoint?: (seconds: number) => void;
  } = {},
): { stop(): Promise<void> } {
  const file = database.sqlite.name;
  const worker = new Worker(new URL('./checkpoint-worker.mjs', import.meta.url), {
    workerData: { file, intervalMs: options.intervalMs ?? 100, timed: options.onCheckpoint !== undefined, pressureFrames: options.pressureFrames ?? WAL_PRESSURE_FRAMES },
    execArgv: [],
  });
  worker.unref();
  const pageSize = database.sqlite.pragma('page_size', { simple: true }) as number;
  database.sqlite.pragma(`wal_autocheckpoint = ${Math.ceil(FALLBACK_WAL_BYTES / pageSize)}`);
  const fallBack = (err: unknown) => {
    if (!database.sqlite.open) return;
    database.sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    options.logger?.warn({ err }, 'background WAL checkpoints stopped; the serving connection checkpoints the database itself');
  };
  let failures = 0;
  const gate: WalGate = {
    maxWaitMs: options.maxWaitMs ?? WAL_ROOM_MAX_WAIT_MS,
    pressed: false,
    waiting: [],
    ignoreUntil: 0,
    release() {
      const waiting = this.waiting;
      this.waiting = [];
      for (const resolve of waiting) resolve();
    },
  };
  walGates.set(database.sqlite, gate);
  worker.on('message', (message: { error?: string; checkpointSeconds?: number; walPressed?: boolean }) => {
    if (message.checkpointSeconds !== undefined) {
      options.onCheckpoint?.(message.checkpointSeconds);
      return;
    }
    if (message.walPressed !== undefined) {
      gate.pressed = message.walPressed;
      if (!gate.pressed) gate.release();
      return;
    }
    // Repeated failures hand checkpoints back to the serving connection.
    if (message.error && ++failures === 3) fallBack(new Error(message.error));
  });
  worker.on('error', fallBack);
  let exited = false;
  worker.once('exit', () => {
    exited = true;
    walGates.delete(database.sqlite);
    gate.release();
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        worker.once('exit', () => resolve());
        // Held open until the final checkpoint is done, whatever else keeps the process alive.
        worker.ref();
        worker.postMessage('stop');
        setTimeout(() => void worker.terminate(), 5_000).unref();
      }),
  };
}

/**
 * WAL frames past which background writers wait for the checkpoint worker (walRoom): 32 MiB of
 * 4 KiB pages. A WAL starts over only when a write begins after a checkpoint has copied all of it;
 * a writer that writes every few milliseconds for seconds (an import's slices, their clean-up)
 * denies the worker that moment, and the WAL grows to the serving connection's own fallback
 * checkpoint, which then fsyncs on the event loop at every commit (bench/RESULTS.md, CASE import).
 */
const WAL_PRESSURE_FRAMES = 8_192;
/** Longest a background writer waits for the WAL: it goes on after this whatever the WAL holds. */
const WAL_ROOM_MAX_WAIT_MS = 2_000;

interface WalGate {
  maxWaitMs: number;
  /** The WAL holds WAL_PRESSURE_FRAMES or more, not all of them copied yet (the worker's last look). */
  pressed: boolean;
  waiting: (() => void)[];
  /** After a wait that timed out, writers do not wait until then (performance.now()). */
  ignoreUntil: number;
  /** Lets every waiting writer go. */
  release(): void;
}
const walGates = new WeakMap<Database.Database, WalGate>();

/**
 * Resolves at once unless the WAL is large and not yet copied (WAL_PRESSURE_FRAMES): then once the
 * checkpoint worker has copied all of it, so that the caller's next write starts it over, or after
 * WAL_ROOM_MAX_WAIT_MS. For writers that may wait (an import's slices, clean-ups), between their
 * transactions; requests never wait on it. Without background checkpoints it never waits.
 */
export function walRoom(db: Db): Promise<void> {
  const gate = walGates.get(clientOf(db));
  if (!gate || !pressed(gate)) return Promise.resolve();
  return new Promise((resolve) => {
    gate.waiting.push(resolve);
    setTimeout(() => {
      // The worker could not copy it all meanwhile (other writes kept coming): no more waits for a while.
      if (gate.waiting.includes(resolve)) gate.ignoreUntil = performance.now() + gate.maxWaitMs * 5;
      resolve();
    }, gate.maxWaitMs).unref();
  });
}

/** Whether walRoom would wait now: for background work that runs from timers rather than awaits. */
export function walPressed(db: Db): boolean {
  const gate = walGates.get(clientOf(db));
  return gate !== undefined && pressed(gate);
}

const pressed = (gate: WalGate) => gate.pressed && performance.now() >= gate.ignoreUntil;

/** `file` is a path, or ':memory:' for a throwaway database. */
export function openDatabase(file: string): Database_ {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma('cache_size = -32000');
  // SQLite's LIKE and lower() fold ASCII letters only: `lower_unicode` folds every script, for
  // case-insensitive matching of names ("łukasz" finds "Łukasz"). Used in queries only, never in
  // the schema, so other tools can open the file without it.
  sqlite.function('lower_unicode', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value));
  const db = drizzle(sqlite, { schema });
  // A database a newer version has migrated is left as it is: never migrated nor served.
  const level = migrationLevel(sqlite);
  if (isNewerSchema(level)) {
    sqlite.close();
    throw new NewerSchemaError(level);
  }
  migrate(db, { migrationsFolder });
  // Samples left by an ANALYZE of another build or tool.
  dropStat4Samples(sqlite);
  return {
    db,
    sqlite,
    close() {
      if (sqlite.open) {
        try {
          analyze(sqlite);
        } finally {
          sqlite.close();
        }
      }
    },
  };
}

/**
 * Refreshes the query planner's statistics (`PRAGMA optimize`, or with `full` a whole `ANALYZE`)
 * and keeps sqlite_stat1 only: with STAT4 samples, binding a parameter re-plans a prepared
 * statement on every run, and our queries fix their own plans, so the samples buy nothing.
 */
export function analyze(sqlite: Database.Database, full = false): void {
  if (full) sqlite.exec('ANALYZE');
  else sqlite.pragma('optimize');
  dropStat4Samples(sqlite);
}

function dropStat4Samples(sqlite: Database.Database): void {
  const hasSamples = sqlite.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat4'").get();
  // ANALYZE sqlite_schema reloads the statistics, so the planner forgets the samples now.
  if (hasSamples) sqlite.exec('DELETE FROM sqlite_stat4; ANALYZE sqlite_schema;');
}
