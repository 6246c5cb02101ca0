// Courses and enrollments benchmark (issue 4): a course with 10,000 enrollments and a user
// enrolled in 200 courses, inserted directly into a real SQLite file, served by the real app in
// its own process (bench/courses-server.ts) on 127.0.0.1, port 0. autocannon, 10 connections
// for 10 s per endpoint after a 2 s warm-up: the course roster (`GET /api/enrollments?course_id=`)
// and the user's courses (`GET /api/courses`), with `GET /api/users/me` as the reference of what
// any request costs here. Target: under 10 ms median latency per page. Also reported: the
// server's CPU time per request (read from /proc, barely moved by other load on a shared
// machine) and the latency of one connection alone (no queueing).
//   npx tsx bench/courses.ts
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { analyze, openDatabase } from '../db/client';
import { courses, enrollments, users } from '../db/schema';
import { newId } from '../src/lib/ids';
import { benchDeps, cpuMs, startHelper } from './helpers/common';

const ROSTER = 10_000;
const COURSES_OF_ONE_USER = 200;
const CONNECTIONS = 10;
const SECONDS = 10;
const WARMUP_SECONDS = 2;
const UNQUEUED_SECONDS = 3;
const TARGET_MS = 10;
const CHUNK = 500;
/** The cheapest authenticated route, measured alike: what any request costs on this machine now. */
const REFERENCE = 'reference: GET /api/users/me';

const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-courses-'));
const file = path.join(dir, 'bench.sqlite');

function insertChunked<T>(insert: (rows: T[]) => void, rows: T[]): void {
  for (let i = 0; i < rows.length; i += CHUNK) insert(rows.slice(i, i + CHUNK));
}

/** Fills the database directly: this measures reading lists, not writing them. */
async function seed() {
  const database = openDatabase(file);
  // The same bootstrap and signing keys as the server will load from this file.
  const deps = await benchDeps(database);
  const db = database.db;
  const tenantId = db.select().from(users).get()!.tenantId;
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
  analyze(database.sqlite, true);
  const instructorToken = await deps.signer.sign({ id: instructorId, tenantId, role: 'member' });
  const learnerToken = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });
  database.close();
  return { rosterCourseId, instructorToken, learnerToken };
}

/** Starts bench/courses-server.ts (node itself with tsx as a loader: its pid is the server's). */
function startServer(): Promise<{ child: ChildProcess; port: number }> {
  // BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server.
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return startHelper('bench/courses-server.ts', [file], nodeArgs);
}

interface Figure {
  name: string;
  median: number;
  p90: number;
  p99: number;
  rps: number;
  requests: number;
  cpuUsPerRequest: number;
  unqueuedMedian: number;
  errors: number;
}

async function measure(name: string, url: string, token: string, serverPid: number): Promise<Figure> {
  const headers = { Authorization: `Bearer ${token}` };
  // One checked request first: a benchmark of error answers proves nothing.
  const probe = await fetch(url, { headers });
  if (probe.status !== 200) throw new Error(`${url}: ${probe.status} ${await probe.text()}`);
  await probe.arrayBuffer();
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_SECONDS, headers });
  const cpuBefore = cpuMs(serverPid);
  const loaded = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const cpu = cpuMs(serverPid) - cpuBefore;
  const alone = await autocannon({ url, connections: 1, duration: UNQUEUED_SECONDS, headers });
  return {
    name,
    median: loaded.latency.p50,
    p90: loaded.latency.p90,
    p99: loaded.latency.p99,
    rps: loaded.requests.average,
    requests: loaded.requests.total,
    cpuUsPerRequest: loaded.requests.total > 0 ? Math.round((cpu * 1000) / loaded.requests.total) : 0,
    unqueuedMedian: alone.latency.p50,
    errors: [loaded, alone].reduce((n, r) => n + r.errors + r.non2xx + r.timeouts, 0),
  };
}

async function main() {
  const loadAtStart = loadavg();
  const seedStarted = performance.now();
  const { rosterCourseId, instructorToken, learnerToken } = await seed();
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const server = await startServer();
  const base = `http://127.0.0.1:${server.port}/api`;
  const endpoints: [string, string, string][] = [
    [REFERENCE, `${base}/users/me`, learnerToken],
    ['GET /api/enrollments?course_id= (10,000 enrolled), page 1', `${base}/enrollments?course_id=${rosterCourseId}`, instructorToken],
    // Deep pages seek from remembered positions (src/enrollments/roster-anchors.ts): the middle and
    // the last page should cost what the first does.
    ['GET /api/enrollments?course_id= (10,000 enrolled), page 50', `${base}/enrollments?course_id=${rosterCourseId}&page=50`, instructorToken],
    ['GET /api/enrollments?course_id= (10,000 enrolled), page 100', `${base}/enrollments?course_id=${rosterCourseId}&page=100`, instructorToken],
    ['GET /api/courses (user in 200 courses), page 1', `${base}/courses`, learnerToken],
    ['GET /api/courses (user in 200 courses), page 2', `${base}/courses?page=2`, learnerToken],
  ];
  const figures: Figure[] = [];
  try {
    for (const [name, url, token] of endpoints) figures.push(await measure(name, url, token, server.child.pid!));
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }

  console.log(`Courses and enrollments: a course of ${ROSTER} enrollments, a user in ${COURSES_OF_ONE_USER} courses (seeded in ${seedSeconds.toFixed(1)} s)`);
  console.log(
    `autocannon, ${CONNECTIONS} connections × ${SECONDS} s after ${WARMUP_SECONDS} s warm-up, then 1 connection × ${UNQUEUED_SECONDS} s; ` +
      `100 items per page; server in its own process on 127.0.0.1; Node ${process.version}, ${cpus().length} CPUs`,
  );
  // The machine may be shared: its load during the run says how far the latencies can be trusted.
  console.log(`load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| endpoint | p50 ms | p90 ms | p99 ms | req/s | server CPU µs/request | p50 ms, 1 connection | target |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  let failed = false;
  for (const f of figures) {
    const targeted = f.name !== REFERENCE;
    const ok = f.errors === 0 && (!targeted || f.median < TARGET_MS);
    failed ||= !ok;
    const verdict = f.errors > 0 ? `${f.errors} ERRORS` : targeted ? `< ${TARGET_MS} ms p50: ${ok ? 'met' : 'MISSED'}` : '(reference)';
    console.log(
      `| ${f.name} | ${f.median} | ${f.p90} | ${f.p99} | ${Math.round(f.rps)} | ${f.cpuUsPerRequest} | ${f.unqueuedMedian} | ${verdict} |`,
    );
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
