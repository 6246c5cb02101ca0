// Runs SQLite WAL checkpoints on a worker thread with its own connection, so that their disk
// writes and fsyncs never stall the event loop that serves requests and live edits.
// Plain JavaScript on purpose: it runs under any loader the main thread was started with.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const checkpoint = () => {
  try {
    const started = performance.now();
    db.pragma('wal_checkpoint(PASSIVE)');
    // Timed for the metrics (lms_sqlite_checkpoint_duration_seconds) when the server has them on.
    if (workerData.timed) parentPort?.postMessage({ checkpointSeconds: (performance.now() - started) / 1000 });
  } catch (err) {
    parentPort?.postMessage({ error: String(err && err.message ? err.message : err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort?.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort?.close();
  }
});
