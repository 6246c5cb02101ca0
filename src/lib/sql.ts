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
