// Prepared statements of the hot list endpoints, and what else they keep per database handle.
import type { Db } from '../../db/client';

const preparedByDb = new WeakMap<object, Map<string, unknown>>();

/**
 * A prepared statement (drizzle, with placeholders) built once per database handle and key. The
 * hot list endpoints use it to skip rebuilding and re-preparing the same SQL on every request, and
 * to keep a per-database cache beside their statements (the roster's anchors), so that two
 * databases in one process (tests) never share one.
 */
export function preparedFor<T>(db: Db, key: string, build: () => T): T {
  let statements = preparedByDb.get(db);
  if (!statements) preparedByDb.set(db, (statements = new Map()));
  let statement = statements.get(key) as T | undefined;
  if (statement === undefined) statements.set(key, (statement = build()));
  return statement;
}

/**
 * Names the positional rows of a prepared statement's `values()` after the keys of its selection.
 * Drizzle's own row mapping inspects every field of every row, which on a page of 100 wide rows
 * costs as much as the query. Only for flat selections of text, integer and real columns: they need
 * no decoding, and drizzle selects them in the order of the selection's keys.
 */
export function rowsNamed<T>(selection: Record<string, unknown>, rows: unknown[][]): T[] {
  const keys = Object.keys(selection);
  return rows.map((row) => {
    const named: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) named[keys[i]!] = row[i];
    return named as T;
  });
}
