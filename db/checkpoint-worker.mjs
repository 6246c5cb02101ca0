// Runs SQLite WAL checkpoints on a worker thread with its own connection, so that their disk
// writes and fsyncs never stall the event loop that serves requests and live edits.
// Plain JavaScript on purpose: it runs under any loader the main thread was started with.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
let last = { log: 0, checkpointed: 0, pressed: false };
/**
 * WAL frames (4 MiB of 4 KiB pages) past which a look that copied every frame is followed at once
 * by another, up to CATCH_UP_LOOKS in a row. The WAL starts over at the first write that begins
 * once every frame is copied; a writer that writes every few milliseconds begins one during a
 * 100 ms wait almost every time, but rarely during a look that copies only the last few frames.
 */
const CATCH_UP_FRAMES = 1_024;
const CATCH_UP_LOOKS = 10;
let catchUps = 0;
/** Longest a reset of the WAL waits for the serving connection's readers and writer (see below). */
const RESET_WAIT_MS = 20;
/**
 * A PASSIVE checkpoint: it copies the frames written since the last one into the database file
 * and fsyncs it, without waiting for the serving connection or blocking it. Once every frame is
 * copied, the next write starts the WAL over from its beginning. A look that finds nothing to copy
 * reads only the WAL index: no disk write, no fsync.
 */
const checkpoint = () => {
  try {
    const started = performance.now();
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    const found = result.log > 0 && (result.log !== last.log || result.checkpointed !== last.checkpointed);
    // A WAL past the mark whose every frame is copied is started over here. A writer that writes
    // every few milliseconds would deny it that at its next write (it must begin after the copy is
    // done), and it would grow to the serving connection's fallback. TRUNCATE waits for the
    // serving connection's write under way and holds its next one back until the WAL is reset:
    // milliseconds, as everything was copied just now. It waits RESET_WAIT_MS at most (a long
    // read, a backup): the serving connection's writes are never held back longer than that.
    if (result.log >= workerData.pressureFrames && result.checkpointed === result.log) {
      db.pragma(`busy_timeout = ${RESET_WAIT_MS}`);
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // Busy: the next look tries again; the copying above is what must not fail.
      } finally {
        db.pragma('busy_timeout = 5000');
      }
    }
    // How full the WAL is, for the writers that wait while it is large (walRoom in db/client.ts):
    // told while it is past the mark, and once when it is no longer.
    const pressed = result.log >= workerData.pressureFrames && result.checkpointed < result.log;
    if (pressed || last.pressed) parentPort?.postMessage({ walPressed: pressed });
    last = { ...result, pressed };
    // Timed for the metrics (lms_sqlite_checkpoint_duration_seconds) when the server has them on,
    // when it found frames to copy.
    if (workerData.timed && found) parentPort?.postMessage({ checkpointSeconds: (performance.now() - started) / 1000 });
    catchUps = found && result.log >= CATCH_UP_FRAMES && result.checkpointed === result.log && catchUps < CATCH_UP_LOOKS ? catchUps + 1 : 0;
  } catch (err) {
    catchUps = 0;
    parentPort?.postMessage({ error: String(err && err.message ? err.message : err) });
  }
};
let timer;
const look = () => {
  checkpoint();
  timer = catchUps > 0 ? setImmediate(look) : setTimeout(look, workerData.intervalMs);
};
timer = setTimeout(look, workerData.intervalMs);
parentPort?.on('message', (message) => {
  if (message === 'stop') {
    clearTimeout(timer);
    clearImmediate(timer);
    checkpoint();
    db.close();
    parentPort?.close();
  }
});
