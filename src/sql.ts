// Small SQL helpers shared by services.
import { sql, type SQL, type AnyColumn } from 'drizzle-orm';

/** `%term%` for LIKE with the wildcards of the term itself escaped. */
export const likeContains = (term: string): string => `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

/** Case-insensitive LIKE with `\` as escape; the pattern comes from `likeContains`. */
export const ilike = (column: AnyColumn | SQL, pattern: string): SQL => sql`${column} LIKE ${pattern} ESCAPE '\\'`;

/** `count(*)` as a number. */
export const countAll = sql<number>`count(*)`.mapWith(Number);

export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Error && 'code' in err && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
