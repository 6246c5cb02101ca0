// Scopes against every area's routes through the security matrix (issue 37 item 8): the rows are
// generated from the app's own route table (src/areas.ts, as src/auth/scopes.ts builds it), so that
// no authenticated route is missed; then the course_ids rows: a key limited to another course than
// the fixture's finds nothing of it, by id (404) or in lists.
import { describe, expect, it } from 'vitest';
import { areas } from '../src/areas';
import { buildScopeTable, scopeNeeded } from '../src/auth/scopes';
import { courseIdsRows, newCourse, scopeRows, useCast, type ScopedRoute } from './helpers/security';
import type { TestUser } from './helpers/app';

/** Every authenticated route of every area (`security` set in its OpenAPI definition), with the scope it needs. */
function authedRoutes(): ScopedRoute[] {
  const table = buildScopeTable(areas);
  const routes = new Map<string, ScopedRoute>();
  for (const area of areas) {
    type Definition = { type: string; route?: { method: string; path: string; security?: Record<string, unknown>[]; request?: { body?: { content?: Record<string, unknown> } } } };
    const definitions = (area.router as unknown as { openAPIRegistry: { definitions: Definition[] } }).openAPIRegistry.definitions;
    for (const d of definitions) {
      // Routes a user's credential calls (bearer JWT or API key); not the LTI tools' service routes, whose tokens are no keys.
      if (d.type !== 'route' || !d.route || !d.route.security?.some((s) => 'bearerAuth' in s)) continue;
      const method = d.route.method.toUpperCase();
      const need = scopeNeeded(table, method, d.route.path);
      if (need === null || need === undefined) continue; // open to every credential (the caller's own identity)
      const multipart = d.route.request?.body?.content?.['multipart/form-data'] !== undefined;
      routes.set(`${method} ${d.route.path}`, { method, path: d.route.path, need, multipart });
    }
  }
  return [...routes.values()].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

const routes = authedRoutes();
const catalogue = buildScopeTable(areas).catalogue.map((s) => s.name);

describe('scope rows of every area', () => {
  const cast = useCast('scopes');

  it('covers every authenticated route of the app, each with a scope of the catalogue', () => {
    expect(routes.length).toBeGreaterThan(150);
    for (const r of routes) expect(catalogue, `${r.method} ${r.path}`).toContain(r.need);
    const areasCovered = new Set(routes.map((r) => r.need.split(':')[0]));
    for (const area of ['courses', 'enrollments', 'grades', 'documents', 'activities', 'compliance', 'analytics', 'users', 'webhooks', 'files', 'lti', 'imports', 'rosters', 'competencies', 'comments', 'dashboard', 'groups', 'templates', 'sso', 'api_keys', 'tenants', 'backup']) {
      expect(areasCovered, area).toContain(area);
    }
  });

  scopeRows(cast, routes, catalogue);
});

describe('course_ids rows', () => {
  const cast = useCast('course-ids');
  courseIdsRows(
    cast,
    async (side, c) => {
      const course = side.course;
      const doc = await c.t.call('POST', '/api/documents', { as: side.instructor, body: { title: 'Course notes', content: 'notes' } });
      expect(doc.status, doc.text).toBe(201);
      const linked = await c.t.call('POST', `/api/documents/${doc.body.id}/contexts`, { as: side.instructor, body: { context_type: 'course', context_id: course.id } });
      expect(linked.status, linked.text).toBe(201);
      const assignment = await c.t.call('POST', `/api/gradebook/offerings/${course.id}/assignments`, { as: side.instructor, body: { label: 'Quiz', grade_metadata: { score_maximum: 10 } } });
      expect(assignment.status, assignment.text).toBe(201);
      const module = await c.t.call('POST', `/api/courses/${course.id}/modules`, { as: side.instructor, body: { title: 'Week 1' } });
      expect(module.status, module.text).toBe(201);
      const activity = await c.t.call('POST', `/api/modules/${module.body.id}/activities`, { as: side.instructor, body: { title: 'Read chapter 1', type: 'reading' } });
      expect(activity.status, activity.text).toBe(201);
      return {
        courseId: course.id,
        documentId: doc.body.id as string,
        assignmentId: assignment.body.id as string,
        moduleId: module.body.id as string,
        activityId: activity.body.id as string,
      };
    },
    [
      { name: 'GET /api/courses/{id}', request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}` }), expect: 404 },
      { name: 'GET /api/courses', request: () => ({ method: 'GET', path: '/api/courses' }), expect: { list: (f) => [f.courseId] } },
      { name: 'GET /api/courses/{id}/modules', request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}/modules` }), expect: 404 },
      { name: 'GET /api/modules/{id}', request: (f) => ({ method: 'GET', path: `/api/modules/${f.moduleId}` }), expect: 404 },
      { name: 'GET /api/modules/{id}/activities', request: (f) => ({ method: 'GET', path: `/api/modules/${f.moduleId}/activities` }), expect: 404 },
      { name: 'GET /api/activities/{id}', request: (f) => ({ method: 'GET', path: `/api/activities/${f.activityId}` }), expect: 404 },
      { name: 'PATCH /api/activities/{id}', request: (f) => ({ method: 'PATCH', path: `/api/activities/${f.activityId}`, body: { title: 'Renamed' } }), expect: 404 },
      { name: 'GET /api/enrollments', request: () => ({ method: 'GET', path: '/api/enrollments' }), expect: { list: (f) => [f.courseId] } },
      { name: 'GET /api/enrollments?course_id', request: (f) => ({ method: 'GET', path: `/api/enrollments?course_id=${f.courseId}` }), expect: { list: (f) => [f.courseId] } },
      { name: 'GET /api/gradebook/offerings/{id}/assignments', request: (f) => ({ method: 'GET', path: `/api/gradebook/offerings/${f.courseId}/assignments` }), expect: 404 },
      { name: 'GET /api/gradebook/assignments/{id}', request: (f) => ({ method: 'GET', path: `/api/gradebook/assignments/${f.assignmentId}` }), expect: 404 },
      { name: 'GET /api/analytics/performance-summary?course_id', request: (f) => ({ method: 'GET', path: `/api/analytics/performance-summary?course_id=${f.courseId}` }), expect: 404 },
      { name: 'GET /api/compliance/courses/{id}/report', request: (f) => ({ method: 'GET', path: `/api/compliance/courses/${f.courseId}/report` }), expect: 404 },
      { name: 'GET /api/courses/{id}/sequencing/graph', request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}/sequencing/graph` }), expect: 404 },
      { name: 'GET /api/courses/{id}/files', request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}/files` }), expect: 404 },
      { name: 'GET /api/documents/{id}', request: (f) => ({ method: 'GET', path: `/api/documents/${f.documentId}` }), expect: 404 },
      { name: 'GET /api/documents/{id}/comments', request: (f) => ({ method: 'GET', path: `/api/documents/${f.documentId}/comments` }), expect: 404 },
      { name: 'GET /api/documents', request: () => ({ method: 'GET', path: '/api/documents' }), expect: { list: (f) => [f.documentId] } },
      { name: 'GET /api/documents/courses', request: () => ({ method: 'GET', path: '/api/documents/courses' }), expect: { list: (f) => [f.courseId] } },
      { name: 'GET /api/documents/contexts', request: () => ({ method: 'GET', path: '/api/documents/contexts' }), expect: { list: (f) => [f.courseId] } },
      { name: 'GET /api/courses/{id}/export', request: (f) => ({ method: 'GET', path: `/api/courses/${f.courseId}/export?format=imscc` }), expect: 404 },
    ],
  );

  it('a key limited to some courses creates no course (it would not reach it): 403', async () => {
    const c = cast();
    const other = newCourse(c.t, c.a, { title: 'Limited' });
    const key = await c.t.call('POST', '/api/api-keys', { as: c.a.instructor, body: { name: 'limited', course_ids: [other.id] } });
    expect(key.status, key.text).toBe(201);
    const res = await c.t.call('POST', '/api/courses', { as: key.body.key, body: { title: 'New course' } });
    expect(res.status, res.text).toBe(403);
  });
});

describe("course_ids on a learner's lists", () => {
  const cast = useCast('course-ids-learner');
  it('a student key limited to one course sees only its activities in /api/activities, the next-up list and the summary', async () => {
    const c = cast();
    const other = newCourse(c.t, c.a, { title: 'The other course' });
    const activityIn = async (courseId: string, title: string) => {
      const module = await c.t.call('POST', `/api/courses/${courseId}/modules`, { as: c.a.instructor, body: { title: `${title} module` } });
      expect(module.status, module.text).toBe(201);
      const activity = await c.t.call('POST', `/api/modules/${module.body.id}/activities`, { as: c.a.instructor, body: { title, type: 'reading' } });
      expect(activity.status, activity.text).toBe(201);
      return activity.body.id as string;
    };
    const here = await activityIn(c.a.course.id, 'Here');
    const there = await activityIn(other.id, 'There');
    const keyOf = async (courseIds: string[]) => {
      const res = await c.t.call('POST', '/api/api-keys', { as: c.a.student, body: { name: 'student key', course_ids: courseIds } });
      expect(res.status, res.text).toBe(201);
      return res.body.key as string;
    };
    const limited = await keyOf([other.id]);
    const whole = await c.t.call('GET', '/api/activities?per_page=100', { as: c.a.student });
    expect(whole.text).toContain(here);
    expect(whole.text).toContain(there);
    for (const path of ['/api/activities?per_page=100', '/api/dashboard/next-up', '/api/dashboard/summary']) {
      const res = await c.t.call('GET', path, { as: limited });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      expect(res.text, path).not.toContain(here);
      expect(res.text, path).not.toContain(c.a.course.id);
    }
    const listed = await c.t.call('GET', '/api/activities?per_page=100', { as: limited });
    expect(listed.text).toContain(there);
    const hidden = await c.t.call('GET', `/api/activities/${here}`, { as: limited });
    expect(hidden.status, hidden.text).toBe(404);
  });

  it("a student key limited to another course counts none of this course's evidence in the caller's competency progress", async () => {
    const c = cast();
    const other = newCourse(c.t, c.a, { title: 'Elsewhere' });
    const call = async (method: string, path: string, as: TestUser | string, body?: unknown) => {
      const res = await c.t.call(method, path, { as, body });
      expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
      return res.body;
    };
    const framework = await call('POST', '/api/competencies/frameworks', c.a.admin, { title: 'Key limits' });
    const competency = await call('POST', `/api/competencies/frameworks/${framework.id}/competencies`, c.a.admin, { code: 'K.1', title: 'Reads' });
    const module = await call('POST', `/api/courses/${c.a.course.id}/modules`, c.a.instructor, { title: 'Evidence' });
    const activity = await call('POST', `/api/modules/${module.id}/activities`, c.a.instructor, { title: 'Evidence reading', type: 'reading' });
    await call('POST', `/api/competencies/${competency.id}/alignments`, c.a.instructor, { target_type: 'activity', target_id: activity.id });
    await call('POST', `/api/activities/${activity.id}/complete`, c.a.student);
    const statusOf = async (as: TestUser | string) => {
      const page = await call('GET', `/api/competencies/progress?framework_id=${framework.id}`, as);
      return page.data.find((p: { competency_id: string; status: string }) => p.competency_id === competency.id)?.status;
    };
    expect(await statusOf(c.a.student)).toBe('mastered');
    const keyOf = async (courseIds: string[]) => (await call('POST', '/api/api-keys', c.a.student, { name: 'progress key', course_ids: courseIds })).key as string;
    expect(await statusOf(await keyOf([other.id]))).toBe('not_started');
    expect(await statusOf(await keyOf([c.a.course.id]))).toBe('mastered');
  });
});
