// Activities benchmark (issue 22): a learner enrolled in 20 courses of 200 activities each (10
// modules of 20; a chain of prerequisites in every module, a quarter of the activities completed,
// due dates spread over the past and next weeks), seeded directly into a real SQLite file and served
// over HTTP on 127.0.0.1. Sequential timed requests as the learner: `GET /api/activities?sort=priority`
// (target: median < 20 ms) and `GET /api/dashboard/next-up`, beside `GET /api/users/me` measured in
// the same run as the floor every request pays. Then `POST /complete` throughput: 100 learners
// completing 20 activities each, all at once, every completion sent twice concurrently; checked
// afterwards: no award lost or doubled (XP totals, one event and one award per completion).
//   npm run bench -- activities   (or npx tsx bench/activities.ts)
import { eq, sql } from 'drizzle-orm';
import { analyze } from '../db/client';
import { activities, activityStates, courseModules, courses, enrollments, events, learnerStats, sequencingEdges, users } from '../db/schema';
import { createApp } from '../src/app';
import { learnerCourseStates } from '../src/sequencing/state';
import { newId } from '../src/lib/ids';
import { benchDeps, listen, percentile, printResults, runBench, tempDatabase, timeRequests } from './helpers/common';

const COURSES = 20;
const MODULES = 10;
const PER_MODULE = 20;
const LEARNERS = 100;
const COMPLETIONS_EACH = 20;
const XP = 10;
const RUNS = 40;
const WARMUP = 5;

const { database, dispose } = tempDatabase('activities');

function seed(tenantId: string) {
  const now = new Date();
  const iso = now.toISOString();
  const instructorId = newId();
  const learnerId = newId();
  const learnerIds = Array.from({ length: LEARNERS }, () => newId());
  const courseIds: string[] = [];
  let throughputActivities: string[] = [];
  database.db.transaction((tx) => {
    const user = (id: string, name: string) =>
      tx.insert(users).values({ id, tenantId, email: `${name}@bench.example.com`, name, role: 'member', createdAt: iso, updatedAt: iso }).run();
    user(instructorId, 'instructor');
    user(learnerId, 'learner');
    learnerIds.forEach((id, i) => user(id, `learner${i}`));
    for (let c = 0; c < COURSES; c++) {
      const courseId = newId();
      courseIds.push(courseId);
      tx.insert(courses).values({ id: courseId, tenantId, title: `Course ${c}`, slug: `course-${c}`, status: 'published', createdBy: instructorId, createdAt: iso, updatedAt: iso, publishedAt: iso }).run();
      tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: instructorId, role: 'instructor', enrolledAt: iso, updatedAt: iso }).run();
      tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: learnerId, role: 'student', enrolledAt: iso, updatedAt: iso }).run();
      const chained = c > 0; // the first course has no prerequisites: the throughput run completes in any order
      const ofCourse: string[] = [];
      for (let m = 0; m < MODULES; m++) {
        const moduleId = newId();
        tx.insert(courseModules).values({ id: moduleId, tenantId, courseId, title: `Module ${m}`, position: m, createdAt: iso, updatedAt: iso }).run();
        let previous: string | null = null;
        for (let a = 0; a < PER_MODULE; a++) {
          const id = newId();
          const n = m * PER_MODULE + a;
          const dueAt = n % 3 === 0 ? new Date(now.getTime() + ((n % 15) - 7) * 86_400_000).toISOString() : null;
          tx.insert(activities)
            .values({ id, tenantId, courseId, moduleId, title: `Activity ${c}.${n}`, type: 'reading', priority: (n * 37) % 101, xp: XP, dueAt, required: n % 5 !== 0, position: a, createdBy: instructorId, createdAt: iso, updatedAt: iso })
            .run();
          ofCourse.push(id);
          if (chained && previous && a % 4 !== 0) {
            tx.insert(sequencingEdges).values({ id: newId(), tenantId, courseId, fromNodeId: previous, fromNodeType: 'activity', toNodeId: id, toNodeType: 'activity', createdBy: instructorId, createdAt: iso }).run();
          }
          if (n % 4 === 0) {
            tx.insert(activityStates).values({ activityId: id, userId: learnerId, tenantId, courseId, status: 'completed', score: 80, completedAt: iso, startedAt: iso, xpAwarded: XP, updatedAt: iso }).run();
          }
          previous = id;
        }
      }
      if (c === 0) {
        throughputActivities = ofCourse.slice(0, COMPLETIONS_EACH);
        for (const id of learnerIds) tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: id, role: 'student', enrolledAt: iso, updatedAt: iso }).run();
      }
    }
  });
  return { learnerId, learnerIds, courseIds, throughputActivities };
}

const time = (url: string, token: string) => timeRequests(url, token, { runs: RUNS, warmup: WARMUP });

async function main() {
  const deps = await benchDeps(database);
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const seedStarted = performance.now();
  const { learnerId, learnerIds, courseIds, throughputActivities } = seed(tenantId);
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  analyze(database.sqlite);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const token = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });

  const app = createApp(deps);
  const server = await listen(app.fetch);
  const { port } = server;
  const base = `http://127.0.0.1:${port}`;

  const results = [
    { name: 'GET /api/users/me', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/users/me`, token)) },
    { name: 'GET /api/activities', target: 20, ...(await time(`${base}/api/activities?sort=priority`, token)) },
    { name: 'GET /api/activities?status=locked', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/activities?status=locked`, token)) },
    { name: 'GET /api/dashboard/next-up', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/dashboard/next-up?per_page=10`, token)) },
  ];

  // What the list spends in the course-state engine (availability of every node of the 20 courses),
  // called in-process: the share of the request that is not the activities area's own.
  const engine: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now();
    learnerCourseStates(database.db, { tenantId, userId: learnerId, courseIds });
    if (i >= WARMUP) engine.push(performance.now() - t0);
  }
  engine.sort((a, b) => a - b);

  // Throughput: every learner completes their activities one after another, all learners at once,
  // and every completion is sent twice at the same moment (a double click, a retry).
  const tokens = await Promise.all(learnerIds.map((id) => deps.signer.sign({ id, tenantId, role: 'member' })));
  let requests = 0;
  let awarded = 0;
  let zero = 0;
  const statuses = new Map<number, number>();
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  await Promise.all(
    tokens.map(async (learnerToken) => {
      for (const activityId of throughputActivities) {
        const send = () =>
          fetch(`${base}/api/activities/${activityId}/complete`, { method: 'POST', headers: { Authorization: `Bearer ${learnerToken}`, 'Content-Type': 'application/json' }, body: '{}' });
        const answers = await Promise.all([send(), send()]);
        for (const res of answers) {
          requests++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const body = (await res.json()) as { rewards?: { xp_awarded: number } };
          if (res.status === 200 && body.rewards!.xp_awarded > 0) awarded++;
          else if (res.status === 200) zero++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUsed = process.cpuUsage(cpuStarted);
  // Server and clients share this process: the CPU per request is an upper bound of the server's.
  const cpuPerRequest = (cpuUsed.user + cpuUsed.system) / 1000 / LEARNERS / COMPLETIONS_EACH / 2;
  const expected = LEARNERS * COMPLETIONS_EACH;
  const completionEvents = database.db.select({ n: sql<number>`count(*)` }).from(events).where(eq(events.type, 'activity.completed')).get()!.n;
  const completedStates = database.db
    .select({ n: sql<number>`count(*)` })
    .from(activityStates)
    .where(sql`${activityStates.userId} in (select value from json_each(${JSON.stringify(learnerIds)})) and ${activityStates.status} = 'completed' and ${activityStates.xpAwarded} > 0`)
    .get()!.n;
  const xpTotals = database.db
    .select({ userId: learnerStats.userId, totalXp: learnerStats.totalXp })
    .from(learnerStats)
    .where(sql`${learnerStats.userId} in (select value from json_each(${JSON.stringify(learnerIds)}))`)
    .all();
  const stateXp = database.db
    .select({ userId: activityStates.userId, xp: sql<number>`sum(${activityStates.xpAwarded})` })
    .from(activityStates)
    .where(sql`${activityStates.userId} in (select value from json_each(${JSON.stringify(learnerIds)}))`)
    .groupBy(activityStates.userId)
    .all();
  const xpOf = new Map(stateXp.map((r) => [r.userId, r.xp]));
  const mismatched = xpTotals.filter((r) => r.totalXp !== xpOf.get(r.userId)).length;
  const exact = awarded === expected && zero === expected && completionEvents === expected && completedStates === expected && xpTotals.length === LEARNERS && mismatched === 0;

  console.log(`Activities: one learner in ${COURSES} courses × ${MODULES * PER_MODULE} activities (${COURSES * MODULES * PER_MODULE}), prerequisite chains, a quarter completed (seeded in ${seedSeconds.toFixed(1)} s)`);
  const missed = printResults(results, { runs: RUNS, warmup: WARMUP, nameWidth: 34 });
  console.log(`of which the course-state engine for the 20 courses, in-process: median ${percentile(engine, 50).toFixed(2)} ms, p95 ${percentile(engine, 95).toFixed(2)} ms`);
  console.log(
    `POST /complete: ${LEARNERS} learners × ${COMPLETIONS_EACH} activities, each sent twice at once: ${requests} requests in ${seconds.toFixed(2)} s = ${(requests / seconds).toFixed(0)} req/s, ${cpuPerRequest.toFixed(2)} ms CPU per request (server and clients); ` +
      `statuses ${JSON.stringify(Object.fromEntries(statuses))}; awards ${awarded} (expected ${expected}), repeats answered xp_awarded 0: ${zero}; ` +
      `activity.completed events ${completionEvents}; learners whose total XP differs from their completions' XP: ${mismatched} (${exact ? 'no lost or doubled award: ok' : 'LOST OR DOUBLED AWARDS'})`,
  );

  if (missed || !exact) process.exitCode = 1;
  await server.close();
}

runBench(main, dispose);
