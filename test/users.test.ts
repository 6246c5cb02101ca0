// Users: admin management, search, self-service, permissions, and soft delete that locks the user
// out everywhere at once while keeping their data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { enrollments } from '../db/schema';
import { eq } from 'drizzle-orm';

describe('POST /api/users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('an admin creates a user: 201, Location, no password hash in sight', async () => {
    const res = await t.call('POST', '/api/users', {
      as: t.admin,
      body: { email: 'Ada.Lovelace@Example.com', name: ' Ada Lovelace ', password: 'analytical-engine' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/users/${res.body.id}`);
    expect(res.body).toMatchObject({
      tenant_id: t.defaultTenantId,
      email: 'ada.lovelace@example.com',
      name: 'Ada Lovelace',
      role: 'member',
      deleted_at: null,
    });
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'deleted_at', 'email', 'id', 'name', 'role', 'tenant_id', 'timezone', 'updated_at']);
    expect(res.text).not.toContain('scrypt');
    const session = await t.signIn('ada.lovelace@example.com', 'analytical-engine');
    expect(session.access_token).toBeTruthy();
  });

  it('creates admins when asked, and users without a password who cannot sign in yet', async () => {
    const admin = await t.call('POST', '/api/users', { as: t.admin, body: { email: 'second.admin@example.com', name: 'Second', role: 'admin' } });
    expect(admin.status).toBe(201);
    expect(admin.body.role).toBe('admin');
    const res = await t.call('POST', '/api/auth/token', { body: { email: 'second.admin@example.com', password: 'whatever-it-is' } });
    expect(res.status).toBe(401);
  });

  it('409 for an email already used in the tenant, whatever its case; fine in another tenant', async () => {
    const body = { email: 'dupe@example.com', name: 'Dupe' };
    expect((await t.call('POST', '/api/users', { as: t.admin, body })).status).toBe(201);
    const again = await t.call('POST', '/api/users', { as: t.admin, body: { ...body, email: 'DUPE@example.com' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    const other = await t.newTenant('users-other');
    expect((await t.call('POST', '/api/users', { as: other.admin, body })).status).toBe(201);
  });

  it('400 for malformed bodies', async () => {
    for (const body of [
      {},
      { email: 'x@example.com' },
      { email: 'not-an-email', name: 'X' },
      { email: 'x@example.com', name: 'X', password: 'short' },
      { email: 'x@example.com', name: 'X', role: 'owner' },
      { email: 'x@example.com', name: 'X', is_platform_admin: true },
      { email: 'x@example.com', name: '   ' },
    ]) {
      const res = await t.call('POST', '/api/users', { as: t.admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('403 for a member, 401 without a credential', async () => {
    const member = await t.newUser();
    const res = await t.call('POST', '/api/users', { as: member, body: { email: 'm@example.com', name: 'M' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect((await t.call('POST', '/api/users', { body: { email: 'm@example.com', name: 'M' } })).status).toBe(401);
  });
});

describe('GET /api/users and /api/users/search', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  beforeAll(async () => {
    t = await makeTestApp();
    alice = await t.newUser({ name: 'Alice Archer', email: 'alice@school.example' });
    bob = await t.newUser({ name: 'Bob Builder', email: 'bob@school.example', role: 'admin' });
    carol = await t.newUser({ name: 'Carol 100% Real', email: 'carol@other.example' });
    const other = await t.newTenant('search-other');
    await t.newUser({ name: 'Alice Elsewhere', email: 'alice@elsewhere.example', tenantId: other.tenantId });
  });
  afterAll(() => t.close());

  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((u) => u.id);

  it('lists the tenant\'s users for an admin, sorted by name, with pagination', async () => {
    const res = await t.call('GET', '/api/users', { as: t.admin });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 4, total_pages: 1 });
    expect(res.body.data.map((u: { name: string }) => u.name)).toEqual(['Administrator', 'Alice Archer', 'Bob Builder', 'Carol 100% Real']);
    expect(res.body.data.every((u: { tenant_id: string }) => u.tenant_id === t.defaultTenantId)).toBe(true);
  });

  it('filters by role', async () => {
    const admins = await t.call('GET', '/api/users?role=admin', { as: t.admin });
    expect(ids(admins).sort()).toEqual([t.admin.user.id, bob.user.id].sort());
    const members = await t.call('GET', '/api/users?role=member', { as: t.admin });
    expect(ids(members).sort()).toEqual([alice.user.id, carol.user.id].sort());
    expect((await t.call('GET', '/api/users?role=owner', { as: t.admin })).status).toBe(400);
  });

  it('403 for members', async () => {
    const res = await t.call('GET', '/api/users', { as: alice });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('searches name and email case-insensitively, within the tenant only', async () => {
    const byName = await t.call('GET', '/api/users/search?q=ALICE', { as: t.admin });
    expect(byName.status).toBe(200);
    expect(ids(byName)).toEqual([alice.user.id]);
    const byEmail = await t.call('GET', '/api/users/search?q=school.example', { as: t.admin });
    expect(ids(byEmail).sort()).toEqual([alice.user.id, bob.user.id].sort());
    const none = await t.call('GET', '/api/users/search?q=zzz', { as: t.admin });
    expect(none.body).toEqual({ data: [], pagination: { page: 1, per_page: 100, total: 0, total_pages: 1 } });
  });

  it('ignores case in every script, not just ASCII', async () => {
    const lukasz = await t.newUser({ name: 'Łukasz Öberg', email: 'lukasz@school.example' });
    const zoe = await t.newUser({ name: 'Zoë Ünïcødé', email: 'zoe@school.example' });
    for (const q of ['łukasz', 'ÖBERG', 'Łukasz']) expect(ids(await t.call('GET', `/api/users/search?q=${encodeURIComponent(q)}`, { as: t.admin })), q).toEqual([lukasz.user.id]);
    expect(ids(await t.call('GET', `/api/users/search?q=${encodeURIComponent('ÜNÏ')}`, { as: t.admin }))).toEqual([zoe.user.id]);
  });

  it('treats LIKE wildcards in the query literally', async () => {
    const percent = await t.call('GET', `/api/users/search?q=${encodeURIComponent('100%')}`, { as: t.admin });
    expect(ids(percent)).toEqual([carol.user.id]);
    const underscore = await t.call('GET', '/api/users/search?q=_', { as: t.admin });
    expect(underscore.body.data).toEqual([]);
    const lonePercent = await t.call('GET', `/api/users/search?q=${encodeURIComponent('%')}`, { as: t.admin });
    expect(ids(lonePercent)).toEqual([carol.user.id]);
  });

  it('400 without q', async () => {
    expect((await t.call('GET', '/api/users/search', { as: t.admin })).status).toBe(400);
    expect((await t.call('GET', '/api/users/search?q=%20%20', { as: t.admin })).status).toBe(400);
  });

  it('lets instructors search, not TAs, students or plain members (admins and instructors only)', async () => {
    expect((await t.call('GET', '/api/users/search?q=bob', { as: alice })).status).toBe(403);
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const teacher = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: teacher.user.id, role: 'instructor' });
    const ta = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: ta.user.id, role: 'ta' });
    const student = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id, role: 'student' });

    expect(ids(await t.call('GET', '/api/users/search?q=bob', { as: teacher }))).toEqual([bob.user.id]);
    expect((await t.call('GET', '/api/users/search?q=bob', { as: ta })).status).toBe(403);
    expect((await t.call('GET', '/api/users/search?q=bob', { as: student })).status).toBe(403);
  });

  it('a deleted course makes nobody an instructor any more', async () => {
    const teacher = await t.newUser();
    const created = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Short-lived' } });
    expect(created.status).toBe(201);
    expect((await t.call('GET', '/api/users/search?q=bob', { as: teacher })).status).toBe(200);
    expect((await t.call('DELETE', `/api/courses/${created.body.id}`, { as: teacher })).status).toBe(204);
    expect((await t.call('GET', '/api/users/search?q=bob', { as: teacher })).status).toBe(403);
  });
});

describe('GET /api/users/me, /api/users/{id}, /api/users/me/permissions', () => {
  let t: TestApp;
  let member: TestUser;
  beforeAll(async () => {
    t = await makeTestApp();
    member = await t.newUser({ name: 'Member One' });
  });
  afterAll(() => t.close());

  it('me is the caller, by token or by API key', async () => {
    const res = await t.call('GET', '/api/users/me', { as: member });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: member.user.id, email: member.user.email, role: 'member', tenant_id: t.defaultTenantId });
    const { key } = await t.newApiKey(member);
    expect((await t.call('GET', '/api/users/me', { as: key })).body.id).toBe(member.user.id);
  });

  it('self and admin read a user; another member only when sharing a course', async () => {
    const other = await t.newUser();
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: member })).status).toBe(200);
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: t.admin })).body.email).toBe(member.user.email);

    const refused = await t.call('GET', `/api/users/${member.user.id}`, { as: other });
    expect(refused.status).toBe(403);

    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: member.user.id });
    const enrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: other.user.id });
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: other })).status).toBe(200);

    // A dropped enrollment no longer connects them.
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, enrollment.id)).run();
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: other })).status).toBe(403);
  });

  it('a deleted course no longer connects its members', async () => {
    const teacher = await t.newUser();
    const student = await t.newUser();
    const course = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Closing soon' } });
    await t.call('PATCH', `/api/courses/${course.body.id}`, { as: teacher, body: { enrollment: { self_enroll: 'open' } } });
    await t.call('POST', `/api/courses/${course.body.id}/publish`, { as: teacher });
    expect((await t.call('POST', `/api/enrollments/course/${course.body.id}/enroll`, { as: student })).status).toBe(201);
    expect((await t.call('GET', `/api/users/${teacher.user.id}`, { as: student })).status).toBe(200);
    expect((await t.call('GET', `/api/users/${student.user.id}`, { as: teacher })).status).toBe(200);

    expect((await t.call('DELETE', `/api/courses/${course.body.id}`, { as: teacher })).status).toBe(204);
    expect((await t.call('GET', `/api/users/${teacher.user.id}`, { as: student })).status).toBe(403);
    expect((await t.call('GET', `/api/users/${student.user.id}`, { as: teacher })).status).toBe(403);
  });

  it('404 for unknown ids and for users of another tenant, 400 for malformed ids', async () => {
    const other = await t.newTenant('read-other');
    const foreigner = await t.newUser({ tenantId: other.tenantId });
    expect((await t.call('GET', `/api/users/${foreigner.user.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/users/${member.user.id}`, { as: other.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/users/${crypto.randomUUID()}`, { as: t.admin })).status).toBe(404);
    const malformed = await t.call('GET', '/api/users/12345', { as: t.admin });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].path).toBe('id');
  });

  it('permissions of a member: tenant role, permissions and active course roles', async () => {
    const learner = await t.newUser();
    const taught = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const studied = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const left = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: taught.id, userId: learner.user.id, role: 'instructor' });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: studied.id, userId: learner.user.id, role: 'student' });
    const dropped = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: left.id, userId: learner.user.id });
    t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, dropped.id)).run();

    const res = await t.call('GET', '/api/users/me/permissions', { as: learner });
    expect(res.status).toBe(200);
    expect(res.body.tenant_role).toBe('member');
    expect(res.body.platform_admin).toBe(false);
    expect(res.body.permissions).toContain('courses:create');
    expect(res.body.permissions).not.toContain('users:write');
    expect(res.body.permissions).not.toContain('tenants:manage');
    expect(res.body.courses).toEqual(
      expect.arrayContaining([
        { course_id: taught.id, role: 'instructor' },
        { course_id: studied.id, role: 'student' },
      ]),
    );
    expect(res.body.courses).toHaveLength(2);
  });

  it('permissions of the platform operator and of a tenant admin', async () => {
    const operator = await t.call('GET', '/api/users/me/permissions', { as: t.admin });
    expect(operator.body).toMatchObject({ tenant_role: 'admin', platform_admin: true, courses: [] });
    expect(operator.body.permissions).toEqual(expect.arrayContaining(['users:write', 'users:delete', 'tenants:manage']));

    const other = await t.newTenant('perm-other');
    const tenantAdmin = await t.call('GET', '/api/users/me/permissions', { as: other.admin });
    expect(tenantAdmin.body).toMatchObject({ tenant_role: 'admin', platform_admin: false });
    expect(tenantAdmin.body.permissions).toContain('users:write');
    expect(tenantAdmin.body.permissions).not.toContain('tenants:manage');
  });

  it('401 without a credential', async () => {
    expect((await t.call('GET', '/api/users/me')).status).toBe(401);
    expect((await t.call('GET', '/api/users/me/permissions')).status).toBe(401);
  });
});

describe('PATCH /api/users/{id}', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('a member renames themself', async () => {
    const member = await t.newUser();
    // /me is served from the credential's cached user: it must show every change at once.
    expect((await t.call('GET', '/api/users/me', { as: member })).body.name).toBe(member.user.name);
    t.clock.advance(1000);
    const res = await t.call('PATCH', `/api/users/${member.user.id}`, { as: member, body: { name: '  New Name ' } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('New Name');
    expect(res.body.updated_at).not.toBe(res.body.created_at);
    const me = await t.call('GET', '/api/users/me', { as: member });
    expect(me.body).toEqual(res.body);
  });

  it('a member cannot change their own email or role, nor anyone else', async () => {
    const member = await t.newUser();
    const other = await t.newUser();
    const email = await t.call('PATCH', `/api/users/${member.user.id}`, { as: member, body: { email: 'new@example.com' } });
    expect(email.status).toBe(403);
    const role = await t.call('PATCH', `/api/users/${member.user.id}`, { as: member, body: { role: 'admin' } });
    expect(role.status).toBe(403);
    const someoneElse = await t.call('PATCH', `/api/users/${other.user.id}`, { as: member, body: { name: 'Hacked' } });
    expect(someoneElse.status).toBe(403);
    expect((await t.call('GET', `/api/users/${other.user.id}`, { as: t.admin })).body.name).not.toBe('Hacked');
  });

  it('a member may send their email and role back unchanged with a rename (the whole object, as front ends do)', async () => {
    const member = await t.newUser({ name: 'Before' });
    const me = (await t.call('GET', '/api/users/me', { as: member })).body;
    const res = await t.call('PATCH', `/api/users/${member.user.id}`, {
      as: member,
      body: { name: 'After', email: me.email.toUpperCase(), role: me.role },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'After', email: me.email, role: 'member' });
    // A real change of either is still refused.
    expect((await t.call('PATCH', `/api/users/${member.user.id}`, { as: member, body: { name: 'x', role: 'admin' } })).status).toBe(403);
  });

  it('changing one\'s own password needs the current one (422 otherwise) and ends other sessions', async () => {
    const member = await t.newUser({ password: 'old-password-1' });
    const session = await t.signIn(member.user.email, 'old-password-1');
    const path = `/api/users/${member.user.id}`;

    const missing = await t.call('PATCH', path, { as: member, body: { password: 'new-password-1' } });
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe('validation_failed');
    expect(missing.body.errors[0].path).toBe('current_password');
    const wrong = await t.call('PATCH', path, { as: member, body: { password: 'new-password-1', current_password: 'nope-nope' } });
    expect(wrong.status).toBe(422);

    const ok = await t.call('PATCH', path, { as: member, body: { password: 'new-password-1', current_password: 'old-password-1' } });
    expect(ok.status).toBe(200);
    expect((await t.call('POST', '/api/auth/token', { body: { email: member.user.email, password: 'old-password-1' } })).status).toBe(401);
    expect((await t.signIn(member.user.email, 'new-password-1')).access_token).toBeTruthy();
    // The refresh token from before the change is dead.
    expect((await t.call('POST', '/api/auth/refresh', { body: { refresh_token: session.refresh_token } })).status).toBe(401);
  });

  it('a new password signs the user out everywhere: access tokens issued before it stop at once, API keys go on', async () => {
    const member = await t.newUser({ password: 'before-change-1' });
    const elsewhere = await t.signIn(member.user.email, 'before-change-1');
    const here = await t.signIn(member.user.email, 'before-change-1');
    const { key } = await t.newApiKey(member);
    const fromKey = (await t.call('POST', '/api/auth/token', { body: { api_key: key } })).body.access_token as string;
    t.clock.advance(2_000);

    const changed = await t.call('PATCH', `/api/users/${member.user.id}`, {
      as: here.access_token,
      body: { password: 'after-change-1', current_password: 'before-change-1' },
    });
    expect(changed.status).toBe(200);
    for (const token of [elsewhere.access_token, here.access_token, fromKey]) {
      expectUnauthorized(await t.call('GET', '/api/users/me', { as: token }));
    }
    // The API key is a credential of its own: it goes on, and signing in anew works.
    expect((await t.call('GET', '/api/users/me', { as: key })).status).toBe(200);
    const again = await t.signIn(member.user.email, 'after-change-1');
    expect((await t.call('GET', '/api/users/me', { as: again.access_token })).status).toBe(200);

    // An admin's reset does the same to the member's sessions (a compromised account).
    t.clock.advance(2_000);
    expect((await t.call('PATCH', `/api/users/${member.user.id}`, { as: t.admin, body: { password: 'reset-by-admin-1' } })).status).toBe(200);
    expectUnauthorized(await t.call('GET', '/api/users/me', { as: again.access_token }));
  });

  it('a new password ends the access tokens issued earlier in the same second; those issued after it, in that second too, work', async () => {
    const member = await t.newUser({ password: 'same-second-1' });
    // Three tries at different points of one second: tokens issued 1-900 ms before the change.
    for (const [i, before] of [1, 300, 900].entries()) {
      const second = Math.ceil(t.clock.now().getTime() / 1000) * 1000 + 2_000;
      t.clock.set(new Date(second + 950 - before));
      const earlier = await t.signIn(member.user.email, `same-second-${i + 1}`);
      expect((await t.call('GET', '/api/users/me', { as: earlier.access_token })).status).toBe(200);
      t.clock.set(new Date(second + 950));
      const changed = await t.call('PATCH', `/api/users/${member.user.id}`, {
        as: t.admin,
        body: { password: `same-second-${i + 2}` },
      });
      expect(changed.status).toBe(200);
      expectUnauthorized(await t.call('GET', '/api/users/me', { as: earlier.access_token }));
      // Signing in again at once (the same millisecond as the change, by this clock) works.
      const after = await t.signIn(member.user.email, `same-second-${i + 2}`);
      expect((await t.call('GET', '/api/users/me', { as: after.access_token })).status).toBe(200);
      t.clock.advance(40);
      expect((await t.call('GET', '/api/users/me', { as: after.access_token })).status).toBe(200);
    }
  });

  it('limits guesses of current_password as sign-in limits guesses (a stolen API key cannot find the password)', async () => {
    const member = await t.newUser({ password: 'the-real-one-1' });
    const { key } = await t.newApiKey(member);
    const path = `/api/users/${member.user.id}`;
    for (let i = 0; i < 5; i++) {
      const guess = await t.call('PATCH', path, { as: key, body: { password: 'taken-over-1', current_password: `guess-${i}` } });
      expect(guess.status).toBe(422);
    }
    // Past the limit even the right one is refused, and so is signing in: one budget per account.
    const limited = await t.call('PATCH', path, { as: key, body: { password: 'taken-over-1', current_password: 'the-real-one-1' } });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await t.call('POST', '/api/auth/token', { body: { email: member.user.email, password: 'the-real-one-1' } })).status).toBe(429);

    t.clock.advance(16 * 60 * 1000);
    const owner = await t.newApiKey(member);
    const changed = await t.call('PATCH', path, { as: owner.key, body: { password: 'a-new-one-22', current_password: 'the-real-one-1' } });
    expect(changed.status).toBe(200);
  });

  it('an admin must also give their own current password, but not someone else\'s', async () => {
    const member = await t.newUser({ password: 'member-password' });
    const reset = await t.call('PATCH', `/api/users/${member.user.id}`, { as: t.admin, body: { password: 'reset-by-admin' } });
    expect(reset.status).toBe(200);
    expect((await t.signIn(member.user.email, 'reset-by-admin')).access_token).toBeTruthy();

    const own = await t.call('PATCH', `/api/users/${t.admin.user.id}`, { as: t.admin, body: { password: 'another-password' } });
    expect(own.status).toBe(422);
  });

  it('an admin changes email and role; the new role applies at once to existing tokens', async () => {
    const member = await t.newUser();
    const token = member.token;
    expect((await t.call('GET', '/api/users', { as: token })).status).toBe(403);

    const promoted = await t.call('PATCH', `/api/users/${member.user.id}`, {
      as: t.admin,
      body: { role: 'admin', email: 'Promoted@Example.com' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ role: 'admin', email: 'promoted@example.com' });
    expect((await t.call('GET', '/api/users', { as: token })).status).toBe(200);
    expect((await t.call('GET', '/api/users/me', { as: token })).body).toEqual(promoted.body);

    await t.call('PATCH', `/api/users/${member.user.id}`, { as: t.admin, body: { role: 'member' } });
    expect((await t.call('GET', '/api/users', { as: token })).status).toBe(403);
  });

  it('409 when an admin would demote themself or take a used email', async () => {
    const demote = await t.call('PATCH', `/api/users/${t.admin.user.id}`, { as: t.admin, body: { role: 'member' } });
    expect(demote.status).toBe(409);
    const a = await t.newUser();
    const b = await t.newUser();
    const taken = await t.call('PATCH', `/api/users/${b.user.id}`, { as: t.admin, body: { email: a.user.email.toUpperCase() } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('conflict');
  });

  it('400 for empty or malformed bodies and ids; 404 across tenants', async () => {
    const member = await t.newUser();
    const path = `/api/users/${member.user.id}`;
    expect((await t.call('PATCH', path, { as: t.admin, body: {} })).status).toBe(400);
    expect((await t.call('PATCH', path, { as: t.admin, body: { current_password: 'x' } })).status).toBe(400);
    expect((await t.call('PATCH', path, { as: t.admin, body: { role: 'root' } })).status).toBe(400);
    expect((await t.call('PATCH', path, { as: t.admin, body: { password: 'short' } })).status).toBe(400);
    expect((await t.call('PATCH', path, { as: t.admin, body: { name: 'x', tenant_id: crypto.randomUUID() } })).status).toBe(400);
    expect((await t.call('PATCH', '/api/users/not-a-uuid', { as: t.admin, body: { name: 'x' } })).status).toBe(400);
    const other = await t.newTenant('patch-other');
    expect((await t.call('PATCH', path, { as: other.admin, body: { name: 'x' } })).status).toBe(404);
  });
});

describe('DELETE /api/users/{id}: soft delete', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('locks the user out everywhere at once and keeps their data', async () => {
    const password = 'victim-password';
    const victim = await t.newUser({ password, name: 'Victim' });
    const session = await t.signIn(victim.user.email, password);
    const { key, id: keyId } = await t.newApiKey(victim);
    const group = await t.call('POST', '/api/groups', { as: t.admin, body: { name: 'Deleted members' } });
    await t.call('PUT', `/api/groups/${group.body.id}/members/${victim.user.id}`, { as: t.admin });

    // Every credential works and is now cached.
    expect((await t.call('GET', '/api/users/me', { as: session.access_token })).status).toBe(200);
    expect((await t.call('GET', '/api/users/me', { as: key })).status).toBe(200);
    expect((await t.call('GET', '/api/users/me', { headers: { 'X-API-Key': key } })).status).toBe(200);

    const res = await t.call('DELETE', `/api/users/${victim.user.id}`, { as: t.admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expect((await t.call('POST', '/api/auth/token', { body: { email: victim.user.email, password } })).status).toBe(401);
    const jwt = await t.call('GET', '/api/users/me', { as: session.access_token });
    expect(jwt.status).toBe(401);
    expect(jwt.headers.get('www-authenticate')).toBe('Bearer');
    expect((await t.call('GET', '/api/users/me', { as: key })).status).toBe(401);
    expect((await t.call('GET', '/api/users/me', { headers: { 'X-API-Key': key } })).status).toBe(401);
    expect((await t.call('POST', '/api/auth/token', { body: { api_key: key } })).status).toBe(401);
    expect((await t.call('POST', '/api/auth/refresh', { body: { refresh_token: session.refresh_token } })).status).toBe(401);
    // A token signed now for the deleted user is refused too.
    expect((await t.call('GET', '/api/users/me', { as: await t.tokenFor(victim.user) })).status).toBe(401);

    // Their data stays: the admin still sees the row, marked deleted.
    const kept = await t.call('GET', `/api/users/${victim.user.id}`, { as: t.admin });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ id: victim.user.id, name: 'Victim', deleted_at: t.clock.now().toISOString() });
    const listed = await t.call('GET', '/api/users?include_deleted=true', { as: t.admin });
    expect(listed.body.data.map((u: { id: string }) => u.id)).toContain(victim.user.id);
    const hidden = await t.call('GET', '/api/users', { as: t.admin });
    expect(hidden.body.data.map((u: { id: string }) => u.id)).not.toContain(victim.user.id);
    expect((await t.call('GET', `/api/users/search?q=Victim`, { as: t.admin })).body.data).toEqual([]);
    // The API key row is kept as well (its owner could be restored), it just does not authenticate.
    expect(t.db.query.apiKeys.findFirst({ where: (k, { eq: e }) => e(k.id, keyId) }).sync()).toBeTruthy();
    const members = await t.call('GET', `/api/groups/${group.body.id}`, { as: t.admin });
    expect(members.body.members).toEqual([]);
  });

  it("frees the email: a new account may take it (a returning learner), the old one stays deleted", async () => {
    const gone = await t.newUser({ email: 'returning@school.example', name: 'First time', password: 'first-password-1' });
    expect((await t.call('DELETE', `/api/users/${gone.user.id}`, { as: t.admin })).status).toBe(204);

    const again = await t.call('POST', '/api/users', { as: t.admin, body: { email: 'Returning@School.example', name: 'Second time', password: 'second-password-2' } });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(gone.user.id);
    const session = await t.signIn('returning@school.example', 'second-password-2');
    expect((await t.call('GET', '/api/users/me', { as: session.access_token })).body.id).toBe(again.body.id);
    expect((await t.call('POST', '/api/auth/token', { body: { email: 'returning@school.example', password: 'first-password-1' } })).status).toBe(401);
    const all = await t.call('GET', '/api/users?include_deleted=true&per_page=100', { as: t.admin });
    const same = all.body.data.filter((u: { email: string }) => u.email === 'returning@school.example');
    expect(same.map((u: { id: string; deleted_at: string | null }) => [u.id, u.deleted_at !== null]).sort()).toEqual(
      [
        [gone.user.id, true],
        [again.body.id, false],
      ].sort(),
    );

    // Among live users the email is still unique: by create and by rename.
    expect((await t.call('POST', '/api/users', { as: t.admin, body: { email: 'returning@school.example', name: 'Third' } })).status).toBe(409);
    const other = await t.newUser();
    expect((await t.call('PATCH', `/api/users/${other.user.id}`, { as: t.admin, body: { email: 'returning@school.example' } })).status).toBe(409);
  });

  it('a deleted user is 404 to members and to further deletes and updates', async () => {
    const victim = await t.newUser();
    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id });
    const peer = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: victim.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: peer.user.id });
    expect((await t.call('DELETE', `/api/users/${victim.user.id}`, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/users/${victim.user.id}`, { as: peer })).status).toBe(404);
    expect((await t.call('DELETE', `/api/users/${victim.user.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('PATCH', `/api/users/${victim.user.id}`, { as: t.admin, body: { name: 'x' } })).status).toBe(404);
  });

  it('403 for members, 409 for oneself, 404 across tenants, 400 for malformed ids', async () => {
    const member = await t.newUser();
    const target = await t.newUser();
    expect((await t.call('DELETE', `/api/users/${target.user.id}`, { as: member })).status).toBe(403);
    expect((await t.call('DELETE', `/api/users/${t.admin.user.id}`, { as: t.admin })).status).toBe(409);
    const other = await t.newTenant('delete-other');
    expect((await t.call('DELETE', `/api/users/${target.user.id}`, { as: other.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/users/${target.user.id}`, { as: target })).status).toBe(200);
    expect((await t.call('DELETE', '/api/users/xyz', { as: t.admin })).status).toBe(400);
  });
  it('another admin can neither demote, change nor delete the platform operator', async () => {
    const otherAdmin = await t.newUser({ role: 'admin' });
    const operator = t.admin.user.id;
    for (const body of [{ role: 'member' }, { email: 'taken-over@example.com' }, { password: 'new-password-1' }]) {
      expect((await t.call('PATCH', `/api/users/${operator}`, { as: otherAdmin, body })).status).toBe(403);
    }
    expect((await t.call('DELETE', `/api/users/${operator}`, { as: otherAdmin })).status).toBe(403);
    const me = await t.call('GET', '/api/users/me', { as: t.admin });
    expect(me.body.role).toBe('admin');
    expect(me.body.email).toBe(t.admin.user.email);
  });
});
