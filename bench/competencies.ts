// Competency mastery benchmark (issue 24): one course with 500 students, a framework of 200
// competencies over 3 levels, 2,000 alignments to the course's 200 activities, 20 modules and 100
// gradebook assignments; each student has completed about 60% of the activities and holds grades
// on about 70% of the assignments (60,000 completions, 35,000 grades), some activities are past
// due. Real SQLite file, HTTP on 127.0.0.1 (port 0), sequential timed requests:
// - the course's competency-mastery summary as its instructor (target: median < 100 ms);
// - a learner's progress: the course's (GET /api/courses/{id}/competencies/progress) and their
//   own over all competencies (GET /competencies/progress) (target: median < 20 ms);
// - GET /api/users/me as the floor every request pays, measured in the same run.
//   npm run bench -- competencies   (or npx tsx bench/competencies.ts)
import { analyze } from '../db/client';
import {
  activities,
  activityStates,
  competencies,
  competencyAlignments,
  competencyFrameworks,
  courseModules,
  courses,
  enrollments,
  gradebookAssignments,
  gradebookGrades,
  users,
} from '../db/schema';
import { createApp } from '../src/app';
import { newId } from '../src/lib/ids';
import { benchDeps, listen, printResults, runBench, tempDatabase, timeRequests } from './helpers/common';

const LEARNERS = 500;
const COMPETENCIES = 200; // 10 roots, 40 in the middle, 150 leaves
const ALIGNMENTS = 2_000;
const MODULES = 20;
const ACTIVITIES_PER_MODULE = 10;
const ASSIGNMENTS = 100;
const RUNS = 30;
const WARMUP = 5;

const { database, dispose } = tempDatabase('competencies');

let seed = 20261124;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

function insertAll<T>(tx: typeof database.db, table: Parameters<typeof tx.insert>[0], rows: T[]) {
  for (let i = 0; i < rows.length; i += 400) tx.insert(table).values(rows.slice(i, i + 400) as never).run();
}

function seedData(tenantId: string) {
  const now = new Date().toISOString();
  const past = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const future = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const instructorId = newId();
  const courseId = newId();
  const learnerIds = Array.from({ length: LEARNERS }, () => newId());
  database.db.transaction((tx) => {
    const people = [{ id: instructorId, name: 'Instructor' }, ...learnerIds.map((id, i) => ({ id, name: `Learner ${i}` }))];
    insertAll(tx, users, people.map((p) => ({ id: p.id, tenantId, email: `${p.id}@bench.example.com`, name: p.name, role: 'member' as const, createdAt: now, updatedAt: now })));
    tx.insert(courses).values({ id: courseId, tenantId, title: 'Course', slug: 'course', status: 'published', createdBy: instructorId, createdAt: now, updatedAt: now }).run();
    insertAll(tx, enrollments, [
      { id: newId(), tenantId, courseId, userId: instructorId, role: 'instructor' as const, enrolledAt: now, updatedAt: now },
      ...learnerIds.map((userId) => ({ id: newId(), tenantId, courseId, userId, role: 'student' as const, enrolledAt: now, updatedAt: now })),
    ]);
    const moduleIds: string[] = [];
    const activityRows: { id: string; required: boolean }[] = [];
    for (let m = 0; m < MODULES; m++) {
      const moduleId = newId();
      moduleIds.push(moduleId);
      tx.insert(courseModules).values({ id: moduleId, tenantId, courseId, title: `Module ${m + 1}`, position: m, createdAt: now, updatedAt: now }).run();
      const rows = Array.from({ length: ACTIVITIES_PER_MODULE }, (_, a) => ({
        id: newId(), tenantId, courseId, moduleId, title: `Activity ${m + 1}.${a + 1}`, type: 'reading' as const, required: a % 4 !== 3,
        dueAt: m < MODULES / 2 ? past : future, position: a, createdBy: instructorId, createdAt: now, updatedAt: now,
      }));
      insertAll(tx, activities, rows);
      activityRows.push(...rows);
    }
    const assignmentIds = Array.from({ length: ASSIGNMENTS }, () => newId());
    insertAll(tx, gradebookAssignments, assignmentIds.map((id, i) => ({
      id, tenantId, courseId, label: `Assignment ${i + 1}`, resourceLinkId: `rl-${i}`, scoreMaximum: 20, category: 'default',
      position: i, createdBy: instructorId, createdAt: now, updatedAt: now,
    })));
    // Evidence: completions and grades.
    const states = [];
    const grades = [];
    for (const userId of learnerIds) {
      for (const a of activityRows) {
        if (random() < 0.6) states.push({ activityId: a.id, userId, tenantId, courseId, status: 'completed' as const, startedAt: now, completedAt: now, xpAwarded: 10, updatedAt: now });
      }
      for (const assignmentId of assignmentIds) {
        if (random() < 0.7) grades.push({ id: newId(), tenantId, courseId, assignmentId, studentId: userId, score: Math.round(random() * 20), gradedBy: instructorId, createdAt: now, updatedAt: now });
      }
    }
    insertAll(tx, activityStates, states);
    insertAll(tx, gradebookGrades, grades);

    // The framework: 10 roots, 4 children each, then 150 leaves spread under those 40.
    const frameworkId = newId();
    tx.insert(competencyFrameworks).values({ id: frameworkId, tenantId, title: 'Framework', createdBy: instructorId, createdAt: now, updatedAt: now }).run();
    const comps: { id: string; parentId: string | null; code: string }[] = [];
    for (let r = 0; r < 10; r++) comps.push({ id: newId(), parentId: null, code: `R${r}` });
    for (let m = 0; m < 40; m++) comps.push({ id: newId(), parentId: comps[Math.floor(m / 4)]!.id, code: `R${Math.floor(m / 4)}.M${m}` });
    for (let l = 0; l < COMPETENCIES - 50; l++) comps.push({ id: newId(), parentId: comps[10 + (l % 40)]!.id, code: `L${l}` });
    insertAll(tx, competencies, comps.map((c) => ({ ...c, tenantId, frameworkId, title: `Competency ${c.code}`, createdAt: now, updatedAt: now })));
    // 2,000 alignments, mostly on leaves, each to a distinct target of the competency.
    const targets = [
      ...activityRows.map((a) => ({ type: 'activity' as const, id: a.id })),
      ...moduleIds.map((id) => ({ type: 'module' as const, id })),
      ...assignmentIds.map((id) => ({ type: 'assignment' as const, id })),
    ];
    const seen = new Set<string>();
    const alignments = [];
    while (alignments.length < ALIGNMENTS) {
      const c = random() < 0.9 ? comps[50 + Math.floor(random() * 150)]! : comps[Math.floor(random() * 50)]!;
      const target = targets[Math.floor(random() * targets.length)]!;
      const key = `${c.id}:${target.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      alignments.push({ id: newId(), tenantId, competencyId: c.id, courseId, targetType: target.type, targetId: target.id, weight: 1 + Math.floor(random() * 3), createdBy: instructorId, createdAt: now });
    }
    insertAll(tx, competencyAlignments, alignments);
  });
  return { courseId, instructorId, learnerId: learnerIds[7]! };
}

const time = (url: string, token: string) => timeRequests(url, token, { runs: RUNS, warmup: WARMUP });

async function main() {
  const deps = await benchDeps(database);
  const tenantId = database.db.select().from(users).get()!.tenantId;
  const { courseId, instructorId, learnerId } = seedData(tenantId);
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  analyze(database.sqlite);
  const instructor = await deps.signer.sign({ id: instructorId, tenantId, role: 'member' });
  const learner = await deps.signer.sign({ id: learnerId, tenantId, role: 'member' });
  const app = createApp(deps);
  const server = await listen(app.fetch);
  const { port } = server;
  const base = `http://127.0.0.1:${port}`;

  const results = [
    { name: 'GET /api/users/me (floor)', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/users/me`, learner)) },
    { name: 'course competency-mastery', target: 100, ...(await time(`${base}/api/courses/${courseId}/competency-mastery`, instructor)) },
    { name: 'learner course progress', target: 20, ...(await time(`${base}/api/courses/${courseId}/competencies/progress`, learner)) },
    { name: 'learner /competencies/progress', target: 20, ...(await time(`${base}/competencies/progress`, learner)) },
    { name: 'learner mastery-summary', target: Number.POSITIVE_INFINITY, ...(await time(`${base}/api/competencies/mastery-summary`, learner)) },
  ];
  console.log(`Competencies: ${LEARNERS} learners x ${COMPETENCIES} competencies, ${ALIGNMENTS} alignments to ${MODULES * ACTIVITIES_PER_MODULE} activities, ${MODULES} modules, ${ASSIGNMENTS} assignments`);
  const missed = printResults(results, { runs: RUNS, warmup: WARMUP, nameWidth: 32 });
  if (missed) process.exitCode = 1;
  await server.close();
}

runBench(main, dispose);
