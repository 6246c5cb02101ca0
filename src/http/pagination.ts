// Lists: `?page` (default 1) and `?per_page` (default 100, max 100; more is a 400, never clamped),
// answered as `{ data, pagination }` with an RFC 8288 Link header.
import { z } from '@hono/zod-openapi';
import type { Context, TypedResponse } from 'hono';
import { sqlLimit } from '../lib/sql';
import { wholeNumber } from '../lib/whole-number';
import { setResponseHeader } from './request-context';

export const MAX_PER_PAGE = 100;
/** Far past any real list, and small enough that every page's offset is an exact integer for SQLite. */
export const MAX_PAGE = 1_000_000_000;

export const paginationQuery = z.object({
  page: wholeNumber(1, MAX_PAGE, 'page')
    .default(1)
    .openapi({ example: 1, description: `Page number, from 1 (at most ${MAX_PAGE})` }),
  per_page: wholeNumber(1, MAX_PER_PAGE, 'per_page')
    .default(MAX_PER_PAGE)
    .openapi({ example: 100, description: 'Items per page, 1 to 100' }),
});

export type PageQuery = z.infer<typeof paginationQuery>;

export const paginationSchema = z
  .object({ page: z.number().int(), per_page: z.number().int(), total: z.number().int(), total_pages: z.number().int() })
  .openapi('Pagination');

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), pagination: paginationSchema });

export interface Page<T> {
  data: T[];
  pagination: z.infer<typeof paginationSchema>;
}

/** SQL bounds of a page. */
export const pageBounds = (q: PageQuery) => ({ limit: q.per_page, offset: (q.page - 1) * q.per_page });

/** `pageBounds` as SQL for drizzle's `.limit()` / `.offset()`: integer literals (see sqlLimit). */
export function sqlPageBounds(q: PageQuery) {
  const { limit, offset } = pageBounds(q);
  return { limit: sqlLimit(limit), offset: sqlLimit(offset) };
}

/** Wraps one page of rows, setting the Link header from the request URL. */
export function paginate<T>(c: Context, q: PageQuery, data: T[], total: number): Page<T> {
  const totalPages = Math.max(1, Math.ceil(total / q.per_page));
  // The request's other parameters (filters) are kept, serialized once for the four links.
  const url = new URL(c.req.url);
  url.searchParams.delete('page');
  url.searchParams.delete('per_page');
  const filters = url.searchParams.toString();
  const prefix = `<${url.pathname}?${filters ? `${filters}&` : ''}page=`;
  const link = (page: number, rel: string) => `${prefix}${page}&per_page=${q.per_page}>; rel="${rel}"`;
  const links = [link(1, 'first')];
  if (q.page > 1) links.push(link(Math.min(q.page - 1, totalPages), 'prev'));
  if (q.page < totalPages) links.push(link(q.page + 1, 'next'));
  links.push(link(totalPages, 'last'));
  setResponseHeader(c, 'Link', links.join(', '));
  return { data, pagination: { page: q.page, per_page: q.per_page, total, total_pages: totalPages } };
}

/** A service's page of rows as a route answers it: each row presented, with the pagination block and the Link header. */
export function pageOfRows<R, T>(c: Context, q: PageQuery, page: { rows: R[]; total: number }, present: (row: R) => T): Page<T> {
  return paginate(c, q, page.rows.map((row) => present(row)), page.total);
}

/**
 * `paginate` for a page whose items SQLite already wrote as a JSON array (src/lib/json-sql.ts): the
 * answer is spliced together around it rather than parsed and stringified again. Typed as the
 * same page.
 */
export function paginateJson<T>(c: Context, q: PageQuery, dataJson: string, total: number): TypedResponse<Page<T>, 200, 'json'> {
  const { pagination } = paginate(c, q, [], total);
  const body = `{"data":${dataJson},"pagination":${JSON.stringify(pagination)}}`;
  return c.body(body, 200, { 'Content-Type': 'application/json' }) as unknown as TypedResponse<Page<T>, 200, 'json'>;
}
