// The schema level of a database: which of this code's migrations (db/migrations, as drizzle-kit
// journals them) it has applied, and whether it holds migrations this code does not know, which a
// newer version of the server applied. Such a database is never migrated nor served: this code
// would misread tables it does not know, and drizzle would run migrations out of order.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';

export const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface MigrationLevel {
  /** Migrations recorded in the database's __drizzle_migrations. */
  applied: number;
  /** Migrations this code has. */
  known: number;
  /** Recorded migrations that are none of this code's (by content hash and by journal time). */
  unknown: number;
}

let knownMigrations: { hashes: Set<string>; times: Set<number>; count: number } | undefined;

function known() {
  if (!knownMigrations) {
    const files = readMigrationFiles({ migrationsFolder });
    knownMigrations = { hashes: new Set(files.map((m) => m.hash)), times: new Set(files.map((m) => m.folderMillis)), count: files.length };
  }
  return knownMigrations;
}

/** The database's migration level; a database without the table (a new one) has applied none. */
export function migrationLevel(sqlite: Database.Database): MigrationLevel {
  const mine = known();
  const table = sqlite.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return { applied: 0, known: mine.count, unknown: 0 };
  const rows = sqlite.prepare('SELECT hash, created_at AS createdAt FROM __drizzle_migrations').all() as { hash: string; createdAt: number | string }[];
  // A migration is this code's if its content or its journal time is: a migration file whose
  // text was touched up (whitespace, a comment) is still the same step.
  const unknown = rows.filter((r) => !mine.hashes.has(r.hash) && !mine.times.has(Number(r.createdAt))).length;
  return { applied: rows.length, known: mine.count, unknown };
}

/** True when the database holds migrations this code does not know (see MigrationLevel). */
export const isNewerSchema = (level: MigrationLevel): boolean => level.unknown > 0 || level.applied > level.known;

/** Thrown instead of migrating (or serving) a database from a newer version of the server. */
export class NewerSchemaError extends Error {
  readonly code = 'LMS_NEWER_SCHEMA';
  constructor(readonly level: MigrationLevel) {
    super(
      `its schema is newer than this version of the server knows (${level.applied} migrations applied, ` +
        `${level.unknown} of them unknown here; this version has ${level.known}): run the version that wrote it, ` +
        'or restore a backup taken with this one',
    );
  }
}
