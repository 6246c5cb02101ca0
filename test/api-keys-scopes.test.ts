// Scoped API keys through the HTTP API: the catalogue; a key holding only grades:read reads grades
// and nothing else (403 insufficient_scope with WWW-Authenticate); a read scope refuses writes; a
// write scope holds its read one; course_ids limit the courses a key reaches (404 as any course the
// caller may not read); a demoted creator demotes the key; a key made without scopes, as keys made
// before scopes existed, holds every scope; and every route of every area needs a declared scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { apiKeys, users } from '../db/schema';
import { scopeNeeded } from '../src/auth/scopes';
import { expectProblem, makeTestApp, type CallResult, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

const expectInsufficient = (res: CallResult, scope: string, where?: string) => {
  expectProblem(res, 403, 'insufficient_scope', where);
  expect(res.headers.get('www-authenticate'), where).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
};

describe('scoped API keys', () => {
  let t: TestApp;
  let instructor: TestUser;
  let student: TestUser;
  let courseId: string;
  let otherCourseId: string;
  let assignmentId: string;

  const key = async (as: TestUser, body: Record<string, unknown>) => {
    const res = await t.call('POST', '/api/api-keys', { as, body: { name: 'integration', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; key: string; scopes: string[]; course_ids: string[] | null };
  };

  beforeAll(async () => {
    t = await makeTestApp();
    instructor = await t.newUser({ name: 'Instructor' });
    student = await t.newUser({ name: 'Student' });
    for (const title of ['Biology', 'Geology']) {
      const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id, title });
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id, role: 'student' });
      if (title === 'Biology') courseId = course.id;
      else otherCourseId = course.id;
    }
    const assignment = await t.call('POST', `/api/gradebook/offerings/${courseId}/assignments`, { as: instructor, body: { label: 'Quiz', grade_metadata: { score_maximum: 10 } } });
    assignmentId = assignment.body.id;
  });
  afterAll(() => t.close());

  it('lists the catalogue: a read and a write scope per area', async () => {
    const res = await t.call('GET', '/api/api-keys/scopes', { as: instructor });
    expect(res.status).toBe(200);
    const names = (res.body.data as { name: string }[]).map((s) => s.name);
    for (const area of ['courses', 'enrollments', 'grades', 'documents', 'activities', 'compliance', 'analytics', 'users', 'webhooks']) {
      expect(names).toContain(`${area}:read`);
      expect(names).toContain(`${area}:write`);
    }
    expect(res.body.data.find((s: { name: string }) => s.name === 'grades:read')).toMatchObject({ area: 'grades', access: 'read' });
  });

  it('refuses unknown scopes and courses (422), and shows scopes and courses on the key, never the secret again', async () => {
    expectProblem(await t.call('POST', '/api/api-keys', { as: instructor, body: { name: 'x', scopes: ['grades:read', 'grades:admin'] } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', '/api/api-keys', { as: instructor, body: { name: 'x', scopes: [] } }), 400, 'validation_failed');
    const foreign = await t.newTenant('scopes-other');
    const foreignCourse = insertCourse(t.db, { tenantId: foreign.tenantId, createdBy: foreign.admin.user.id });
    expectProblem(await t.call('POST', '/api/api-keys', { as: instructor, body: { name: 'x', course_ids: [foreignCourse.id] } }), 422, 'validation_failed');
    const made = await key(instructor, { scopes: ['grades:read'], course_ids: [courseId] });
    expect(made).toMatchObject({ scopes: ['grades:read'], course_ids: [courseId] });
    const listed = await t.call('GET', `/api/api-keys/${made.id}`, { as: instructor });
    expect(listed.body).toMatchObject({ scopes: ['grades:read'], course_ids: [courseId] });
    expect(listed.body.key).toBeUndefined();
  });

  it('a key with only grades:read reads grades and nothing else; writes are refused', async () => {
    const { key: secret } = await key(instructor, { scopes: ['grades:read'] });
    for (const as of [secret, (await t.call('POST', '/api/auth/token', { body: { api_key: secret } })).body.access_token as string]) {
      expect((await t.call('GET', `/api/gradebook/offerings/${courseId}/grades`, { as })).status).toBe(200);
      expect((await t.call('GET', `/api/gradebook/assignments/${assignmentId}`, { as })).status).toBe(200);
      expectInsufficient(await t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as, body: { score: 5 } }), 'grades:write');
      expectInsufficient(await t.call('GET', `/api/courses/${courseId}`, { as }), 'courses:read');
      expectInsufficient(await t.call('GET', `/api/enrollments?course_id=${courseId}`, { as }), 'enrollments:read');
      expectInsufficient(await t.call('GET', '/api/documents', { as }), 'documents:read');
      expectInsufficient(await t.call('GET', `/api/compliance/courses/${courseId}/report`, { as }), 'compliance:read');
      expectInsufficient(await t.call('PATCH', `/api/courses/${courseId}`, { as, body: { title: 'x' } }), 'courses:write');
      // Its own identity is open to every key.
      expect((await t.call('GET', '/api/users/me', { as })).status).toBe(200);
    }
    expect((await t.call('GET', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: instructor })).status).toBe(404);
  });

  it('a write scope holds its read one, and nothing of other areas', async () => {
    const { key: secret } = await key(instructor, { scopes: ['grades:write', 'courses:read'] });
    const graded = await t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: secret, body: { score: 7 } });
    expect(graded.status, graded.text).toBe(201);
    expect((await t.call('GET', `/api/gradebook/offerings/${courseId}/grades`, { as: secret })).status).toBe(200);
    expect((await t.call('GET', `/api/courses/${courseId}`, { as: secret })).status).toBe(200);
    expectInsufficient(await t.call('PATCH', `/api/courses/${courseId}`, { as: secret, body: { title: 'Renamed' } }), 'courses:write');
    expect((await t.call('GET', `/api/courses/${courseId}`, { as: instructor })).body.title).toBe('Biology');
  });

  it('course_ids: the key reaches only those courses; another answers as a course the caller may not read', async () => {
    const { key: secret } = await key(instructor, { scopes: ['courses:read', 'grades:read'], course_ids: [courseId] });
    expect((await t.call('GET', `/api/courses/${courseId}`, { as: secret })).status).toBe(200);
    expectProblem(await t.call('GET', `/api/courses/${otherCourseId}`, { as: secret }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/gradebook/offerings/${otherCourseId}/grades`, { as: secret }), 404, 'not_found');
    expect((await t.call('GET', `/api/gradebook/offerings/${courseId}/grades`, { as: secret })).status).toBe(200);
  });

  it("never exceeds its creator: a demoted creator demotes the key at once", async () => {
    const admin = await t.newUser({ role: 'admin', name: 'Soon demoted' });
    const { key: secret } = await key(admin, { scopes: ['users:read', 'users:write'] });
    expect((await t.call('GET', '/api/users', { as: secret })).status).toBe(200);
    expect((await t.call('PATCH', `/api/users/${admin.user.id}`, { as: t.admin, body: { role: 'member' } })).status).toBe(200);
    expectProblem(await t.call('GET', '/api/users', { as: secret }), 403, 'forbidden');
  });

  it('a key made without scopes, as a key made before scopes existed (the migration gave them "*"), holds every scope', async () => {
    const made = await key(instructor, {});
    expect(made.scopes).toEqual(['*']);
    expect(made.course_ids).toBeNull();
    expect((await t.call('GET', `/api/courses/${courseId}`, { as: made.key })).status).toBe(200);
    expect((await t.call('PATCH', `/api/courses/${courseId}`, { as: made.key, body: { description: 'By a full key' } })).status).toBe(200);
    const legacy = await key(instructor, { scopes: ['grades:read'] });
    t.db.update(apiKeys).set({ scopes: ['*'] }).where(eq(apiKeys.id, legacy.id)).run();
    expect((await t.call('PATCH', `/api/users/${t.admin.user.id}`, { as: t.admin, body: { name: 'Admin' } })).status).toBe(200); // any write to a user re-reads cached keys
    expect((await t.call('GET', `/api/enrollments?course_id=${courseId}`, { as: legacy.key })).status).toBe(200);
  });

  it('every route of every area needs a declared scope (or none), so that no route escapes the check', () => {
    const open = new Set(['GET /api/health', 'GET /api/health/uptime', 'GET /api/system/features', 'POST /api/auth/token', 'POST /api/auth/refresh', 'POST /api/auth/logout', 'POST /api/auth/invitations/accept', 'POST /api/auth/password-reset', 'POST /api/auth/password-reset/confirm', 'GET /.well-known/jwks.json', 'GET /api/users/me', 'GET /api/users/me/permissions', 'GET /metrics']);
    const routes = t.app.routes.filter((r) => r.method !== 'ALL' && !r.path.includes('*') && !r.path.startsWith('/api/docs') && r.path !== '/api/openapi.json' && !r.path.startsWith('/sso/'));
    expect(routes.length).toBeGreaterThan(100);
    const wrong: string[] = [];
    for (const r of routes) {
      const path = r.path.replace(/:([^/]+)/g, '{$1}');
      const need = scopeNeeded(t.deps.scopes, r.method, path);
      const ok = open.has(`${r.method} ${path}`) ? need === null : typeof need === 'string' && /^[a-z_]+:(read|write)$/.test(need);
      if (!ok) wrong.push(`${r.method} ${path}: ${String(need)}`);
    }
    expect(wrong).toEqual([]);
  });
});
