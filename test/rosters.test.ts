// OneRoster 1.2 CSV roster imports (issue 37 item 6): bundles built here (test/helpers/zip.ts) are
// uploaded through the API, imported by the job runner (drained by hand), and what they made is
// read back through the API: users, classes as courses, enrollments with their roles; bulk and
// delta, idempotent re-imports, rejected lines reported with file, line and field, a broken file
// that fails the whole import and changes nothing, and hostile zips refused before anything is written.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, count, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { courses, enrollments, jobs, rosterLinks, users } from '../db/schema';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { buildZip, csv, renameInZip, rosterBundle, ROSTER_HEADERS, understateSize, uploadBundle, type BundleSpec, type Row } from './helpers/zip';

let t: TestApp;
let dataDir: string;
let tenants = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rosters-test-'));
  t = await makeTestApp({ config: { dataDir } });
});
afterAll(async () => {
  await t.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A tenant of its own for each test: sourcedIds and emails never meet another test's. */
async function school(): Promise<{ tenantId: string; admin: TestUser; domain: string }> {
  tenants += 1;
  const slug = `school-${tenants}`;
  const { tenantId, admin } = await t.newTenant(slug);
  return { tenantId, admin, domain: `${slug}.example.org` };
}

const user = (id: string, given: string, family: string, email: string, extra: Row = {}): Row => ({
  sourcedId: id,
  enabledUser: 'true',
  username: email,
  givenName: given,
  familyName: family,
  email,
  ...extra,
});

const enrollment = (id: string, classId: string, userId: string, role: string, extra: Row = {}): Row => ({
  sourcedId: id,
  classSourcedId: classId,
  userSourcedId: userId,
  schoolSourcedId: 'school-1',
  role,
  primary: 'false',
  ...extra,
});

/** A small school: a district and a school, a term, two courses, two classes, four people, five enrollments. */
function roster(domain: string): Required<Pick<BundleSpec['files'], 'orgs' | 'academicSessions' | 'courses' | 'classes' | 'users' | 'enrollments'>> {
  return {
    orgs: [
      { sourcedId: 'district-1', name: 'North District', type: 'district' },
      { sourcedId: 'school-1', name: 'North High', type: 'school', parentSourcedId: 'district-1' },
    ],
    academicSessions: [{ sourcedId: 'term-1', title: 'Fall 2026', type: 'term', startDate: '2026-09-01', endDate: '2026-12-20', schoolYear: '2027' }],
    courses: [
      { sourcedId: 'course-math', title: 'Mathematics 7', courseCode: 'MATH-7', orgSourcedId: 'school-1', schoolYearSourcedId: 'term-1' },
      { sourcedId: 'course-sci', title: 'Science 7', courseCode: 'SCI-7', orgSourcedId: 'school-1' },
    ],
    classes: [
      { sourcedId: 'class-math-a', title: 'Math 7A', courseSourcedId: 'course-math', classCode: 'M7A', classType: 'scheduled', schoolSourcedId: 'school-1', termSourcedIds: 'term-1' },
      { sourcedId: 'class-sci', title: 'Science 7 (all)', courseSourcedId: 'course-sci', classCode: 'S7', classType: 'scheduled', schoolSourcedId: 'school-1', termSourcedIds: 'term-1' },
    ],
    users: [
      user('stu-1', 'Ada', 'Lovelace', `ada@${domain}`, { primaryOrgSourcedId: 'school-1' }),
      user('stu-2', 'Alan', 'Turing', `alan@${domain}`),
      user('tea-1', 'Grace', 'Hopper', `grace@${domain}`),
      user('aide-1', 'Katherine', 'Johnson', `katherine@${domain}`),
    ],
    enrollments: [
      enrollment('enr-1', 'class-math-a', 'stu-1', 'student'),
      enrollment('enr-2', 'class-math-a', 'stu-2', 'student'),
      enrollment('enr-3', 'class-math-a', 'tea-1', 'teacher', { primary: 'true' }),
      enrollment('enr-4', 'class-math-a', 'aide-1', 'aide'),
      enrollment('enr-5', 'class-sci', 'stu-1', 'student'),
    ],
  };
}

/** Uploads the bundle (202), runs the job, and answers the import as GET /api/rosters/imports/{id} shows it. */
async function importZip(as: TestUser, zip: Buffer) {
  const queued = await uploadBundle(t, as, zip);
  expect(queued.status, queued.text).toBe(202);
  expect(queued.body).toMatchObject({ status: 'queued', report: null });
  expect(queued.headers.get('location')).toBe(`/api/rosters/imports/${queued.body.id}`);
  await t.deps.jobs.drain();
  const done = await t.call('GET', `/api/rosters/imports/${queued.body.id}`, { as });
  expect(done.status, done.text).toBe(200);
  return done.body;
}

const importBundle = async (as: TestUser, spec: BundleSpec) => importZip(as, await rosterBundle(spec));

/** What the tenant holds, read from the tables: a failed import must leave it as it was. */
function snapshot(tenantId: string) {
  const db = t.db;
  return {
    users: db.select().from(users).where(eq(users.tenantId, tenantId)).orderBy(users.id).all(),
    courses: db.select().from(courses).where(eq(courses.tenantId, tenantId)).orderBy(courses.id).all(),
    enrollments: db.select().from(enrollments).where(eq(enrollments.tenantId, tenantId)).orderBy(enrollments.id).all(),
    links: db.select().from(rosterLinks).where(eq(rosterLinks.tenantId, tenantId)).orderBy(rosterLinks.type, rosterLinks.sourcedId).all(),
  };
}

async function userByEmail(as: TestUser, email: string, includeDeleted = false) {
  const res = await t.call('GET', `/api/users?per_page=100${includeDeleted ? '&include_deleted=true' : ''}`, { as });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as Array<{ id: string; email: string; name: string; role: string; deleted_at: string | null }>).find((u) => u.email === email);
}

const courseIdOf = (tenantId: string, classId: string) =>
  t.db
    .select()
    .from(rosterLinks)
    .where(and(eq(rosterLinks.tenantId, tenantId), eq(rosterLinks.type, 'class'), eq(rosterLinks.sourcedId, classId)))
    .get()!.localId!;

async function rosterOf(as: TestUser, courseId: string) {
  const res = await t.call('GET', `/api/enrollments?course_id=${courseId}`, { as });
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries(
    (res.body.data as Array<{ role: string; status: string; user: { email: string } }>).map((e) => [e.user.email.split('@')[0], `${e.role}/${e.status}`]),
  );
}

const uploadsLeft = async () => [
  ...(await readdir(join(dataDir, 'uploads')).catch(() => [])),
  ...(await readdir(join(dataDir, 'rosters')).catch(() => [])),
];

describe('roster import: bulk', () => {
  it('creates users, classes as courses and enrollments with their roles, keeps orgs, sessions and courses as metadata, and reports it', async () => {
    const { tenantId, admin, domain } = await school();
    const done = await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    expect(done).toMatchObject({ status: 'succeeded', mode: 'bulk', filename: 'roster.zip', error: null, created_by: admin.user.id });
    expect(done.progress.done).toBe(done.progress.total);
    expect(done.progress.total).toBeGreaterThan(0);
    expect(done.report).toMatchObject({
      mode: 'bulk',
      created: 2 + 1 + 2 + 4 + 2 + 5,
      updated: 0,
      deleted: 0,
      errors: [],
      errors_total: 0,
      by_type: {
        orgs: { created: 2 },
        academicSessions: { created: 1 },
        courses: { created: 2 },
        users: { created: 4 },
        classes: { created: 2 },
        enrollments: { created: 5 },
      },
    });

    // The people are members of the tenant, with no password (they will be invited).
    const ada = await userByEmail(admin, `ada@${domain}`);
    expect(ada).toMatchObject({ name: 'Ada Lovelace', role: 'member', deleted_at: null });
    expect(t.db.select().from(users).where(eq(users.id, ada!.id)).get()!.passwordHash).toBeNull();
    expect(await userByEmail(admin, `grace@${domain}`)).toMatchObject({ name: 'Grace Hopper', role: 'member' });

    // A class is a course here (a draft, made by the admin who imported it), its roster the class's.
    const math = await t.call('GET', `/api/courses/${courseIdOf(tenantId, 'class-math-a')}`, { as: admin });
    expect(math.status, math.text).toBe(200);
    expect(math.body).toMatchObject({ title: 'Math 7A', slug: 'm7a', status: 'draft' });
    expect(await rosterOf(admin, math.body.id)).toEqual({ ada: 'student/active', alan: 'student/active', grace: 'instructor/active', katherine: 'ta/active' });
    expect(await rosterOf(admin, courseIdOf(tenantId, 'class-sci'))).toEqual({ ada: 'student/active' });
    // The importing admin is not enrolled in the courses it made.
    expect(Object.keys(await rosterOf(admin, math.body.id))).not.toContain('admin');

    // Orgs, sessions and the OneRoster course are kept beside the links.
    const links = snapshot(tenantId).links;
    const link = (type: string, id: string) => links.find((l) => l.type === type && l.sourcedId === id)!;
    expect(JSON.parse(link('org', 'school-1').data)).toEqual({ name: 'North High', type: 'school', parentSourcedId: 'district-1' });
    expect(JSON.parse(link('academicSession', 'term-1').data)).toMatchObject({ title: 'Fall 2026', type: 'term', startDate: '2026-09-01' });
    expect(JSON.parse(link('class', 'class-math-a').data)).toMatchObject({ classCode: 'M7A', courseSourcedId: 'course-math', course: { title: 'Mathematics 7', courseCode: 'MATH-7' } });
    expect(link('user', 'stu-1').localId).toBe(ada!.id);
    expect(link('org', 'school-1').localId).toBeNull();

    // The zip is removed once the import has run; the list shows the import with its counts.
    expect(await uploadsLeft()).toEqual([]);
    const list = await t.call('GET', '/api/rosters/imports', { as: admin });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: done.id, status: 'succeeded', report: { created: 16, updated: 0, deleted: 0, errors_total: 0 } });
    expect(list.body.pagination).toMatchObject({ page: 1, total: 1 });
  });

  it('is idempotent: the same bundle again creates, changes and removes nothing', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const before = snapshot(tenantId);
    const again = await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    expect(again.report).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 16, errors: [] });
    const after = snapshot(tenantId);
    expect(after.users).toEqual(before.users);
    expect(after.courses).toEqual(before.courses);
    expect(after.enrollments).toEqual(before.enrollments);
    expect(after.links.map(({ importId: _, ...l }) => l)).toEqual(before.links.map(({ importId: _, ...l }) => l));
  });

  it('ends what a bulk file leaves out, only among what rosters made: hand-made users and enrollments stay', async () => {
    const { tenantId, admin, domain } = await school();
    // A teacher made by hand before the first import is adopted by email, never deleted by a roster.
    const handTeacher = await t.newUser({ tenantId, email: `grace@${domain}`, name: 'G. Hopper' });
    const handStudent = await t.newUser({ tenantId, email: `walk-in@${domain}`, name: 'Walk In' });
    const first = await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    expect(first.report.by_type.users).toMatchObject({ created: 3, updated: 1 });
    expect(await userByEmail(admin, `grace@${domain}`)).toMatchObject({ id: handTeacher.user.id, name: 'Grace Hopper' });
    const mathId = courseIdOf(tenantId, 'class-math-a');
    const handEnrol = await t.call('POST', `/api/enrollments/course/${mathId}/enroll`, { as: admin, body: { user_id: handStudent.user.id, role: 'student' } });
    expect(handEnrol.status, handEnrol.text).toBe(201);

    // Next term's bulk: Alan and Grace are gone from users.csv, Science is gone from classes.csv.
    const next = roster(domain);
    next.users = next.users.filter((u) => u.sourcedId !== 'stu-2' && u.sourcedId !== 'tea-1');
    next.classes = next.classes.filter((c) => c.sourcedId !== 'class-sci');
    next.enrollments = next.enrollments.filter((e) => ['enr-1', 'enr-4'].includes(e.sourcedId ?? ''));
    const done = await importBundle(admin, { mode: 'bulk', files: next });
    expect(done.status).toBe('succeeded');
    expect(done.report.by_type).toMatchObject({
      users: { deleted: 2, created: 0 },
      classes: { deleted: 1 },
      enrollments: { deleted: 3 },
    });
    // Alan (made by the roster) is soft-deleted; Grace (adopted) keeps her account.
    expect(await userByEmail(admin, `alan@${domain}`)).toBeUndefined();
    expect(await userByEmail(admin, `alan@${domain}`, true)).toMatchObject({ deleted_at: expect.any(String) });
    expect(await userByEmail(admin, `grace@${domain}`)).toMatchObject({ id: handTeacher.user.id, deleted_at: null });
    // Their roster enrollments are dropped; the hand-made enrollment stays active.
    expect(await rosterOf(admin, mathId)).toEqual({ ada: 'student/active', alan: 'student/dropped', grace: 'instructor/dropped', katherine: 'ta/active', 'walk-in': 'student/active' });
    // The Science course stays (with what was taught in it), its roster enrollments end.
    const sci = courseIdOf(tenantId, 'class-sci');
    expect((await t.call('GET', `/api/courses/${sci}`, { as: admin })).status).toBe(200);
    expect(await rosterOf(admin, sci)).toEqual({ ada: 'student/dropped' });
    // Alan can no longer be found by his token's account.
    expect(t.db.select({ n: count() }).from(users).where(and(eq(users.tenantId, tenantId), isNull(users.deletedAt))).get()!.n).toBe(1 + 1 + 2 + 1);
  });

  it('an imported student is a member who is enrolled in the class\'s course, and the instructor sees them', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const ada = t.db.select().from(users).where(and(eq(users.tenantId, tenantId), eq(users.email, `ada@${domain}`))).get()!;
    const grace = t.db.select().from(users).where(and(eq(users.tenantId, tenantId), eq(users.email, `grace@${domain}`))).get()!;
    const mathId = courseIdOf(tenantId, 'class-math-a');
    // Ada has no password: signing in with one fails; her enrollment is there as she would see it.
    const signIn = await t.call('POST', '/api/auth/token', { body: { email: ada.email, password: 'anything-at-all', tenant: `school-${tenants}` } });
    expect(signIn.status).toBe(401);
    const own = await t.call('GET', `/api/enrollments?course_id=${mathId}`, { as: { token: await t.tokenFor(ada) } });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toEqual([expect.objectContaining({ user_id: ada.id, role: 'student', status: 'active' })]);
    // Grace teaches it: she sees its whole roster.
    const taught = await t.call('GET', `/api/enrollments?course_id=${mathId}`, { as: { token: await t.tokenFor(grace) } });
    expect(taught.body.data).toHaveLength(4);
  });
});

describe('roster import: delta', () => {
  it('updates one user, deletes one (tobedeleted) with their enrollments, ends one enrollment, and leaves the rest', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const mathId = courseIdOf(tenantId, 'class-math-a');
    const done = await importBundle(admin, {
      mode: 'delta',
      files: {
        users: [
          user('stu-1', 'Ada', 'King', `ada.king@${domain}`, { status: 'active', dateLastModified: '2026-10-01T00:00:00Z' }),
          { sourcedId: 'stu-2', status: 'tobedeleted', dateLastModified: '2026-10-01T00:00:00Z' },
          user('stu-3', 'Mary', 'Jackson', `mary@${domain}`, { status: 'active' }),
        ],
        enrollments: [
          { sourcedId: 'enr-4', status: 'tobedeleted' },
          enrollment('enr-6', 'class-math-a', 'stu-3', 'student', { status: 'active' }),
          enrollment('enr-3', 'class-math-a', 'tea-1', 'aide', { status: 'active' }),
        ],
      },
    });
    expect(done).toMatchObject({ status: 'succeeded', mode: 'delta' });
    expect(done.report.by_type).toMatchObject({
      users: { created: 1, updated: 1, deleted: 1, unchanged: 0 },
      enrollments: { created: 1, updated: 1, deleted: 2 }, // enr-4 tobedeleted, enr-2 with its user
      classes: { created: 0, updated: 0, deleted: 0 },
    });
    expect(await userByEmail(admin, `ada@${domain}`)).toBeUndefined();
    expect(await userByEmail(admin, `ada.king@${domain}`)).toMatchObject({ name: 'Ada King', deleted_at: null });
    expect(await userByEmail(admin, `alan@${domain}`, true)).toMatchObject({ deleted_at: expect.any(String) });
    expect(await rosterOf(admin, mathId)).toEqual({
      'ada.king': 'student/active',
      alan: 'student/dropped',
      grace: 'ta/active',
      katherine: 'ta/dropped',
      mary: 'student/active',
    });
    // A delta leaves out what it does not name: Science is untouched.
    expect(await rosterOf(admin, courseIdOf(tenantId, 'class-sci'))).toEqual({ 'ada.king': 'student/active' });

    // A user brought back by a later import gets their account back, and can be enrolled again.
    const back = await importBundle(admin, {
      mode: 'delta',
      files: {
        users: [user('stu-2', 'Alan', 'Turing', `alan@${domain}`, { status: 'active' })],
        enrollments: [enrollment('enr-2', 'class-math-a', 'stu-2', 'student', { status: 'active' })],
      },
    });
    expect(back.report.by_type).toMatchObject({ users: { updated: 1 }, enrollments: { updated: 1 } });
    expect(await userByEmail(admin, `alan@${domain}`)).toMatchObject({ deleted_at: null });
    expect((await rosterOf(admin, mathId)).alan).toBe('student/active');
  });

  it('a class marked tobedeleted keeps its course and drops its roster; an admin is never deleted by a roster', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    // The school made Grace an admin here since the first import.
    const grace = await userByEmail(admin, `grace@${domain}`);
    const promoted = await t.call('PATCH', `/api/users/${grace!.id}`, { as: admin, body: { role: 'admin' } });
    expect(promoted.status, promoted.text).toBe(200);
    const done = await importBundle(admin, {
      mode: 'delta',
      files: {
        classes: [{ sourcedId: 'class-sci', status: 'tobedeleted' }],
        users: [{ sourcedId: 'tea-1', status: 'tobedeleted' }],
      },
    });
    expect(done.status).toBe('succeeded');
    expect(done.report.errors).toEqual([
      { file: 'users.csv', line: 2, field: 'sourcedId', message: `tea-1 is the account of a tenant admin (grace@${domain}): a roster does not delete admins` },
    ]);
    expect(done.report.by_type).toMatchObject({ classes: { deleted: 1 }, enrollments: { deleted: 1 }, users: { deleted: 0 } });
    const sci = courseIdOf(tenantId, 'class-sci');
    expect((await t.call('GET', `/api/courses/${sci}`, { as: admin })).status).toBe(200);
    expect(await rosterOf(admin, sci)).toEqual({ ada: 'student/dropped' });
    expect(await userByEmail(admin, `grace@${domain}`)).toMatchObject({ role: 'admin', deleted_at: null });
    expect((await rosterOf(admin, courseIdOf(tenantId, 'class-math-a'))).grace).toBe('instructor/active');
  });

  it('records enrollment events for the feed and webhooks, with the importing admin as actor', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const rows = t.deps.sqlite
      .prepare("select type, actor_id as actorId, count(*) as n from events where tenant_id = ? and type like 'enrollment.%' group by type, actor_id")
      .all(tenantId);
    expect(rows).toEqual([{ type: 'enrollment.created', actorId: admin.user.id, n: 5 }]);
  });
});

describe('roster import: rejected lines', () => {
  it('reports every malformed line with its file, line and field, and imports the rest', async () => {
    const { tenantId, admin, domain } = await school();
    const files = roster(domain);
    files.users.push(
      user('stu-no-email', 'No', 'Email', ''), // line 6
      user('stu-bad-email', 'Bad', 'Email', 'not-an-address'), // line 7
      user('stu-1', 'Ada', 'Again', `ada2@${domain}`), // line 8: the same sourcedId twice
      user('stu-dup-email', 'Same', 'Address', `alan@${domain}`), // line 9: an email already in the file
      { ...user('stu-bad-status', 'Bad', 'Status', `status@${domain}`), status: 'archived' }, // line 10
      user('stu-control', 'Tab\tby', 'Mistake', `tab@${domain}`), // line 11
    );
    files.enrollments.push(
      enrollment('enr-admin', 'class-math-a', 'stu-2', 'administrator'), // line 7: no course role
      enrollment('enr-ghost-class', 'class-nowhere', 'stu-2', 'student'), // line 8: unknown class
      enrollment('enr-ghost-user', 'class-math-a', 'stu-no-email', 'student'), // line 9: its user was rejected
      enrollment('enr-twice', 'class-math-a', 'stu-1', 'student'), // line 10: stu-1 already enrolled by enr-1
      { sourcedId: '', classSourcedId: 'class-math-a', userSourcedId: 'stu-2', role: 'student' }, // line 11
    );
    files.classes.push({ sourcedId: 'class-orphan', title: 'Orphan', courseSourcedId: 'course-gone' }); // line 4
    const done = await importBundle(admin, { mode: 'bulk', files });
    expect(done.status).toBe('succeeded');
    expect(done.report.errors).toEqual([
      { file: 'users.csv', line: 6, field: 'email', message: 'is required: every user here signs in by email' },
      { file: 'users.csv', line: 7, field: 'email', message: '"not-an-address" is not an email address' },
      { file: 'users.csv', line: 8, field: 'sourcedId', message: 'stu-1 is already on line 2' },
      { file: 'users.csv', line: 9, field: 'email', message: `alan@${domain} is also the email of stu-2 in this file` },
      { file: 'users.csv', line: 10, field: 'status', message: 'must be active, tobedeleted or blank, not "archived"' },
      { file: 'users.csv', line: 11, field: 'givenName', message: expect.stringContaining('control characters') },
      { file: 'classes.csv', line: 4, field: 'courseSourcedId', message: 'no course course-gone in courses.csv or an earlier import' },
      { file: 'enrollments.csv', line: 7, field: 'role', message: expect.stringContaining('"administrator" has no course role here') },
      { file: 'enrollments.csv', line: 8, field: 'classSourcedId', message: 'no class class-nowhere in classes.csv or an earlier import' },
      { file: 'enrollments.csv', line: 9, field: 'userSourcedId', message: 'no user stu-no-email in users.csv or an earlier import' },
      { file: 'enrollments.csv', line: 10, field: 'sourcedId', message: 'stu-1 is already enrolled in class-math-a by the enrollment enr-1' },
      { file: 'enrollments.csv', line: 11, field: 'sourcedId', message: 'is required' },
    ]);
    expect(done.report.errors_total).toBe(12);
    // The good lines went in all the same.
    expect(done.report.by_type).toMatchObject({ users: { created: 4 }, classes: { created: 2 }, enrollments: { created: 5 } });
    expect(await rosterOf(admin, courseIdOf(tenantId, 'class-math-a'))).toEqual({ ada: 'student/active', alan: 'student/active', grace: 'instructor/active', katherine: 'ta/active' });
  });

  it('a rejected line in a bulk file does not end the record it names', async () => {
    const { admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const files = roster(domain);
    files.users[1] = user('stu-2', 'Alan', 'Turing', ''); // Alan's line lost its email this time
    const done = await importBundle(admin, { mode: 'bulk', files });
    expect(done.report.errors).toEqual([{ file: 'users.csv', line: 3, field: 'email', message: 'is required: every user here signs in by email' }]);
    expect(done.report.deleted).toBe(0);
    expect(await userByEmail(admin, `alan@${domain}`)).toMatchObject({ deleted_at: null });
  });

  it('reads CSV as RFC 4180: a byte order mark, CRLF, quoted commas, quotes and line breaks, with the lines counted right', async () => {
    const { tenantId, admin, domain } = await school();
    const files = roster(domain);
    const usersCsv = csv(
      [...ROSTER_HEADERS.users],
      [
        user('stu-1', 'Ada, Countess', 'Lovelace "Byron"', `ada@${domain}`),
        user('stu-2', 'Alan', 'Turing\nof Bletchley', `alan@${domain}`), // lines 3-4
        user('stu-x', 'No', 'Email', ''), // line 5
      ].map((row) => ROSTER_HEADERS.users.map((c) => row[c] ?? '')),
      { bom: true, crlf: true },
    );
    const { users: _, ...rest } = files;
    const done = await importBundle(admin, { mode: 'bulk', files: { ...rest, users: [] }, raw: { users: usersCsv } });
    expect(done.status).toBe('succeeded');
    expect(done.report.errors).toEqual([
      // The record that starts on line 3 holds a line break (a control character) in a name: refused, and named by its first line.
      { file: 'users.csv', line: 3, field: 'familyName', message: 'must not contain control characters (found U+000A at position 6)' },
      { file: 'users.csv', line: 5, field: 'email', message: 'is required: every user here signs in by email' },
      expect.objectContaining({ file: 'enrollments.csv', field: 'userSourcedId' }),
      expect.objectContaining({ file: 'enrollments.csv', field: 'userSourcedId' }),
      expect.objectContaining({ file: 'enrollments.csv', field: 'userSourcedId' }),
    ]);
    expect(await userByEmail(admin, `ada@${domain}`)).toMatchObject({ name: 'Ada, Countess Lovelace "Byron"' });
    expect(snapshot(tenantId).users.filter((u) => u.email.endsWith(domain))).toHaveLength(1);
  });
});

describe('roster import: failures change nothing', () => {
  it('a truly broken file fails the whole bulk import: the report names it, and nothing changes (not even what the bulk would end)', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const before = snapshot(tenantId);
    const files = roster(domain);
    files.users = files.users.slice(0, 1); // a bulk that would delete three users...
    const enrollmentsCsv = [
      ROSTER_HEADERS.enrollments.join(','),
      'enr-1,,,class-math-a,school-1,stu-1,student,false,,',
      'enr-9,,,class-math-a,school-1,stu-1,"student,false,,', // ...but this quote never closes
    ].join('\n');
    const { enrollments: _, ...rest } = files;
    const done = await importBundle(admin, { mode: 'bulk', files: rest, raw: { enrollments: enrollmentsCsv } });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^enrollments\.csv, line 3: is not valid CSV: Quote Not Closed/);
    expect(done.report).toMatchObject({ created: 0, updated: 0, deleted: 0, errors_total: 1 });
    expect(done.report.errors[0]).toMatchObject({ file: 'enrollments.csv', line: 3, field: null });
    expect(snapshot(tenantId)).toEqual(before);
    expect(await uploadsLeft()).toEqual([]);
  });

  it('a file with fewer fields on a row than its header, or without a required column, fails the import', async () => {
    const { tenantId, admin, domain } = await school();
    const before = snapshot(tenantId);
    const short = await importBundle(admin, {
      mode: 'bulk',
      files: { users: roster(domain).users },
      raw: { classes: `${ROSTER_HEADERS.classes.join(',')}\nclass-1,,,Title\n` },
    });
    expect(short.status).toBe('failed');
    expect(short.report.errors[0]).toMatchObject({ file: 'classes.csv', line: 2 });
    expect(short.error).toContain('Invalid Record Length');

    const noEmail = await importBundle(admin, { mode: 'delta', files: {}, raw: { users: 'sourcedId,givenName,familyName\nu1,A,B\n' } });
    expect(noEmail.status).toBe('failed');
    expect(noEmail.report.errors[0]).toEqual({ file: 'users.csv', line: 1, field: 'email', message: 'the header row lacks the required column email' });

    expect(snapshot(tenantId).users).toEqual(before.users);
  });

  it('a file that is not UTF-8 fails the import', async () => {
    const { tenantId, admin } = await school();
    const before = snapshot(tenantId);
    const manifest = csv(['propertyName', 'value'], [['oneroster.version', '1.2'], ['file.users', 'delta']]);
    const bytes = Buffer.concat([Buffer.from(`${ROSTER_HEADERS.users.join(',')}\nu1,,,true,x,,Jos`), Buffer.from([0xe9]), Buffer.from(',B,,,x@y.org\n')]);
    const done = await importZip(admin, await buildZip([{ name: 'manifest.csv', data: manifest }, { name: 'users.csv', data: bytes }]));
    expect(done.status).toBe('failed');
    expect(done.report.errors[0]).toMatchObject({ file: 'users.csv', line: null, message: expect.stringContaining('is not UTF-8 text') });
    expect(snapshot(tenantId)).toEqual(before);
  });
});

describe('roster import: a zip whose headers lie', () => {
  it('is stopped while it inflates: the import fails and changes nothing', async () => {
    const { tenantId, admin, domain } = await school();
    await importBundle(admin, { mode: 'bulk', files: roster(domain) });
    const before = snapshot(tenantId);
    // A users.csv of some 50 KB that says it holds 20,000 bytes (yauzl stops it at the 20,001st).
    const rows = roster(domain).users.map((row) => ROSTER_HEADERS.users.map((c) => row[c] ?? ''));
    const padding = Array.from({ length: 2_000 }, () => ROSTER_HEADERS.users.map(() => '')).map((r) => [...r]);
    const big = csv([...ROSTER_HEADERS.users], [...rows, ...padding.map((r) => { r[0] = 'pad'; return r; })]);
    expect(big.length).toBeGreaterThan(40_000);
    const manifest = csv(['propertyName', 'value'], [['oneroster.version', '1.2'], ['file.users', 'bulk']]);
    const zip = understateSize(await buildZip([{ name: 'manifest.csv', data: manifest }, { name: 'users.csv', data: big }]), 'users.csv', 20_000);
    const done = await importZip(admin, zip);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/users\.csv cannot be read: too many bytes in the stream/);
    expect(done.report).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(snapshot(tenantId)).toEqual(before);
    expect(await uploadsLeft()).toEqual([]);
  });
});

describe('roster import: refused bundles (422, nothing written)', () => {
  async function expectRefused(zip: Buffer, reason: RegExp) {
    const { tenantId, admin } = await school();
    const before = snapshot(tenantId);
    const res = await uploadBundle(t, admin, zip);
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(reason);
    expect(t.db.select({ n: count() }).from(jobs).where(eq(jobs.tenantId, tenantId)).get()!.n).toBe(0);
    expect(snapshot(tenantId)).toEqual(before);
    expect(await uploadsLeft()).toEqual([]);
  }

  it('a zip bomb (an entry inflating over 100 times its size)', async () => {
    const manifest = csv(['propertyName', 'value'], [['oneroster.version', '1.2'], ['file.users', 'bulk']]);
    const bomb = Buffer.alloc(8 * 1024 * 1024, 0x20);
    await expectRefused(await buildZip([{ name: 'manifest.csv', data: manifest }, { name: 'users.csv', data: bomb }]), /users\.csv would inflate \d+ times its size; at most 100/);
  });

  it('an entry whose path leaves the folder, or is absolute', async () => {
    const zip = await rosterBundle({ mode: 'bulk', files: { users: [] }, extra: [{ name: 'xx/evil.csv', data: 'x' }] });
    await expectRefused(renameInZip(zip, 'xx/evil.csv', '../evil.csv'), /invalid relative path: \.\.\/evil\.csv/);
    const absolute = await rosterBundle({ mode: 'bulk', files: { users: [] }, extra: [{ name: 'xetc/passwd', data: 'x' }] });
    await expectRefused(renameInZip(absolute, 'xetc/passwd', '/etc/passwd'), /absolute path: \/etc\/passwd/);
  });

  it('too many entries', async () => {
    const extra = Array.from({ length: 100 }, (_, i) => ({ name: `extra-${i}.txt`, data: 'x' }));
    await expectRefused(await rosterBundle({ mode: 'bulk', files: { users: [] }, extra }), /has 102 entries; a roster bundle may have at most 100/);
  });

  it('not a zip, no manifest, an unknown version, mixed modes, or a listed file missing', async () => {
    await expectRefused(Buffer.from('sourcedId,email\n1,a@b.c\n'), /not a readable zip archive/);
    await expectRefused(await buildZip([{ name: 'users.csv', data: 'sourcedId\n' }]), /no manifest\.csv/);
    await expectRefused(await rosterBundle({ mode: 'bulk', files: { users: [] }, manifest: { 'oneroster.version': '1.0' } }), /oneroster\.version must be 1\.2/);
    await expectRefused(await rosterBundle({ mode: 'bulk', files: { users: [] }, manifest: { 'file.enrollments': 'delta' } }), /lists enrollments\.csv as delta, but the zip has no enrollments\.csv/);
    await expectRefused(await rosterBundle({ mode: 'bulk', files: { users: [], enrollments: [] }, manifest: { 'file.enrollments': 'delta' } }), /mixes bulk and delta/);
    await expectRefused(await rosterBundle({ mode: 'bulk', files: {} }), /lists none of/);
    await expectRefused(await rosterBundle({ mode: 'bulk', files: { users: [] }, manifest: { 'file.users': 'full' } }), /file\.users must be bulk, delta or absent/);
  });

  it('refuses what is not a multipart upload of one file', async () => {
    const { admin } = await school();
    const tooLarge = await t.call('POST', '/api/rosters/imports', {
      as: admin,
      rawBody: 'x',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': String(60 * 1024 * 1024) },
    });
    expectProblem(tooLarge, 413, 'payload_too_large');
    const json = await t.call('POST', '/api/rosters/imports', { as: admin, body: { file: 'x' } });
    expectProblem(json, 415, 'unsupported_media_type');
  });
});
