// JSON written by SQLite, for the hottest list pages: each row of a page of 100 comes back as one
// JSON object text made in SQLite's C code (`json_object`), spliced into the answer as it is,
// instead of a thousand JavaScript values that are built, reshaped and stringified again (see the
// Courses and enrollments section of bench/RESULTS.md).
import { Column, is, SQL, sql, type SQLWrapper, type Subquery } from 'drizzle-orm';
import type { Db } from '../../db/client';

/** Keys of the public JSON (snake_case, as the presenters write them) → columns, expressions or nested objects. */
export type JsonShape = { readonly [key: string]: Column | SQL | JsonShape };

const KEY = /^[a-z][a-z0-9_]*$/;

/** `json_object(...)` of a shape; keys are code constants, checked and written inline. */
export function jsonObject(shape: JsonShape): SQL<string> {
  const members = Object.entries(shape).map(([key, value]) => {
    if (!KEY.test(key)) throw new Error(`not a JSON key for SQL: ${key}`);
    const expression = is(value, Column) || is(value, SQL) ? value : jsonObject(value);
    return sql`${sql.raw(`'${key}'`)}, ${expression}`;
  });
  return sql<string>`json_object(${sql.join(members, sql`, `)})`;
}

/**
 * The JSON array of a page query's objects, concatenated by SQLite into one string per page (not
 * `json_group_array`, which re-parses every object). SQLite keeps a FROM-clause subquery's ORDER BY
 * under this aggregate, so the objects stay in the page's order; the list tests check it.
 */
const jsonArrayText = (objects: SQLWrapper): SQL<string> => sql<string>`'[' || coalesce(group_concat(${objects}, ','), '') || ']'`;

/** An empty page, as jsonArrayText writes it. */
export const EMPTY_JSON_ARRAY = '[]';

/** A page's objects: a query selecting `jsonObject(...).as('json')` alone, in the page's order. */
type JsonObjectsQuery = { as(alias: 'page'): Subquery<'page', { json: SQL.Aliased<string> }> & { json: SQL.Aliased<string> } };

/** The query answering the page of `objects` as one JSON array text (jsonArrayText above). */
export function selectJsonArray(db: Db, objects: JsonObjectsQuery) {
  const page = objects.as('page');
  return db.select({ json: jsonArrayText(page.json) }).from(page);
}

/** The array text a selectJsonArray statement answered, or an empty page when it had no row. */
export const jsonArrayFrom = (row: { json: string } | undefined): string => row?.json ?? EMPTY_JSON_ARRAY;
