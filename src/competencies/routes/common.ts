// What the competencies' routes share: their tag, a framework's competency count, and a page of a
// list computed in memory (the mastery reports).
import type { Context } from 'hono';
import type { AppEnv } from '../../context';
import type { ApiTag } from '../../http/openapi';
import { pageOfRows, type PageQuery } from '../../http/pagination';
import { competencyCounts } from '../service';

export const tags: [ApiTag] = ['Competencies'];

export const countOf = (c: Context<AppEnv>, frameworkId: string) => competencyCounts(c.var.deps.db, [frameworkId]).get(frameworkId) ?? 0;

/** A page of a list computed in memory. */
export const pageOfList = <R, T>(c: Context<AppEnv>, q: PageQuery, all: R[], present: (r: R) => T) =>
  pageOfRows(c, q, { rows: all.slice((q.page - 1) * q.per_page, q.page * q.per_page), total: all.length }, present);
