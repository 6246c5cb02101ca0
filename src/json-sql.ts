// JSON written by SQLite, for the hottest list pages: each row of a page of 100 comes back as one
// JSON object text made in SQLite's C code (`json_object`), spliced into the answer as it is,
// instead of a thousand JavaScript values that are built, reshaped and stringified again (see the
// Courses and enrollments section of bench/RESULTS.md).
import { Column, is, SQL, sql } from 'drizzle-orm';

/** Keys of the public JSON (snake_case, as the presenters write them) → columns, expressions or nested objects. */
export type JsonShape = { readonly [key: string]: Column | SQL | JsonShape };

const KEY = /^[a-z][a-z0-9_]*$/;

/** `json_object(...)` of a shape; keys are code constants, checked and written inline. */
export function jsonObject(shape: JsonShape): SQL {
  const members = Object.entries(shape).map(([key, value]) => {
    if (!KEY.test(key)) throw new Error(`not a JSON key for SQL: ${key}`);
    const expression = is(value, Column) || is(value, SQL) ? value : jsonObject(value);
    return sql`${sql.raw(`'${key}'`)}, ${expression}`;
  });
  return sql`json_object(${sql.join(members, sql`, `)})`;
}

/**
 * One JSON array text of rows that each hold one JSON object text (a query selecting
 * `jsonObject(...)` alone). Joined here rather than by `json_group_array`, which re-parses every
 * object it is given: 40% slower on a page of 100.
 */
export function jsonArrayText(rows: unknown[][]): string {
  return `[${rows.map((row) => row[0] as string).join(',')}]`;
}
