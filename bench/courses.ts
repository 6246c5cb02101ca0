// Courses and enrollments benchmark (issue 4): a course with 10,000 enrollments and a user
// enrolled in 200 courses, inserted directly into a real SQLite file, served over HTTP on
// 127.0.0.1 (port 0) by the real app. autocannon, 10 connections for 10 s per endpoint:
// the course roster (`GET /api/enrollments?course_id=`) and the user's courses
// (`GET /api/courses`). Target: under 10 ms median latency per page.
//   npx tsx bench/courses.ts
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { openDatabase } from '../db/client';
import { courses, enrollments, users } from '../db/schema';
import { createApp } from '../src/app';
import { systemClock } from '../src/clock';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { newId } from '../src/ids';
import { createLogger } from '../src/logger';

const ROSTER = 10_000;
const COURSES_OF_ONE_USER = 200;
const CONNECTIONS = 10;
const SECONDS = 10;
const UNLOADED_SECONDS = 3;
const TARGET_MS = 10;
const CHUNK = 500;

const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-courses-'));
const database = openDatabase(path.join(dir, 'bench.sqlite'));

function insertChunked<T>(insert: (rows: T[]) => void, rows: T[]): void {
  for (let i = 0; i < rows.length; i += CHUNK) insert(rows.slice(i, i + CHUNK));
}

/** Fills the database directly: this measures reading lists, not writing them. */
function seed(tenantId: string) {
  const db = database.db;
  const now = Date.now();
  const at = (i: number) => new Date(now + i).toISOString();
  const instructorId = newId();
  const learnerId = newId();
  const rosterCourseId = newId();
  db.transaction((tx) => {
    const people = [
      { id: instructorId, tenantId, email: 'instructor@bench.example.com', name: 'Instructor', createdAt: at(0), updatedAt: at(0) },
      { id: learnerId, tenantId, email: 'learner@bench.example.com', name: 'Learner', createdAt: at(0), updatedAt: at(0) },
    ];
    const students = Array.from({ length: ROSTER }, (_, i) => ({
      id: newId(),
      tenantId,
      email: `student${i}@bench.example.com`,
      name: `Student ${String(i).padStart(5, '0')}`,
      createdAt: at(i),
      updatedAt: at(i),
    }));
    insertChunked((rows) => tx.insert(users).values(rows).run(), [...people, ...students]);

    const courseRows = [
      { id: rosterCourseId, tenantId, title: 'Roster 101', slug: 'roster-101', status: 'published' as const, createdBy: instructorId, createdAt: at(0), updatedAt: at(0) },
      ...Array.from({ length: COURSES_OF_ONE_USER }, (_, i) => ({
        id: newId(),
        tenantId,
        title: `Course ${String(i).padStart(3, '0')}`,
        slug: `course-${i}`,
        status: (i % 4 === 0 ? 'draft' : 'published') as 'draft' | 'published',
        createdBy: instructorId,
        createdAt: at(i),
        updatedAt: at(i),
      })),
    ];
    insertChunked((rows) => tx.insert(courses).values(rows).run(), courseRows);

    const enrollment = (courseId: string, userId: string, role: 'instructor' | 'student', i: number) => ({
      id: newId(),
      tenantId,
      courseId,
      userId,
      role,
      status: 'active' as const,
      enrolledAt: at(i),
      updatedAt: at(i),
    });
    insertChunked(
      (rows) => tx.insert(enrollments).values(rows).run(),
      [
        enrollment(rosterCourseId, instructorId, 'instructor', 0),
        ...students.map((s, i) => enrollment(rosterCourseId, s.id, 'student', i + 1)),
        ...courseRows.slice(1).flatMap((c, i) => [
          enrollment(c.id, instructorId, 'instructor', i),
          enrollment(c.id, learnerId, i % 2 ? 'student' : 'instructor', i),
        ]),
      ],
    );
  });
  database.sqlite.exec('ANALYZE');
  return { instructorId, learnerId, rosterCourseId };
}

interface Figure {
  name: string;
  connections: number;
  median: number;
  p90: number;
  p99: number;
  rps: number;
  requests: number;
  errors: number;
}

async function measure(name: string, url: string, token: string, connections: number, seconds: number): Promise<Figure> {
  // One checked request first: a benchmark of error answers proves nothing.
  const probe = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (probe.status !== 200) throw new Error(`${url}: ${probe.status} ${await probe.text()}`);
  await probe.arrayBuffer();
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: { Authorization: `Bearer ${token}` },
    // The load generator runs in its own thread, so the server's event loop is the server's alone.
    workers: 1,
  });
  return {
    name,
    connections,
    median: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    rps: result.requests.average,
    requests: result.requests.total,
    errors: result.errors + result.non2xx + result.timeouts,
  };
}

async function main() {
  const deps = await buildDeps({
    database,
    config: buildConfig({ adminEmail: 'bench@example.com', adminPassword: 'bench-password', scryptCost: 1024, logLevel: 'silent' }),
    clock: systemClock,
    logger: createLogger('silent'),
  });
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const seedStarted = performance.now();
  const { instructorId, learnerId, rosterCourseId } = seed(tenantId);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const instructorToken = await deps.signer.sign({ id: instructorId, tenantId, role: 'member' });
  const learnerToken = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });

  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}/api`;

  const figures: Figure[] = [];
  const endpoints: [string, string, string][] = [
    ['GET /api/enrollments?course_id= (10,000 enrolled), page 1', `${base}/enrollments?course_id=${rosterCourseId}`, instructorToken],
    ['GET /api/enrollments?course_id= (10,000 enrolled), page 100', `${base}/enrollments?course_id=${rosterCourseId}&page=100`, instructorToken],
    ['GET /api/courses (user in 200 courses), page 1', `${base}/courses`, learnerToken],
    ['GET /api/courses (user in 200 courses), page 2', `${base}/courses?page=2`, learnerToken],
  ];
  try {
    for (const [name, url, token] of endpoints) {
      figures.push(await measure(name, url, token, CONNECTIONS, SECONDS));
      // One connection shows the time a request costs the server, without queueing behind others.
      figures.push(await measure(name, url, token, 1, UNLOADED_SECONDS));
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }

  console.log(`Courses and enrollments: a course of ${ROSTER} enrollments, a user in ${COURSES_OF_ONE_USER} courses (seeded in ${seedSeconds.toFixed(1)} s)`);
  console.log(`autocannon, ${CONNECTIONS} connections × ${SECONDS} s each, 100 items per page, HTTP on 127.0.0.1, Node ${process.version}, ${cpus().length} CPUs`);
  console.log('| endpoint | connections | median ms | p90 ms | p99 ms | req/s | requests | errors | target |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  let failed = false;
  for (const f of figures) {
    const targeted = f.connections === CONNECTIONS;
    const ok = f.errors === 0 && (!targeted || f.median < TARGET_MS);
    failed ||= !ok;
    const verdict = targeted ? `< ${TARGET_MS} ms median: ${ok ? 'met' : 'MISSED'}` : f.errors === 0 ? '(unqueued)' : 'ERRORS';
    console.log(`| ${f.name} | ${f.connections} | ${f.median} | ${f.p90} | ${f.p99} | ${Math.round(f.rps)} | ${f.requests} | ${f.errors} | ${verdict} |`);
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
