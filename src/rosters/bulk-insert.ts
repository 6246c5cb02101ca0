// An import's new rows (users, enrollments, roster links: thousands in a first bulk import), written
// through one prepared statement per table and column list, bound straight to better-sqlite3. The
// multi-row INSERTs drizzle built anew for every 500 rows cost more than the writes themselves
// (bench/rosters.ts; see bench/RESULTS.md), all of it inside the import's transaction.
import type Database from 'better-sqlite3';
import { getTableColumns, getTableName } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client';

const statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

const bound = (value: unknown): unknown => (typeof value === 'boolean' ? (value ? 1 : 0) : value === undefined ? null : value);

/** Inserts the rows (objects keyed by the table's property names, as drizzle's `values`); the columns are the first row's keys, the others take their defaults. */
export function insertRows(db: Db, table: SQLiteTable, rows: readonly Record<string, unknown>[]): void {
  if (rows.length === 0) return;
  const client = (db as Db & { $client: Database.Database }).$client;
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  const keys = Object.keys(rows[0]!).filter((key) => columns[key] !== undefined);
  const sql = `INSERT INTO "${getTableName(table)}" (${keys.map((key) => `"${columns[key]!.name}"`).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`;
  let cache = statements.get(client);
  if (!cache) statements.set(client, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) cache.set(sql, (statement = client.prepare(sql)));
  const values: unknown[] = new Array(keys.length);
  for (const row of rows) {
    for (let i = 0; i < keys.length; i++) values[i] = bound(row[keys[i]!]);
    statement.run(values);
  }
}
