// Course-state benchmark (issue 22): a course of 2,000 nodes (100 modules of 19 activities) and
// 4,000 sequencing edges, a learner half-way through (950 activities completed, with scores), on
// a real SQLite file, served over HTTP on 127.0.0.1 (port 0). Sequential timed requests as the
// learner: the course state (target: median < 20 ms), one node's availability, the enrollment's
// progress, and GET /api/users/me as the floor every request pays, measured in the same run.
//   npm run bench -- course-state   (or npx tsx bench/course-state.ts)
import { analyze } from '../db/client';
import { activities, activityStates, courseModules, courses, enrollments, sequencingEdges, users } from '../db/schema';
import { createApp } from '../src/app';
import { newId } from '../src/lib/ids';
import { benchDeps, listen, printResults, runBench, tempDatabase, timeRequests } from './helpers/common';

const MODULES = 100;
const ACTIVITIES_PER_MODULE = 19;
const EDGES = 4_000;
const RUNS = 40;
const WARMUP = 5;

const { database, dispose } = tempDatabase('course-state');

/** A deterministic pseudo-random sequence, so that every run builds the same graph. */
let seed = 20261125;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

function seedCourse(tenantId: string) {
  const now = new Date().toISOString();
  const instructorId = newId();
  const learnerId = newId();
  const courseId = newId();
  let enrollmentId = '';
  const nodes: { id: string; type: 'module' | 'activity' }[] = [];
  database.db.transaction((tx) => {
    for (const [id, name] of [[instructorId, 'Instructor'], [learnerId, 'Learner']] as const)
      tx.insert(users).values({ id, tenantId, email: `${name.toLowerCase()}@bench.example.com`, name, role: 'member', createdAt: now, updatedAt: now }).run();
    tx.insert(courses).values({ id: courseId, tenantId, title: 'Big course', slug: 'big', status: 'published', createdBy: instructorId, createdAt: now, updatedAt: now }).run();
    tx.insert(enrollments).values({ id: newId(), tenantId, courseId, userId: instructorId, role: 'instructor', enrolledAt: now, updatedAt: now }).run();
    enrollmentId = newId();
    tx.insert(enrollments).values({ id: enrollmentId, tenantId, courseId, userId: learnerId, role: 'student', enrolledAt: now, updatedAt: now }).run();
    for (let m = 0; m < MODULES; m++) {
      const moduleId = newId();
      tx.insert(courseModules).values({ id: moduleId, tenantId, courseId, title: `Module ${m + 1}`, position: m, createdAt: now, updatedAt: now }).run();
      nodes.push({ id: moduleId, type: 'module' });
      const rows = Array.from({ length: ACTIVITIES_PER_MODULE }, (_, a) => ({
        id: newId(), tenantId, courseId, moduleId, title: `Activity ${m + 1}.${a + 1}`, type: 'reading' as const,
        required: a % 5 !== 4, position: a, createdBy: instructorId, createdAt: now, updatedAt: now,
      }));
      tx.insert(activities).values(rows).run();
      for (const r of rows) nodes.push({ id: r.id, type: 'activity' });
    }
    // Edges only from an earlier node to a later one (course order): acyclic by construction,
    // mostly short hops (like a real course) and a tenth reaching far back; a fifth with min_score.
    const seen = new Set<string>();
    const edges = [];
    while (edges.length < EDGES) {
      const to = 1 + Math.floor(random() * (nodes.length - 1));
      const span = random() < 0.9 ? 1 + Math.floor(random() * 20) : 1 + Math.floor(random() * to);
      const from = Math.max(0, to - span);
      const key = `${from}:${to}`;
      if (from === to || seen.has(key)) continue;
      seen.add(key);
      edges.push({
        id: newId(), tenantId, courseId, fromNodeId: nodes[from]!.id, fromNodeType: nodes[from]!.type, toNodeId: nodes[to]!.id,
        toNodeType: nodes[to]!.type, minScore: random() < 0.2 ? 50 : null, createdBy: instructorId, createdAt: now,
      });
    }
    for (let i = 0; i < edges.length; i += 500) tx.insert(sequencingEdges).values(edges.slice(i, i + 500)).run();
    // Half-way: the first half of the activities in course order completed, with scores.
    const done = nodes.filter((n) => n.type === 'activity').slice(0, (MODULES * ACTIVITIES_PER_MODULE) / 2);
    const states = done.map((n) => ({
      activityId: n.id, userId: learnerId, tenantId, courseId, status: 'completed' as const, score: 40 + Math.round(random() * 60),
      startedAt: now, completedAt: now, xpAwarded: 10, updatedAt: now,
    }));
    for (let i = 0; i < states.length; i += 500) tx.insert(activityStates).values(states.slice(i, i + 500)).run();
  });
  return { courseId, learnerId, enrollmentId, nodes };
}

const time = (url: string, token: string) => timeRequests(url, token, { runs: RUNS, warmup: WARMUP });

async function main() {
  const deps = await benchDeps(database);
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const { courseId, learnerId, enrollmentId, nodes } = seedCourse(tenantId);
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  analyze(database.sqlite);
  const token = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });
  const app = createApp(deps);
  const server = await listen(app.fetch);
  const { port } = server;
  const base = `http://127.0.0.1:${port}`;
  const lastNode = nodes[nodes.length - 1]!.id;

  const results = [
    { name: 'GET /api/users/me (floor)', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/users/me`, token)) },
    { name: 'course state', target: 20, ...(await time(`${base}/api/courses/${courseId}/state`, token)) },
    { name: 'node availability', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/courses/${courseId}/nodes/${lastNode}/availability`, token)) },
    { name: 'enrollment progress', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/enrollments/${enrollmentId}/progress`, token)) },
  ];
  console.log(`Course state: ${MODULES} modules + ${MODULES * ACTIVITIES_PER_MODULE} activities = ${nodes.length} nodes, ${EDGES} edges, learner half-way`);
  const missed = printResults(results, { runs: RUNS, warmup: WARMUP, nameWidth: 28 });
  if (missed) process.exitCode = 1;
  await server.close();
}

runBench(main, dispose);
