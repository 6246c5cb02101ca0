// A counter of the writes to each framework's competencies, per database: a CASE import compares
// what it staged over several turns of the event loop with the competencies as they are, and moves
// in only when nobody wrote to them meanwhile (else it stages again). Every write to competencies
// is in this area (service.ts, case.ts), and bumps the counter in its transaction.
import type Database from 'better-sqlite3';
import type { Db } from '../../db/client';

const versions = new WeakMap<Database.Database, Map<string, number>>();

const countersOf = (db: Db): Map<string, number> => {
  const client = (db as Db & { $client: Database.Database }).$client;
  let counters = versions.get(client);
  if (!counters) versions.set(client, (counters = new Map()));
  return counters;
};

export function frameworkWritten(db: Db, frameworkId: string): void {
  const counters = countersOf(db);
  counters.set(frameworkId, (counters.get(frameworkId) ?? 0) + 1);
}

export const frameworkVersion = (db: Db, frameworkId: string): number => countersOf(db).get(frameworkId) ?? 0;
