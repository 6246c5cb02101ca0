// The database handle: its pragmas, transactions on the one connection, planner statistics without STAT4 samples (see
// analyze() in db/client.ts: with samples, every prepared statement is planned again on each execution), background
// checkpoints, tenant_id on every tenant's table, and migrations that rebuild a table keep its rows.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze, inTransaction, openDatabase, startBackgroundCheckpoints, walPressed, walRoom } from '../db/client';
import { fileGrows, fillWal } from './helpers/checkpoints';
import { eventually } from './helpers/collab';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDbFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lms-database-'));
  dirs.push(dir);
  return path.join(dir, 'lms.sqlite');
}

const count = (sqlite: Database.Database, table: string): number =>
  (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/** A table with an index and enough rows for ANALYZE to sample it. */
function fill(sqlite: Database.Database): void {
  sqlite.exec('CREATE TABLE probe (a INTEGER, b TEXT); CREATE INDEX probe_a ON probe (a);');
  const insert = sqlite.prepare('INSERT INTO probe (a, b) VALUES (?, ?)');
  sqlite.transaction(() => {
    for (let i = 0; i < 2_000; i++) insert.run(i % 50, `row ${i}`);
  })();
}

describe('the database file', () => {
  it('opens with the pragmas of the design: WAL, foreign keys, NORMAL sync, a busy timeout', () => {
    const database = openDatabase(tempDbFile());
    try {
      const sqlite = database.sqlite;
      expect(sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(sqlite.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
      expect(sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(sqlite.pragma('temp_store', { simple: true })).toBe(2); // MEMORY
    } finally {
      database.close();
    }
  });

  it('has tenant_id in every table but the platform-wide ones', () => {
    const database = openDatabase(':memory:');
    try {
      const sqlite = database.sqlite;
      // Platform-wide: the tenants themselves, the signing keys, the first-start record, drizzle's
      // journal, and the full-text index (FTS5 and its shadow tables, keyed by document_search rows).
      const global = /^(tenants|signing_keys|lti_platform_keys|system_state|__drizzle_migrations|documents_fts(_\w+)?|sqlite_\w+)$/;
      const tables = (sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
      const tenantTables = tables.filter((name) => !global.test(name));
      expect(tenantTables.length).toBeGreaterThan(20);
      const withoutTenant = tenantTables.filter(
        (name) => !(sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[]).some((c) => c.name === 'tenant_id'),
      );
      expect(withoutTenant).toEqual([]);
    } finally {
      database.close();
    }
  });
});

describe('planner statistics', () => {
  it('analyze() keeps sqlite_stat1 and no sqlite_stat4 samples', () => {
    const database = openDatabase(tempDbFile());
    try {
      fill(database.sqlite);
      analyze(database.sqlite, true);
      expect(count(database.sqlite, "sqlite_stat1 WHERE tbl = 'probe'")).toBeGreaterThan(0);
      expect(count(database.sqlite, 'sqlite_stat4')).toBe(0);
      // The statistics still serve the planner: the index is used.
      const plan = database.sqlite.prepare('EXPLAIN QUERY PLAN SELECT b FROM probe WHERE a = ?').all(7) as { detail: string }[];
      expect(plan.map((r) => r.detail).join()).toContain('probe_a');
    } finally {
      database.close();
    }
  });

  it('drops the samples a full ANALYZE by another tool left, when it opens the file', () => {
    const file = tempDbFile();
    openDatabase(file).close();
    const raw = new Database(file);
    fill(raw);
    raw.exec('ANALYZE');
    expect(count(raw, 'sqlite_stat4')).toBeGreaterThan(0);
    raw.close();

    const database = openDatabase(file);
    expect(count(database.sqlite, 'sqlite_stat4')).toBe(0);
    expect(count(database.sqlite, "sqlite_stat1 WHERE tbl = 'probe'")).toBeGreaterThan(0);
    database.close();
  });
});

describe('inTransaction', () => {
  it('commits what the callback wrote, rolls all of it back when it throws, and nests as a savepoint', () => {
    const database = openDatabase(':memory:');
    try {
      const { sqlite, db } = database;
      sqlite.exec('CREATE TABLE probe (a INTEGER)');
      const insert = sqlite.prepare('INSERT INTO probe (a) VALUES (?)');
      const values = () => (sqlite.prepare('SELECT a FROM probe ORDER BY a').all() as { a: number }[]).map((r) => r.a);

      expect(inTransaction(db, (tx) => {
        expect(tx).toBe(db);
        expect(sqlite.inTransaction).toBe(true);
        insert.run(1);
        return 'done';
      }, { behavior: 'immediate' })).toBe('done');
      expect(sqlite.inTransaction).toBe(false);

      expect(() =>
        inTransaction(db, () => {
          insert.run(2);
          throw new Error('no');
        }),
      ).toThrow('no');
      expect(values()).toEqual([1]);

      inTransaction(db, (tx) => {
        insert.run(3);
        expect(() =>
          inTransaction(tx, () => {
            insert.run(4);
            throw new Error('inner');
          }),
        ).toThrow('inner');
        insert.run(5);
      });
      expect(values()).toEqual([1, 3, 5]);
    } finally {
      database.close();
    }
  });

  it('holds the write lock from its start, so that another connection cannot commit between its reads and its writes', () => {
    const file = tempDbFile();
    const database = openDatabase(file);
    // Another writer of the file: the admin command beside the server, say. It does not wait.
    const other = new Database(file, { timeout: 0 });
    try {
      const { sqlite, db } = database;
      sqlite.exec('CREATE TABLE probe (a INTEGER)');
      const insert = sqlite.prepare('INSERT INTO probe (a) VALUES (?)');
      const readThenWrite = (between: () => void, behavior?: 'deferred') =>
        inTransaction(
          db,
          () => {
            sqlite.prepare('SELECT count(*) FROM probe').get();
            between();
            insert.run(1);
          },
          behavior ? { behavior } : undefined,
        );
      // Deferred, the other connection's commit in between leaves it unable to write.
      expect(() => readThenWrite(() => other.exec('INSERT INTO probe (a) VALUES (2)'), 'deferred')).toThrow(
        expect.objectContaining({ code: 'SQLITE_BUSY_SNAPSHOT' }),
      );
      // By default the other connection waits (here: is refused at once) and this one writes.
      let refused: unknown;
      readThenWrite(() => {
        try {
          other.exec('INSERT INTO probe (a) VALUES (3)');
        } catch (err) {
          refused = err;
        }
      });
      expect(refused).toMatchObject({ code: 'SQLITE_BUSY' });
      expect((sqlite.prepare('SELECT a FROM probe ORDER BY a').all() as { a: number }[]).map((r) => r.a)).toEqual([1, 2]);
    } finally {
      other.close();
      database.close();
    }
  });
});

describe('background checkpoints', () => {
  it('copies the WAL into the database file from a worker thread, not the serving connection', async () => {
    const file = tempDbFile();
    const database = openDatabase(file);
    const checkpoints = startBackgroundCheckpoints(database, { intervalMs: 20 });
    try {
      // The serving connection only checkpoints itself far above what fillWal writes (256 MiB of 4 KiB pages).
      expect(database.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(65_536);
      fillWal(database.sqlite);
      expect(await fileGrows(file, 1_000_000, 10_000)).toBe(true);
    } finally {
      await checkpoints.stop();
      database.close();
    }
  });

  it('holds background writers (walRoom) while the WAL is large and not yet copied, and lets them go once it is', async () => {
    const file = tempDbFile();
    const database = openDatabase(file);
    // Without background checkpoints nothing waits.
    await walRoom(database.db);
    const checkpoints = startBackgroundCheckpoints(database, { intervalMs: 20, pressureFrames: 100, maxWaitMs: 60_000 });
    const reader = new Database(file);
    try {
      expect(walPressed(database.db)).toBe(false);
      // A reader's snapshot from before the writes: no checkpoint may copy what came after it.
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM sqlite_master').get();
      fillWal(database.sqlite);
      await eventually(() => walPressed(database.db), 10_000, 'the WAL seen as large');
      let released = false;
      const waiting = walRoom(database.db).then(() => (released = true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(released).toBe(false);
      reader.exec('COMMIT');
      await waiting;
      expect(walPressed(database.db)).toBe(false);
    } finally {
      reader.close();
      await checkpoints.stop();
      database.close();
    }
  });

  it('starts a WAL past the mark over once all of it is copied, rather than letting it grow', async () => {
    const file = tempDbFile();
    const database = openDatabase(file);
    const checkpoints = startBackgroundCheckpoints(database, { intervalMs: 20, pressureFrames: 100 });
    try {
      fillWal(database.sqlite);
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(1_000_000);
      await eventually(() => statSync(`${file}-wal`).size === 0, 10_000, 'the WAL started over');
    } finally {
      await checkpoints.stop();
      database.close();
    }
  });

  it("still runs when the process was started with preloads a worker could not load", async () => {
    const file = tempDbFile();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--import', './test/helpers/ts-preload.ts', 'test/helpers/checkpoint-child.ts', file],
      { timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ grew: true, autocheckpoint: 65_536, warnings: [] });
  });
});

/** A copy of db/migrations holding only the migrations before `tag`, to build an older database. */
function migrationsBefore(tag: string): string {
  const folder = path.join(mkdtempSync(path.join(tmpdir(), 'lms-migrations-')), 'migrations');
  dirs.push(path.dirname(folder));
  cpSync(path.join(import.meta.dirname, '..', 'db', 'migrations'), folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(at).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

const AT = '2026-11-23T12:00:00.000Z';

/**
 * A database file migrated up to just before `tag`, holding these tenants, users ([id, tenant])
 * and documents ([id, tenant, title, creator]), written as that older schema had them. The caller
 * adds its own rows to `old`, closes it, and opens the file with `openDatabase` to migrate it.
 */
function databaseBefore(
  tag: string,
  rows: { tenants: string[]; users: [string, string][]; documents: [string, string, string, string][] },
): { file: string; old: Database.Database } {
  const file = tempDbFile();
  const old = new Database(file);
  old.pragma('journal_mode = WAL');
  old.pragma('foreign_keys = ON');
  migrate(drizzle(old), { migrationsFolder: migrationsBefore(tag) });
  const insertTenant = old.prepare('INSERT INTO tenants (id, name, slug, created_at) VALUES (?, ?, ?, ?)');
  for (const id of rows.tenants) insertTenant.run(id, id.toUpperCase(), id, AT);
  const insertUser = old.prepare('INSERT INTO users (id, tenant_id, email, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
  for (const [id, tenantId] of rows.users) insertUser.run(id, tenantId, `${id}@example.com`, id.toUpperCase(), AT, AT);
  const insertDocument = old.prepare('INSERT INTO documents (id, tenant_id, title, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
  for (const [id, tenantId, title, createdBy] of rows.documents) insertDocument.run(id, tenantId, title, createdBy, AT, AT);
  return { file, old };
}

describe('migration 0013: document_updates without AUTOINCREMENT', () => {
  it('keeps every row and id of an existing log, and new ids follow the largest', () => {
    const { file, old } = databaseBefore('0013_document_updates_rowid', {
      tenants: ['t1'],
      users: [['u1', 't1']],
      documents: [
        ['d1', 't1', 'One', 'u1'],
        ['d2', 't1', 'Two', 'u1'],
      ],
    });
    const insertUpdate = old.prepare(
      'INSERT INTO document_updates (id, document_id, tenant_id, user_id, created_at, bytes, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    insertUpdate.run(1, 'd1', 't1', 'u1', AT, 2, Buffer.from([1, 2]));
    insertUpdate.run(2, 'd1', 't1', null, AT, 3, null);
    insertUpdate.run(7, 'd2', 't1', 'u1', AT, 1, Buffer.from([9]));
    const rowsBefore = old.prepare('SELECT * FROM document_updates ORDER BY id').all();
    expect(old.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'document_updates'").get()).toEqual({ seq: 7 });
    old.close();

    const database = openDatabase(file);
    try {
      const sqlite = database.sqlite;
      expect(sqlite.prepare('SELECT * FROM document_updates ORDER BY id').all()).toEqual(rowsBefore);
      const tableSql = (sqlite.prepare("SELECT sql FROM sqlite_schema WHERE name = 'document_updates'").get() as { sql: string }).sql;
      expect(tableSql).not.toMatch(/AUTOINCREMENT/i);
      expect(count(sqlite, "sqlite_sequence WHERE name = 'document_updates'")).toBe(0);
      expect(count(sqlite, "sqlite_schema WHERE type = 'index' AND name = 'document_updates_doc_idx'")).toBe(1);

      const append = sqlite.prepare(
        'INSERT INTO document_updates (document_id, tenant_id, user_id, created_at, bytes, data) VALUES (?, ?, ?, ?, ?, ?)',
      );
      expect(Number(append.run('d1', 't1', 'u1', AT, 1, Buffer.from([3])).lastInsertRowid)).toBe(8);
      // The foreign keys hold as before: no row for an unknown document, and an erased document
      // takes its rows with it.
      expect(() => append.run('nope', 't1', 'u1', AT, 1, Buffer.from([4]))).toThrow(/FOREIGN KEY/);
      sqlite.prepare("DELETE FROM documents WHERE id = 'd2'").run();
      expect(sqlite.prepare('SELECT id FROM document_updates ORDER BY id').all()).toEqual([{ id: 1 }, { id: 2 }, { id: 8 }]);
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      database.close();
    }
  });
});

describe('migration 0014: document_states with tenant_id', () => {
  it("gives every existing state its document's tenant and keeps the rest of the row", () => {
    const { file, old } = databaseBefore('0014_document_states_tenant', {
      tenants: ['t1', 't2'],
      users: [
        ['u1', 't1'],
        ['u2', 't2'],
      ],
      documents: [
        ['d1', 't1', 'One', 'u1'],
        ['d2', 't2', 'Two', 'u2'],
      ],
    });
    const insertState = old.prepare(
      'INSERT INTO document_states (document_id, state, through_update_id, cleared_through_update_id, updated_at) VALUES (?, ?, ?, ?, ?)',
    );
    insertState.run('d1', Buffer.from([1, 2, 3]), 40, 40, AT);
    insertState.run('d2', Buffer.from([4]), 9, 3, AT);
    old.close();

    const database = openDatabase(file);
    try {
      const sqlite = database.sqlite;
      // (markdown and parts_generation: added by later migrations, null in rows from before them.)
      expect(sqlite.prepare('SELECT * FROM document_states ORDER BY document_id').all()).toEqual([
        { document_id: 'd1', tenant_id: 't1', state: Buffer.from([1, 2, 3]), through_update_id: 40, cleared_through_update_id: 40, updated_at: AT, markdown: null, parts_generation: null },
        { document_id: 'd2', tenant_id: 't2', state: Buffer.from([4]), through_update_id: 9, cleared_through_update_id: 3, updated_at: AT, markdown: null, parts_generation: null },
      ]);
      // The partial index of unfinished clearings is back, and still only holds d2.
      expect(count(sqlite, "sqlite_schema WHERE type = 'index' AND name = 'document_states_uncleared_idx'")).toBe(1);
      expect(
        sqlite.prepare('SELECT document_id FROM document_states INDEXED BY document_states_uncleared_idx WHERE cleared_through_update_id < through_update_id').all(),
      ).toEqual([{ document_id: 'd2' }]);
      // The foreign keys hold: a state needs a known tenant, and an erased document takes its state with it.
      sqlite.prepare("DELETE FROM document_states WHERE document_id = 'd1'").run();
      expect(() =>
        sqlite.prepare("INSERT INTO document_states (document_id, tenant_id, state, through_update_id, updated_at) VALUES ('d1', 'nope', x'00', 1, ?)").run(AT),
      ).toThrow(/FOREIGN KEY/);
      sqlite.prepare("DELETE FROM documents WHERE id = 'd2'").run();
      expect(count(sqlite, 'document_states')).toBe(0);
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      database.close();
    }
  });
});

describe('migration 0015: no hit marks in indexed bodies', () => {
  it('turns the snippet hit marks of stored bodies into U+FFFD and re-indexes them', () => {
    const { file, old } = databaseBefore('0015_search_hit_marks', {
      tenants: ['t1'],
      users: [['u1', 't1']],
      documents: [
        ['d1', 't1', 'Marked', 'u1'],
        ['d2', 't1', 'Plain', 'u1'],
      ],
    });
    // The documents trigger made both search rows; the bodies come from the index's writer.
    const setBody = old.prepare('UPDATE document_search SET body = ? WHERE document_id = ?');
    setBody.run('a \uE000fake\uE001 hit and zebra', 'd1');
    setBody.run('plain zebra', 'd2');
    old.close();

    const database = openDatabase(file);
    try {
      const sqlite = database.sqlite;
      expect(sqlite.prepare('SELECT document_id, body FROM document_search ORDER BY document_id').all()).toEqual([
        { document_id: 'd1', body: 'a \uFFFDfake\uFFFD hit and zebra' },
        { document_id: 'd2', body: 'plain zebra' },
      ]);
      // The index followed: the word is still found, and a snippet's only marks are its hits.
      const snippets = sqlite
        .prepare(
          `SELECT s.document_id AS id, snippet(documents_fts, 1, char(57344), char(57345), '…', 16) AS snippet
           FROM documents_fts JOIN document_search s ON s.id = documents_fts.rowid WHERE documents_fts MATCH '"fake"' ORDER BY s.document_id`,
        )
        .all();
      expect(snippets).toEqual([{ id: 'd1', snippet: 'a \uFFFD\uE000fake\uE001\uFFFD hit and zebra' }]);
    } finally {
      database.close();
    }
  });
});

describe('migration 0038: composite keys stored as the key', () => {
  const TABLES = ['gradebook_student_scores', 'event_recipients', 'lti_scores'];
  const withoutRowid = (sqlite: Database.Database, table: string) =>
    /WITHOUT ROWID\s*$/i.test((sqlite.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').get(table) as { sql: string }).sql);

  it('keeps every row, and grades still keep the packed scores right', () => {
    const { file, old } = databaseBefore('0038_composite_keys_without_rowid', {
      tenants: ['t1'],
      users: [
        ['teacher', 't1'],
        ['s1', 't1'],
        ['s2', 't1'],
      ],
      documents: [],
    });
    old.prepare("INSERT INTO courses (id, tenant_id, title, slug, status, created_by, created_at, updated_at) VALUES ('c1', 't1', 'C', 'c', 'published', 'teacher', ?, ?)").run(AT, AT);
    const insertAssignment = old.prepare(
      "INSERT INTO gradebook_assignments (id, tenant_id, course_id, label, resource_link_id, score_maximum, category, position, created_by, created_at, updated_at) VALUES (?, 't1', 'c1', ?, ?, 10, 'assignment', ?, 'teacher', ?, ?)",
    );
    for (const [i, id] of ['a1', 'a2', 'a3'].entries()) insertAssignment.run(id, id, id, i, AT, AT);
    const insertGrade = old.prepare(
      "INSERT INTO gradebook_grades (id, tenant_id, course_id, assignment_id, student_id, score, graded_by, created_at, updated_at) VALUES (?, 't1', 'c1', ?, ?, ?, 'teacher', ?, ?)",
    );
    insertGrade.run('g1', 'a1', 's1', 4, AT, AT);
    insertGrade.run('g2', 'a2', 's1', 6, AT, AT);
    old.prepare("INSERT INTO events (id, tenant_id, type, subject_type, subject_id, payload, occurred_at) VALUES ('e1', 't1', 'grade.recorded', 'grade', 'g1', '{}', ?)").run(AT);
    old.prepare("INSERT INTO event_recipients (user_id, event_seq, tenant_id) VALUES ('s1', 1, 't1'), ('s2', 1, 't1')").run();
    old.prepare(
      "INSERT INTO lti_scores (assignment_id, user_id, tenant_id, score_given, score_maximum, activity_progress, grading_progress, comment, timestamp, updated_at) VALUES ('a1', 's1', 't1', 2, 5, 'Completed', 'FullyGraded', 'ok', ?, ?)",
    ).run(AT, AT);
    const before = Object.fromEntries(TABLES.map((t) => [t, old.prepare(`SELECT * FROM ${t} ORDER BY 1, 2, 3`).all()]));
    expect(before.gradebook_student_scores).toEqual([{ course_id: 'c1', tenant_id: 't1', student_id: 's1', assignment_ids: 'a1a2', scores: '[4.0,6.0]' }]);
    old.close();

    const database = openDatabase(file);
    try {
      const sqlite = database.sqlite;
      for (const table of TABLES) {
        expect(withoutRowid(sqlite, table)).toBe(true);
        expect(sqlite.prepare(`SELECT * FROM ${table} ORDER BY 1, 2, 3`).all()).toEqual(before[table]);
      }
      for (const index of ['gradebook_student_scores_tenant_idx', 'gradebook_student_scores_student_idx', 'event_recipients_event_idx', 'event_recipients_tenant_idx', 'lti_scores_user_idx', 'lti_scores_tenant_idx']) {
        expect(count(sqlite, `sqlite_schema WHERE type = 'index' AND name = '${index}'`)).toBe(1);
      }
      const packed = (student: string) => sqlite.prepare("SELECT assignment_ids, scores FROM gradebook_student_scores WHERE course_id = 'c1' AND tenant_id = 't1' AND student_id = ?").get(student);
      // A new grade, a changed one, a student's first, and deleting grades: the packed row follows each.
      const grade = sqlite.prepare(
        "INSERT INTO gradebook_grades (id, tenant_id, course_id, assignment_id, student_id, score, graded_by, created_at, updated_at) VALUES (?, 't1', 'c1', ?, ?, ?, 'teacher', ?, ?)",
      );
      grade.run('g3', 'a3', 's1', 9, AT, AT);
      expect(packed('s1')).toEqual({ assignment_ids: 'a1a2a3', scores: '[4.0,6.0,9.0]' });
      sqlite.prepare("UPDATE gradebook_grades SET score = 5 WHERE id = 'g2'").run();
      expect(packed('s1')).toEqual({ assignment_ids: 'a1a2a3', scores: '[4.0,5.0,9.0]' });
      grade.run('g4', 'a1', 's2', 1, AT, AT);
      expect(packed('s2')).toEqual({ assignment_ids: 'a1', scores: '[1.0]' });
      sqlite.prepare("DELETE FROM gradebook_grades WHERE id IN ('g1', 'g3')").run();
      expect(packed('s1')).toEqual({ assignment_ids: 'a2', scores: '[5.0]' });
      sqlite.prepare("DELETE FROM gradebook_grades WHERE id = 'g4'").run();
      expect(packed('s2')).toBeUndefined();
      // A grade moved to another student re-packs both.
      sqlite.prepare("UPDATE gradebook_grades SET student_id = 's2' WHERE id = 'g2'").run();
      expect(packed('s1')).toBeUndefined();
      expect(packed('s2')).toEqual({ assignment_ids: 'a2', scores: '[5.0]' });
      // The keys and foreign keys hold as before.
      expect(() => sqlite.prepare("INSERT INTO event_recipients (user_id, event_seq, tenant_id) VALUES ('s1', 1, 't1')").run()).toThrow(/UNIQUE|PRIMARY KEY/);
      expect(() => sqlite.prepare("INSERT INTO event_recipients (user_id, event_seq, tenant_id) VALUES ('nobody', 1, 't1')").run()).toThrow(/FOREIGN KEY/);
      sqlite.prepare("DELETE FROM gradebook_assignments WHERE id = 'a1'").run();
      expect(count(sqlite, 'lti_scores')).toBe(0);
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      database.close();
    }
  });

  it('makes a new database with them too', () => {
    const database = openDatabase(':memory:');
    try {
      for (const table of TABLES) expect(withoutRowid(database.sqlite, table)).toBe(true);
    } finally {
      database.close();
    }
  });
});
