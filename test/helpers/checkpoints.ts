// Helpers for the background-checkpoint tests: fill the WAL of a database, and watch its main
// file grow when a checkpoint copies the WAL into it.
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** About 2 MB of new pages, all in the WAL: too few for SQLite's own checkpoint threshold. */
export function fillWal(sqlite: Database.Database): void {
  sqlite.exec('CREATE TABLE IF NOT EXISTS ballast (data BLOB)');
  const insert = sqlite.prepare('INSERT INTO ballast (data) VALUES (randomblob(1000))');
  sqlite.transaction(() => {
    for (let i = 0; i < 2_000; i++) insert.run();
  })();
}

/** True once the database file has grown by `bytes` (a checkpoint ran), false after `timeoutMs`. */
export async function fileGrows(file: string, bytes: number, timeoutMs: number): Promise<boolean> {
  const start = statSync(file).size;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (statSync(file).size >= start + bytes) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
