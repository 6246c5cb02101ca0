// Small SQL helpers shared by services.
import { sql, type SQL, type AnyColumn, type Placeholder } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client';

/** `%term%` for LIKE with the wildcards of the term itself escaped. */
export const likeContains = (term: string): string => `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

/**
 * Case-insensitive LIKE, in every script (`lower_unicode`, registered by openDatabase), with `\` as
 * escape; the pattern comes from `likeContains`.
 */
export const ilike = (column: AnyColumn | SQL, pattern: string): SQL =>
  sql`lower_unicode(${column}) LIKE lower_unicode(${pattern}) ESCAPE '\\'`;

/** `count(*)` as a number. */
export const countAll = sql<number>`count(*)`.mapWith(Number);

export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Error && 'code' in err && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';

/**
 * A LIMIT or OFFSET value for drizzle's `.limit()` / `.offset()`. SQLite's planner reads a
 * parameter bound there, after which every new binding re-plans the statement; so a number is
 * written into the SQL as a literal and a placeholder as `(? + 0)`, which SQLite leaves to run time.
 */
export function sqlLimit(value: number | Placeholder): Placeholder {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a LIMIT or OFFSET: ${value}`);
    return sql.raw(String(value)) as unknown as Placeholder;
  }
  return sql`(${value} + 0)` as unknown as Placeholder;
}

/** How many rows of `table` match `where`. */
export function countRows(db: Db, table: SQLiteTable, where?: SQL): number {
  return db.select({ n: countAll }).from(table).where(where).get()?.n ?? 0;
}

/**
 * One page of `table`'s rows that match `where`, in `order`, and how many match in all: the pair
 * every list answers. Lists that join or select columns count with `countRows` beside their query.
 */
export function selectPage<T extends SQLiteTable>(
  db: Db,
  table: T,
  where: SQL | undefined,
  order: (SQLiteColumn | SQL)[],
  bounds: { limit: number; offset: number },
): { rows: T['$inferSelect'][]; total: number } {
  const rows = db
    .select()
    .from(table as SQLiteTable)
    .where(where)
    .orderBy(...order)
    .limit(sqlLimit(bounds.limit))
    .offset(sqlLimit(bounds.offset))
    .all() as T['$inferSelect'][];
  return { rows, total: countRows(db, table, where) };
}
