// The database handle: transactions on the one connection, and planner statistics are kept without STAT4 samples (see analyze() in
// db/client.ts: with samples, every prepared statement is planned again on each execution).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze, inTransaction, openDatabase, startBackgroundCheckpoints } from '../db/client';
import { fileGrows, fillWal } from './helpers/checkpoints';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDbFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-database-'));
  dirs.push(dir);
  return path.join(dir, 'lms.sqlite');
}

const count = (sqlite: Database.Database, table: string): number =>
  (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/** A table with an index and enough rows for ANALYZE to sample it. */
function fill(sqlite: Database.Database): void {
  sqlite.exec('CREATE TABLE probe (a INTEGER, b TEXT); CREATE INDEX probe_a ON probe (a);');
  const insert = sqlite.prepare('INSERT INTO probe (a, b) VALUES (?, ?)');
  sqlite.transaction(() => {
    for (let i = 0; i < 2_000; i++) insert.run(i % 50, `row ${i}`);
  })();
}

describe('planner statistics', () => {
  it('analyze() keeps sqlite_stat1 and no sqlite_stat4 samples', () => {
    const database = openDatabase(tempDbFile());
    try {
      fill(database.sqlite);
      analyze(database.sqlite, true);
      expect(count(database.sqlite, "sqlite_stat1 WHERE tbl = 'probe'")).toBeGreaterThan(0);
      expect(count(database.sqlite, 'sqlite_stat4')).toBe(0);
      // The statistics still serve the planner: the index is used.
      const plan = database.sqlite.prepare('EXPLAIN QUERY PLAN SELECT b FROM probe WHERE a = ?').all(7) as { detail: string }[];
      expect(plan.map((r) => r.detail).join()).toContain('probe_a');
    } finally {
      database.close();
    }
  });

  it('drops the samples a full ANALYZE by another tool left, when it opens the file', () => {
    const file = tempDbFile();
    openDatabase(file).close();
    const raw = new Database(file);
    fill(raw);
    raw.exec('ANALYZE');
    expect(count(raw, 'sqlite_stat4')).toBeGreaterThan(0);
    raw.close();

    const database = openDatabase(file);
    expect(count(database.sqlite, 'sqlite_stat4')).toBe(0);
    expect(count(database.sqlite, "sqlite_stat1 WHERE tbl = 'probe'")).toBeGreaterThan(0);
    database.close();
  });
});

describe('inTransaction', () => {
  it('commits what the callback wrote, rolls all of it back when it throws, and nests as a savepoint', () => {
    const database = openDatabase(':memory:');
    try {
      const { sqlite, db } = database;
      sqlite.exec('CREATE TABLE probe (a INTEGER)');
      const insert = sqlite.prepare('INSERT INTO probe (a) VALUES (?)');
      const values = () => (sqlite.prepare('SELECT a FROM probe ORDER BY a').all() as { a: number }[]).map((r) => r.a);

      expect(inTransaction(db, (tx) => {
        expect(tx).toBe(db);
        expect(sqlite.inTransaction).toBe(true);
        insert.run(1);
        return 'done';
      }, { behavior: 'immediate' })).toBe('done');
      expect(sqlite.inTransaction).toBe(false);

      expect(() =>
        inTransaction(db, () => {
          insert.run(2);
          throw new Error('no');
        }),
      ).toThrow('no');
      expect(values()).toEqual([1]);

      inTransaction(db, (tx) => {
        insert.run(3);
        expect(() =>
          inTransaction(tx, () => {
            insert.run(4);
            throw new Error('inner');
          }),
        ).toThrow('inner');
        insert.run(5);
      });
      expect(values()).toEqual([1, 3, 5]);
    } finally {
      database.close();
    }
  });
});

describe('background checkpoints', () => {
  it('copies the WAL into the database file from a worker thread, not the serving connection', async () => {
    const file = tempDbFile();
    const database = openDatabase(file);
    const checkpoints = startBackgroundCheckpoints(database, { intervalMs: 20 });
    try {
      // The serving connection only checkpoints itself far above what fillWal writes.
      expect(database.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(20_000);
      fillWal(database.sqlite);
      expect(await fileGrows(file, 1_000_000, 10_000)).toBe(true);
    } finally {
      await checkpoints.stop();
      database.close();
    }
  });

  it("still runs when the process was started with preloads a worker could not load", async () => {
    const file = tempDbFile();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--import', './test/helpers/ts-preload.ts', 'test/helpers/checkpoint-child.ts', file],
      { timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ grew: true, autocheckpoint: 20_000, warnings: [] });
  });
});
