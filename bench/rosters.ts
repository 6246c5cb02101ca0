// OneRoster bulk import benchmark (issue 37): a bundle of 2,000 users (1,900 students, 100
// teachers), 100 classes and 7,700 enrolments (every student in 4 classes, every class its
// teacher) uploaded through the API, then run by the job runner; then the same bundle again
// (nothing changes: every row matched by sourcedId). Another client asks GET /api/users/me every
// 10 ms throughout. The target: the event loop's longest stall during each import stays under
// 100 ms (measured as bench/case-import.ts does: the longest gap between the ticks of a 1 ms
// interval timer). Real SQLite file; the app in this process (app.request), the zip built before timing.
//   npx tsx bench/rosters.ts        (npm run bench -- rosters)
import { cpus, loadavg } from 'node:os';
import { stringify } from 'csv-stringify/sync';
import yazl from 'yazl';
import { systemClock } from '../src/lib/clock';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { createLogger } from '../src/logger';
import { createApp } from '../src/app';
import { BENCH_ADMIN, measuredStall, tempDatabase } from './helpers/common';

const TARGET_MS = 100;
const STUDENTS = 1_900;
const TEACHERS = 100;
const CLASSES = 100;
const CLASSES_PER_STUDENT = 4;

const { database, dispose } = tempDatabase('rosters');
const deps = await buildDeps({
  database,
  config: buildConfig({ adminEmail: BENCH_ADMIN.email, adminPassword: BENCH_ADMIN.password, scryptCost: 1024, logLevel: 'silent' }),
  clock: systemClock,
  logger: createLogger('silent'),
});
const app = createApp(deps);

const HEADERS = {
  orgs: ['sourcedId', 'status', 'dateLastModified', 'name', 'type', 'identifier', 'parentSourcedId'],
  academicSessions: ['sourcedId', 'status', 'dateLastModified', 'title', 'type', 'startDate', 'endDate', 'parentSourcedId', 'schoolYear'],
  courses: ['sourcedId', 'status', 'dateLastModified', 'schoolYearSourcedId', 'title', 'courseCode', 'grades', 'orgSourcedId', 'subjects', 'subjectCodes'],
  classes: ['sourcedId', 'status', 'dateLastModified', 'title', 'grades', 'courseSourcedId', 'classCode', 'classType', 'location', 'schoolSourcedId', 'termSourcedIds', 'subjects', 'subjectCodes', 'periods'],
  users: ['sourcedId', 'status', 'dateLastModified', 'enabledUser', 'username', 'userIds', 'givenName', 'familyName', 'middleName', 'identifier', 'email', 'sms', 'phone', 'agentSourcedIds', 'grades', 'password', 'userMasterIdentifier', 'resourceSourcedIds', 'preferredGivenName', 'preferredMiddleName', 'preferredFamilyName', 'primaryOrgSourcedId', 'pronouns'],
  enrollments: ['sourcedId', 'status', 'dateLastModified', 'classSourcedId', 'schoolSourcedId', 'userSourcedId', 'role', 'primary', 'beginDate', 'endDate'],
} as const;
type FileName = keyof typeof HEADERS;

const csvOf = (file: FileName, rows: Record<string, string>[]) =>
  stringify([[...HEADERS[file]], ...rows.map((row) => HEADERS[file].map((column) => row[column] ?? ''))]);

function bundleFiles(): Record<FileName, Record<string, string>[]> {
  const users: Record<string, string>[] = [];
  const enrollments: Record<string, string>[] = [];
  for (let i = 0; i < TEACHERS; i++) {
    users.push({ sourcedId: `tea-${i}`, enabledUser: 'true', username: `teacher${i}@bench.example.org`, givenName: 'Teacher', familyName: `Number ${i}`, email: `teacher${i}@bench.example.org`, primaryOrgSourcedId: 'school-1' });
    enrollments.push({ sourcedId: `enr-t-${i}`, classSourcedId: `class-${i}`, userSourcedId: `tea-${i}`, schoolSourcedId: 'school-1', role: 'teacher', primary: 'true' });
  }
  for (let i = 0; i < STUDENTS; i++) {
    users.push({ sourcedId: `stu-${i}`, enabledUser: 'true', username: `student${i}@bench.example.org`, givenName: 'Student', familyName: `Number ${i}`, email: `student${i}@bench.example.org`, primaryOrgSourcedId: 'school-1' });
    for (let k = 0; k < CLASSES_PER_STUDENT; k++) {
      const classIndex = (i + k * 25) % CLASSES;
      enrollments.push({ sourcedId: `enr-s-${i}-${k}`, classSourcedId: `class-${classIndex}`, userSourcedId: `stu-${i}`, schoolSourcedId: 'school-1', role: 'student', primary: 'false' });
    }
  }
  return {
    orgs: [
      { sourcedId: 'district-1', name: 'Bench District', type: 'district' },
      { sourcedId: 'school-1', name: 'Bench High', type: 'school', parentSourcedId: 'district-1' },
    ],
    academicSessions: [{ sourcedId: 'term-1', title: 'Fall 2026', type: 'term', startDate: '2026-09-01', endDate: '2026-12-20', schoolYear: '2027' }],
    courses: Array.from({ length: 10 }, (_, i) => ({ sourcedId: `course-${i}`, title: `Subject ${i}`, courseCode: `S-${i}`, orgSourcedId: 'school-1' })),
    classes: Array.from({ length: CLASSES }, (_, i) => ({ sourcedId: `class-${i}`, title: `Class ${i}`, courseSourcedId: `course-${i % 10}`, classCode: `C${i}`, classType: 'scheduled', schoolSourcedId: 'school-1', termSourcedIds: 'term-1' })),
    users,
    enrollments,
  };
}

function zipOf(files: Record<FileName, Record<string, string>[]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const manifest = [
    ['propertyName', 'value'],
    ['manifest.version', '1.0'],
    ['oneroster.version', '1.2'],
    ...(Object.keys(HEADERS) as FileName[]).map((file) => [`file.${file}`, 'bulk']),
    ['file.demographics', 'absent'],
    ['source.systemName', 'Bench SIS'],
  ];
  zip.addBuffer(Buffer.from(stringify(manifest)), 'manifest.csv');
  for (const file of Object.keys(HEADERS) as FileName[]) zip.addBuffer(Buffer.from(csvOf(file, files[file])), `${file}.csv`);
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

async function call(method: string, path: string, token: string | null, init: { json?: unknown; form?: FormData } = {}) {
  const res = await app.request(path, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: init.form ?? (init.json !== undefined ? JSON.stringify(init.json) : undefined),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const { access_token: token } = await call('POST', '/api/auth/token', null, { json: BENCH_ADMIN });

/** Uploads the zip and runs the import to its end; answers the import as GET shows it. */
async function importZip(zip: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'roster.zip');
  const queued = await call('POST', '/api/rosters/imports', token, { form });
  await deps.jobs.drain();
  return call('GET', `/api/rosters/imports/${queued.id}`, token);
}

/** The event loop's longest stall while `work` runs, a bystander asking GET /api/users/me meanwhile. */
const measured = <T>(work: () => Promise<T>) => measuredStall(work, () => call('GET', '/api/users/me', token));

const files = bundleFiles();
const zip = await zipOf(files);
// Warm the route, the job and its statements on a small bundle of its own first.
await importZip(await zipOf({ ...files, users: files.users.slice(0, 1), enrollments: [], classes: files.classes.slice(0, 1) }));

console.log(`Node ${process.version}, ${cpus().length} cores; ${files.users.length.toLocaleString('en')} users, ${CLASSES} classes, ${files.enrollments.length.toLocaleString('en')} enrolments`);
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) at the start`);
const idle = await measured(() => new Promise((resolve) => setTimeout(resolve, 5_000)));
console.log(`no import, 5 s: longest loop stall ${idle.longest.toFixed(0)} ms; bystander ${idle.asked} requests (longest ${idle.slowest.toFixed(0)} ms)`);
console.log('| import | zip KiB | answer | wall s | longest loop stall ms | bystander requests (longest ms) | stall < 100 ms |');
console.log('|---|---|---|---|---|---|---|');
let over = false;
for (const name of ['bulk import (creates everything)', 're-import, unchanged']) {
  const { result, longest, asked, slowest, wall } = await measured(() => importZip(zip));
  if (result.status !== 'succeeded') throw new Error(`import ${result.status}: ${JSON.stringify(result.report).slice(0, 500)}`);
  over ||= longest >= TARGET_MS;
  const r = result.report;
  const counts = `created ${JSON.stringify(r.created)}, updated ${JSON.stringify(r.updated)}, errors ${r.errors_total}`;
  console.log(`| ${name} | ${(zip.length / 1024).toFixed(0)} | ${counts} | ${wall.toFixed(2)} | ${longest.toFixed(0)} | ${asked} (${slowest.toFixed(0)}) | ${longest < TARGET_MS ? 'yes' : 'NO'} |`);
}
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) when done`);

await deps.workers.close();
dispose();
process.exit(over ? 1 : 0);
