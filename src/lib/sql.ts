// Small SQL helpers shared by services.
import { sql, type SQL, type AnyColumn, type Placeholder } from 'drizzle-orm';

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
 * A LIMIT or OFFSET value for drizzle's `.limit()` / `.offset()`. Drizzle binds even a plain
 * number there as a parameter, and SQLite's planner (3.46 and later) reads a parameter bound in
 * LIMIT or OFFSET, after which every new binding expires the statement: each run of a prepared page
 * query was parsed and planned again (28 against 8 µs for a small one, more for a page's join),
 * and a one-time query was prepared twice. A number is written into the SQL as an integer
 * literal; a placeholder as `(? + 0)`, an expression SQLite leaves to run time. Typed as
 * drizzle's Placeholder, which is what those methods accept; drizzle writes an SQL value there as
 * it is.
 */
export function sqlLimit(value: number | Placeholder): Placeholder {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a LIMIT or OFFSET: ${value}`);
    return sql.raw(String(value)) as unknown as Placeholder;
  }
  return sql`(${value} + 0)` as unknown as Placeholder;
}
