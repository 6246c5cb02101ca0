// Dashboard benchmark (issue 22): a learner in 20 courses of 200 activities each (10 modules of 20),
// half of them completed, 50 on the shelf, a feed of 10,000 events; on a real SQLite file, served
// over HTTP on 127.0.0.1 (port 0). Sequential timed requests as the learner: the summary (course
// state of all 20 courses, due soon), the feed (first and a deep page), marking it read, the shelf
// and its analytics, beside GET /api/users/me as the floor every request pays. Then what recording
// events costs a write: a bulk enrolment of 5,000 users (5,000 `enrollment.created` events), and
// 5,000 events appended alone, in batches (appendEvents) and one by one (appendEvent). No targets:
// the figures are reported.
//   npm run bench -- dashboard   (or npx tsx bench/dashboard.ts)
import { analyze, inTransaction } from '../db/client';
import { activities, activityStates, courseModules, courses, enrollments, learnerStats, users } from '../db/schema';
import { createApp } from '../src/app';
import { appendEvent, appendEvents } from '../src/events/log';
import { systemClock } from '../src/lib/clock';
import { newId } from '../src/lib/ids';
import { benchDeps, listen, printResults, runBench, tempDatabase, timeRequests } from './helpers/common';

const COURSES = 20;
const MODULES = 10;
const PER_MODULE = 20;
const FEED_EVENTS = 10_000;
const SAVED = 50;
const BULK = 5_000;
const RUNS = 30;
const WARMUP = 5;
const DAY = 86_400_000;

const { database, dispose } = tempDatabase('dashboard');

function seed(tenantId: string) {
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const learnerId = newId();
  const instructorId = newId();
  const bulkIds = Array.from({ length: BULK }, () => newId());
  let bulkCourseId = '';
  inTransaction(database.db, (tx) => {
    const stamp = { createdAt: iso(now), updatedAt: iso(now) };
    tx.insert(users).values({ id: learnerId, tenantId, email: 'learner@bench.example.com', name: 'Learner', ...stamp }).run();
    tx.insert(users).values({ id: instructorId, tenantId, email: 'instructor@bench.example.com', name: 'Instructor', ...stamp }).run();
    bulkIds.forEach((id, i) => tx.insert(users).values({ id, tenantId, email: `bulk${i}@bench.example.com`, name: `Bulk ${i}`, ...stamp }).run());
    let saved = 0;
    for (let c = 0; c < COURSES + 1; c++) {
      const courseId = newId();
      tx.insert(courses).values({ id: courseId, tenantId, title: `Course ${c}`, slug: `course-${c}`, status: 'published', createdBy: instructorId, ...stamp }).run();
      tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: instructorId, role: 'instructor', enrolledAt: iso(now), updatedAt: iso(now) }).run();
      if (c === COURSES) {
        bulkCourseId = courseId;
        continue;
      }
      tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: learnerId, role: 'student', enrolledAt: iso(now), updatedAt: iso(now) }).run();
      for (let m = 0; m < MODULES; m++) {
        const moduleId = newId();
        tx.insert(courseModules).values({ id: moduleId, tenantId, courseId, title: `Module ${m}`, position: m, ...stamp }).run();
        const rows = Array.from({ length: PER_MODULE }, (_, a) => ({
          id: newId(),
          tenantId,
          courseId,
          moduleId,
          title: `Activity ${m}.${a}`,
          type: 'reading' as const,
          position: a,
          // Spread over the next 30 days: a few due within the week in each course.
          dueAt: iso(now + (((m * PER_MODULE + a) * 7919) % (30 * 24)) * 3_600_000),
          createdBy: instructorId,
          ...stamp,
        }));
        tx.insert(activities).values(rows).run();
        const states = rows.flatMap((row, a): (typeof activityStates.$inferInsert)[] => {
          if (a < PER_MODULE / 2) {
            return [{ activityId: row.id, userId: learnerId, tenantId, courseId, status: 'completed' as const, completedAt: iso(now - DAY), xpAwarded: 10, updatedAt: iso(now - DAY) }];
          }
          if (saved < SAVED) {
            saved++;
            return [{ activityId: row.id, userId: learnerId, tenantId, courseId, status: null, savedAt: iso(now - saved * 3_600_000), remindAt: iso(now + (saved - 25) * 3_600_000), updatedAt: iso(now) }];
          }
          return [];
        });
        if (states.length > 0) tx.insert(activityStates).values(states).run();
      }
    }
    tx.insert(learnerStats).values({ userId: learnerId, tenantId, totalXp: 2000, level: 7, streakDays: 3, longestStreak: 10, lastActiveDay: iso(now).slice(0, 10), updatedAt: iso(now) }).run();
    for (let i = 0; i < FEED_EVENTS; i++) {
      appendEvent(tx, systemClock, {
        tenantId,
        type: 'level.reached',
        actorId: learnerId,
        subject: { type: 'user', id: learnerId },
        data: { user_id: learnerId, level: 2, total_xp: i },
        recipients: [learnerId],
      });
    }
  });
  return { learnerId, instructorId, bulkIds, bulkCourseId };
}

/**
 * Wall time per request, and the CPU time this process spent on it (server and client share the
 * process). On a machine shared with other work, wall time includes waiting for a core.
 */
const time = (url: string, token: string, request?: (i: number) => RequestInit) => timeRequests(url, token, { runs: RUNS, warmup: WARMUP, request });

async function main() {
  const deps = await benchDeps(database);
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const seedStarted = performance.now();
  const { learnerId, instructorId, bulkIds, bulkCourseId } = seed(tenantId);
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  analyze(database.sqlite);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const token = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });
  const instructorToken = await deps.signer.sign({ id: instructorId, tenantId, role: 'member' });

  const app = createApp(deps);
  const server = await listen(app.fetch);
  const { port } = server;
  const api = `http://127.0.0.1:${port}/api`;

  const results = [
    { name: 'GET /api/users/me', ...(await time(`${api}/users/me`, token)) },
    { name: 'summary (20 courses)', ...(await time(`${api}/dashboard/summary`, token)) },
    { name: 'feed, page 1 (100)', ...(await time(`${api}/dashboard/feed`, token)) },
    { name: 'feed, page 50 (100)', ...(await time(`${api}/dashboard/feed?page=50`, token)) },
    { name: 'POST feed/read', ...(await time(`${api}/dashboard/feed/read`, token, () => ({ method: 'POST' }))) },
    { name: 'shelf (50)', ...(await time(`${api}/dashboard/shelf`, token)) },
    { name: 'shelf analytics', ...(await time(`${api}/dashboard/shelf/analytics`, token)) },
  ];

  // One bulk enrolment of 5,000 users, each with its event; then 5,000 events appended alone.
  const bulkStarted = performance.now();
  const bulk = await fetch(`${api}/enrollments/course/${bulkCourseId}/bulk-enroll`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${instructorToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ user_ids: bulkIds }),
  });
  const bulkMs = performance.now() - bulkStarted;
  if (bulk.status !== 200) throw new Error(`bulk-enroll: ${bulk.status} ${await bulk.text()}`);
  const eventsOf = () =>
    bulkIds.map((userId) => ({
      tenantId,
      type: 'enrollment.created' as const,
      actorId: instructorId,
      subject: { type: 'enrollment', id: userId },
      courseId: bulkCourseId,
      data: { enrollment_id: userId, course_id: bulkCourseId, user_id: userId, role: 'student' },
      recipients: [userId],
    }));
  const batchStarted = performance.now();
  inTransaction(database.db, (tx) => appendEvents(tx, systemClock, eventsOf()));
  const batchMs = performance.now() - batchStarted;
  const oneByOneStarted = performance.now();
  inTransaction(database.db, (tx) => {
    for (const event of eventsOf()) appendEvent(tx, systemClock, event);
  });
  const oneByOneMs = performance.now() - oneByOneStarted;

  console.log(
    `Dashboard: a learner in ${COURSES} courses × ${MODULES * PER_MODULE} activities (half completed), ${SAVED} on the shelf, a feed of ${FEED_EVENTS} events (seeded in ${seedSeconds.toFixed(1)} s)`,
  );
  printResults(results, { runs: RUNS, warmup: WARMUP, nameWidth: 24 });
  console.log(`bulk-enroll ${BULK} users (with their ${BULK} events): ${bulkMs.toFixed(0)} ms`);
  console.log(`${BULK} events alone, one transaction: appendEvents ${batchMs.toFixed(0)} ms, appendEvent one by one ${oneByOneMs.toFixed(0)} ms`);

  await server.close();
}

runBench(main, dispose);
