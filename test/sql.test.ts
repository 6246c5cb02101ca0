// sqlLimit (src/lib/sql.ts): LIMIT and OFFSET written so that SQLite's planner never reads a bound
// value there (which would expire a prepared statement on every new binding), with the same rows.
import { asc, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database_ } from '../db/client';
import { tenants } from '../db/schema';
import { sqlLimit } from '../src/lib/sql';

let database: Database_ | undefined;
afterEach(() => database?.close());

function withTenants(n: number): Database_ {
  database = openDatabase(':memory:');
  const at = '2026-01-01T00:00:00.000Z';
  for (let i = 0; i < n; i++) {
    database.db.insert(tenants).values({ id: `t${i}`, slug: `tenant-${i}`, name: `Tenant ${i}`, createdAt: at }).run();
  }
  return database;
}

describe('sqlLimit', () => {
  it('writes a number as an integer literal and a placeholder as a run-time expression', () => {
    const { db } = withTenants(0);
    const literal = db.select({ id: tenants.id }).from(tenants).limit(sqlLimit(5)).offset(sqlLimit(10)).toSQL();
    expect(literal.sql).toMatch(/ limit 5 offset 10$/);
    expect(literal.params).toEqual([]);
    const bound = db
      .select({ id: tenants.id })
      .from(tenants)
      .limit(sqlLimit(sql.placeholder('limit')))
      .offset(sqlLimit(sql.placeholder('offset')))
      .toSQL();
    expect(bound.sql).toMatch(/ limit \(\? \+ 0\) offset \(\? \+ 0\)$/);
  });

  it('pages a prepared statement correctly across new bindings', () => {
    const { db } = withTenants(5);
    const page = db
      .select({ slug: tenants.slug })
      .from(tenants)
      .orderBy(asc(tenants.slug))
      .limit(sqlLimit(sql.placeholder('limit')))
      .offset(sqlLimit(sql.placeholder('offset')))
      .prepare();
    expect(page.all({ limit: 2, offset: 0 }).map((r) => r.slug)).toEqual(['tenant-0', 'tenant-1']);
    expect(page.all({ limit: 2, offset: 3 }).map((r) => r.slug)).toEqual(['tenant-3', 'tenant-4']);
    expect(page.all({ limit: 1, offset: 1 }).map((r) => r.slug)).toEqual(['tenant-1']);
    expect(page.all({ limit: 10, offset: 5 })).toEqual([]);
  });

  it('refuses what is not a LIMIT or OFFSET', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => sqlLimit(bad)).toThrow(RangeError);
  });
});
