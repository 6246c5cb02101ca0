// Gradebook benchmark (issue 5): one offering with 1,000 students and 100 assignments (100,000
// grades, inserted directly in one transaction) on a real SQLite file, served over HTTP on
// 127.0.0.1 (port 0). Sequential timed requests as the instructor: the summary (target < 100 ms
// median), the CSV export (< 500 ms) and a page of assignments (< 5 ms); then the summary and CSV
// again for the same class with a tenth of its grades missing.
//   npm run bench -- gradebook   (or npx tsx bench/gradebook.ts)
import { eq } from 'drizzle-orm';
import { analyze } from '../db/client';
import { courses, enrollments, gradebookAssignments, gradebookGrades, users } from '../db/schema';
import { createApp } from '../src/app';
import { newId } from '../src/lib/ids';
import { benchDeps, listen, printResults, runBench, tempDatabase, timeRequests } from './helpers/common';

const STUDENTS = 1_000;
const ASSIGNMENTS = 100;
const RUNS = 30;
const WARMUP = 5;

const { database, dispose } = tempDatabase('gradebook');

/**
 * Fills an offering directly (this measures reading a gradebook, not writing one) with the given
 * students; `missing` is the share of grades left out, at random.
 */
function seedOffering(tenantId: string, instructorId: string, studentIds: string[], slug: string, missing: number): string {
  const now = new Date().toISOString();
  const offeringId = newId();
  database.db.transaction((tx) => {
    tx.insert(courses).values({ id: offeringId, tenantId, title: slug, slug, status: 'published', createdBy: instructorId, createdAt: now, updatedAt: now }).run();
    tx.insert(enrollments).values({ id: newId(), tenantId, courseId: offeringId, userId: instructorId, role: 'instructor', enrolledAt: now, updatedAt: now }).run();
    for (const id of studentIds) {
      tx.insert(enrollments).values({ id: newId(), tenantId, courseId: offeringId, userId: id, role: 'student', enrolledAt: now, updatedAt: now }).run();
    }
    const categories = ['homework', 'quizzes', 'exams', 'projects'];
    const assignments: { id: string; max: number }[] = [];
    for (let a = 0; a < ASSIGNMENTS; a++) {
      const id = newId();
      const max = [10, 20, 50, 100][a % 4]!;
      assignments.push({ id, max });
      tx.insert(gradebookAssignments)
        .values({
          id, tenantId, courseId: offeringId, label: `Assignment ${a + 1}`, resourceLinkId: id, scoreMaximum: max,
          weight: 1 + (a % 3), category: categories[a % 4]!, gradingType: 'points', position: a, createdBy: instructorId, createdAt: now, updatedAt: now,
        })
        .run();
    }
    // Multi-row inserts of one student's grades at a time: 100 rows × 9 values stays far below
    // SQLite's parameter limit.
    let x = 12345;
    const random = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const studentId of studentIds) {
      const rows = assignments
        .filter(() => random() >= missing)
        .map((a) => ({
          id: newId(), tenantId, courseId: offeringId, assignmentId: a.id, studentId, score: Math.round(random() * a.max * 2) / 2,
          gradedBy: instructorId, createdAt: now, updatedAt: now,
        }));
      if (rows.length > 0) tx.insert(gradebookGrades).values(rows).run();
    }
  });
  return offeringId;
}

function seedUsers(tenantId: string): { instructorId: string; studentIds: string[] } {
  const now = new Date().toISOString();
  const instructorId = newId();
  const studentIds = Array.from({ length: STUDENTS }, () => newId());
  database.db.transaction((tx) => {
    tx.insert(users).values({ id: instructorId, tenantId, email: 'instructor@bench.example.com', name: 'Instructor', role: 'member', createdAt: now, updatedAt: now }).run();
    studentIds.forEach((id, i) => {
      tx.insert(users).values({ id, tenantId, email: `student${i}@bench.example.com`, name: `Student ${String(i).padStart(4, '0')}`, role: 'member', createdAt: now, updatedAt: now }).run();
    });
  });
  return { instructorId, studentIds };
}

/**
 * Wall time per request, and the CPU time this process spent on it (server and client share the
 * process). On a machine shared with other work, wall time includes waiting for a core; CPU time
 * is close to what the request costs on an idle one.
 */
const time = (url: string, token: string, request?: (i: number) => RequestInit) => timeRequests(url, token, { runs: RUNS, warmup: WARMUP, request });

async function main() {
  const deps = await benchDeps(database);
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const seedStarted = performance.now();
  const { instructorId, studentIds } = seedUsers(tenantId);
  const offeringId = seedOffering(tenantId, instructorId, studentIds, 'bench-full', 0);
  // The same class with a tenth of the grades missing: the gradebook's slower path (gaps).
  const gappyOfferingId = seedOffering(tenantId, instructorId, studentIds, 'bench-gaps', 0.1);
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  analyze(database.sqlite);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const token = await deps.signer.sign({ id: instructorId, tenantId, role: 'member' });
  const firstAssignmentId = database.db.select({ id: gradebookAssignments.id }).from(gradebookAssignments).where(eq(gradebookAssignments.courseId, offeringId)).orderBy(gradebookAssignments.position).get()!.id;

  const app = createApp(deps);
  const server = await listen(app.fetch);
  const { port } = server;
  const base = `http://127.0.0.1:${port}/api/gradebook/offerings/${offeringId}`;
  const gappyBase = `http://127.0.0.1:${port}/api/gradebook/offerings/${gappyOfferingId}`;

  const results = [
    // The floor every request pays (HTTP, auth, logging), for reading the figures below.
    { name: 'GET /api/users/me', target: Number.POSITIVE_INFINITY, ...(await time(`http://127.0.0.1:${port}/api/users/me`, token)) },
    { name: 'summary', target: 100, ...(await time(`${base}/summary`, token)) },
    { name: 'CSV export', target: 500, ...(await time(`${base}/grades?format=csv`, token)) },
    { name: 'assignments page (100)', target: 5, ...(await time(`${base}/assignments`, token)) },
    { name: 'summary, 10% missing', target: 100, ...(await time(`${gappyBase}/summary`, token)) },
    { name: 'CSV export, 10% missing', target: 500, ...(await time(`${gappyBase}/grades?format=csv`, token)) },
    // What keeping each student's packed row costs a write (no target): re-grading one student of the full class.
    { name: 'PUT a grade (re-grade)', target: Number.POSITIVE_INFINITY, ...(await time(`http://127.0.0.1:${port}/api/gradebook/assignments/${firstAssignmentId}/grades/${studentIds[0]}`, token, (i) => ({ method: 'PUT', body: JSON.stringify({ score: i % 10 }) }))) },
  ];

  console.log(
    `Gradebook: ${STUDENTS} students × ${ASSIGNMENTS} assignments = ${STUDENTS * ASSIGNMENTS} grades, plus the same class with 10% of grades missing (seeded in ${seedSeconds.toFixed(1)} s)`,
  );
  // The figures depend on what else the machine runs; say so next to them.
  const missed = printResults(results, { runs: RUNS, warmup: WARMUP, nameWidth: 24 });

  // Like every benchmark here: a missed target is a non-zero exit (`npm run bench` reports it).
  if (missed) process.exitCode = 1;

  await server.close();
}

runBench(main, dispose);
