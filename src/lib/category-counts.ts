// How many rows fall in each category: the category lists of documents and templates.
import { asc, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client';
import { countAll } from './sql';

export interface CategoryCount {
  category: string | null;
  count: number;
}

/**
 * `[{category, count}]` over the rows of `table` that match `where`, one page of them by category
 * (the uncategorised as null, last), and `total`: how many categories there are.
 */
export function countByCategory(
  db: Db,
  table: SQLiteTable,
  category: SQLiteColumn,
  where: SQL | undefined,
  bounds: { limit: Placeholder; offset: Placeholder },
): { rows: CategoryCount[]; total: number } {
  const rows = db
    .select({ category: sql<string | null>`${category}`, count: countAll })
    .from(table)
    .where(where)
    .groupBy(category)
    .orderBy(sql`${category} IS NULL`, asc(category))
    .limit(bounds.limit)
    .offset(bounds.offset)
    .all();
  // char(0) stands for the null category, which count(DISTINCT ...) would not count.
  const total = db.select({ n: sql<number>`count(DISTINCT coalesce(${category}, char(0)))`.mapWith(Number) }).from(table).where(where).get()?.n ?? 0;
  return { rows, total };
}
