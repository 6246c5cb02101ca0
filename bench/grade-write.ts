// One graded score's write, on this schema and on the schema before migration 0038 (composite keys
// stored as their key, the packed grades kept by an upsert), in the same run: two SQLite files with
// the server's pragmas and the same rows (a course of 5,000 students and 10 assignments), written
// by turns, 500 transactions at a time. Each transaction is what an AGS score that grades writes:
// the score's row, then the gradebook's `recordGrade` (the grade, its history, the event and its
// recipient, the packed grades through the triggers). The first 5,000 give each student a first
// grade; the rest a second assignment's. Reports the median time per transaction and the WAL
// pages each one wrote. No target: it tells what the LTI benchmark's score holds the event loop for.
//   npx tsx bench/grade-write.ts
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { inTransaction, type Db } from '../db/client';
import { migrationsFolder } from '../db/migration-level';
import * as schema from '../db/schema';
import { gradebookAssignments } from '../db/schema';
import { recordGrade } from '../src/gradebook/grades';
import { systemClock } from '../src/lib/clock';
import { newId } from '../src/lib/ids';

const BEFORE = '0038_composite_keys_without_rowid';
const STUDENTS = 5_000;
const ASSIGNMENTS = 10;
const BATCH = 500;
const ROUNDS = 20;
const WAL_FRAME_BYTES = 24 + 4096;

const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-grade-write-'));

/** db/migrations without `tag` and what follows it. */
function migrationsBefore(tag: string): string {
  const folder = path.join(dir, 'migrations-before');
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((entry) => entry.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

function setUp(name: string, folder: string) {
  const file = path.join(dir, `${name}.sqlite`);
  const sqlite = new Database(file);
  // As db/client.ts opens the server's database.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('cache_size = -32000');
  const db = drizzle(sqlite, { schema }) as unknown as Db;
  migrate(db, { migrationsFolder: folder });
  const now = new Date().toISOString();
  const tenantId = 'bench-tenant';
  const teacherId = newId();
  const courseId = newId();
  const students = Array.from({ length: STUDENTS }, () => newId());
  sqlite.transaction(() => {
    sqlite.prepare('INSERT INTO tenants (id, name, slug, created_at) VALUES (?, ?, ?, ?)').run(tenantId, 'Bench', 'bench', now);
    const user = sqlite.prepare('INSERT INTO users (id, tenant_id, email, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
    user.run(teacherId, tenantId, 'teacher@bench.example', 'Teacher', now, now);
    sqlite.prepare("INSERT INTO courses (id, tenant_id, title, slug, status, created_by, created_at, updated_at) VALUES (?, ?, 'Bench', 'bench', 'published', ?, ?, ?)").run(courseId, tenantId, teacherId, now, now);
    const enrol = sqlite.prepare("INSERT INTO enrollments (id, tenant_id, course_id, user_id, role, enrolled_at, updated_at) VALUES (?, ?, ?, ?, 'student', ?, ?)");
    for (const [i, id] of students.entries()) {
      user.run(id, tenantId, `s${i}@bench.example`, `Student ${i}`, now, now);
      enrol.run(newId(), tenantId, courseId, id, now, now);
    }
  })();
  const assignments = Array.from({ length: ASSIGNMENTS }, (_, i) =>
    db
      .insert(gradebookAssignments)
      .values({ id: newId(), tenantId, courseId, label: `A${i}`, resourceLinkId: `r${i}`, scoreMaximum: 10, category: 'assignment', position: i, createdBy: teacherId, createdAt: now, updatedAt: now })
      .returning()
      .get(),
  );
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  // The WAL is measured per batch: nothing copies it meanwhile.
  sqlite.pragma('wal_autocheckpoint = 0');
  const score = sqlite.prepare(
    `INSERT INTO lti_scores (assignment_id, user_id, tenant_id, score_given, score_maximum, activity_progress, grading_progress, timestamp, updated_at)
     VALUES (?, ?, ?, ?, 10, 'Completed', 'FullyGraded', ?, ?)
     ON CONFLICT (assignment_id, user_id) DO UPDATE SET score_given = excluded.score_given, timestamp = excluded.timestamp, updated_at = excluded.updated_at`,
  );
  let n = 0;
  const write = () => {
    const assignment = assignments[Math.floor(n / STUDENTS) % ASSIGNMENTS]!;
    const student = students[n % STUDENTS]!;
    const given = 1 + (n % 9);
    n++;
    inTransaction(db, (tx) => {
      const at = new Date().toISOString();
      score.run(assignment.id, student, tenantId, given, at, at);
      recordGrade(tx, systemClock, assignment, student, teacherId, { score: given });
    });
  };
  const walFrames = () => {
    try {
      return Math.max(0, (statSync(`${file}-wal`).size - 32) / WAL_FRAME_BYTES);
    } catch {
      return 0;
    }
  };
  return { name, sqlite, write, walFrames, perTxnMs: [] as number[], framesPerTxn: [] as number[] };
}

const before = setUp('before 0038', migrationsBefore(BEFORE));
const now = setUp('this schema', migrationsFolder);
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 === 0 ? [before, now] : [now, before]) {
    side.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const started = performance.now();
    for (let i = 0; i < BATCH; i++) side.write();
    side.perTxnMs.push((performance.now() - started) / BATCH);
    side.framesPerTxn.push(side.walFrames() / BATCH);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`One graded score's write: ${ROUNDS} × ${BATCH} transactions on each schema, by turns; Node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(2)}`);
console.log('| schema | µs per transaction (median of batches) | WAL pages per transaction |');
console.log('|---|---:|---:|');
for (const side of [before, now]) {
  console.log(`| ${side.name} | ${(median(side.perTxnMs) * 1000).toFixed(1)} | ${median(side.framesPerTxn).toFixed(1)} |`);
}
console.log(`this schema / before: ${(median(now.perTxnMs) / median(before.perTxnMs)).toFixed(2)}`);
before.sqlite.close();
now.sqlite.close();
rmSync(dir, { recursive: true, force: true });
