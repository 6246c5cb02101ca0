import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { courseModules, courseSections } from '../db/schema';
import { deleteModule, getModule } from '../src/courses/structure';
import type { ModuleCleanup } from '../src/context';
import { MISSING_ID, expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertEnrollment } from './helpers/courses';

describe('sections and modules', () => {
  let t: TestApp;
  let teacher: TestUser;
  let student: TestUser;
  let outsider: TestUser;
  let other: { tenantId: string; admin: TestUser };

  beforeAll(async () => {
    t = await makeTestApp();
    teacher = await t.newUser();
    student = await t.newUser();
    outsider = await t.newUser();
    other = await t.newTenant('structure-other');
  });
  afterAll(() => t.close());

  async function newCourse(): Promise<string> {
    const res = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Structure' } });
    expect(res.status).toBe(201);
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: res.body.id, userId: student.user.id });
    return res.body.id;
  }
  async function section(courseId: string, title: string, position?: number) {
    const res = await t.call('POST', `/api/courses/${courseId}/sections`, { as: teacher, body: { title, position } });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }
  async function module(courseId: string, title: string, extra: { section_id?: string; position?: number } = {}) {
    const res = await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title, ...extra } });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }
  const titles = (res: { body: { data: { title: string }[] } }) => res.body.data.map((m) => m.title);
  const positions = (res: { body: { data: { position: number }[] } }) => res.body.data.map((m) => m.position);

  describe('sections', () => {
    it('creates sections at the end or at a position, keeping positions dense', async () => {
      const courseId = await newCourse();
      const a = await section(courseId, 'A');
      expect(a).toMatchObject({ course_id: courseId, title: 'A', position: 0 });
      await section(courseId, 'C');
      const b = await section(courseId, 'B', 1);
      expect(b.position).toBe(1);
      await section(courseId, 'Start', 0);
      await section(courseId, 'End', 99);
      const list = await t.call('GET', `/api/courses/${courseId}/sections`, { as: student });
      expect(list.status).toBe(200);
      expect(titles(list)).toEqual(['Start', 'A', 'B', 'C', 'End']);
      expect(positions(list)).toEqual([0, 1, 2, 3, 4]);
      const one = await t.call('GET', `/api/sections/${b.id}`, { as: student });
      expect(one.body).toMatchObject({ id: b.id, position: 2 });
      expect((await t.call('GET', `/api/sections/${b.id}`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', `/api/sections/${b.id}`, { as: outsider })).status).toBe(404);
      expect((await t.call('GET', '/api/sections/nope', { as: student })).status).toBe(400);
      expect((await t.call('GET', `/api/sections/${b.id}/modules`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', `/api/sections/${b.id}`)).status).toBe(401);
    });

    it('forbids students (403), hides from other tenants and non-members of a draft (404), 400 on bad ids and bodies', async () => {
      const courseId = await newCourse();
      expect((await t.call('POST', `/api/courses/${courseId}/sections`, { as: student, body: { title: 'x' } })).status).toBe(403);
      expect((await t.call('POST', `/api/courses/${courseId}/sections`, { as: other.admin, body: { title: 'x' } })).status).toBe(404);
      expect((await t.call('GET', `/api/courses/${courseId}/sections`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', `/api/courses/${courseId}/sections`, { as: outsider })).status).toBe(404);
      expect((await t.call('GET', '/api/courses/bad/sections', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', `/api/sections/${MISSING_ID}/modules`, { as: teacher })).status).toBe(404);
      expect((await t.call('POST', `/api/courses/${courseId}/sections`, { as: teacher, body: { title: 'x', position: -1 } })).status).toBe(400);
      expect((await t.call('POST', `/api/courses/${courseId}/sections`, { as: teacher, body: {} })).status).toBe(400);
      expect((await t.call('GET', `/api/courses/${courseId}/sections`)).status).toBe(401);
    });
    it('answers 404 for creating a section in an unknown course, and 400 for a malformed section id', async () => {
      const before = t.db.select().from(courseSections).all();
      for (const as of [teacher, t.admin]) {
        const res = await t.call('POST', `/api/courses/${MISSING_ID}/sections`, { as, body: { title: 'Nowhere' } });
        expectProblem(res, 404, 'not_found');
      }
      expect(t.db.select().from(courseSections).all()).toEqual(before);
      const bad = await t.call('GET', '/api/sections/bad/modules', { as: teacher });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors[0].path).toBe('id');
    });

    it('answers 401 with WWW-Authenticate without a credential on structure routes, and changes nothing', async () => {
      const courseId = await newCourse();
      const s = await section(courseId, 'S');
      const m = await module(courseId, 'M', { section_id: s.id });
      const snapshot = () => ({
        sections: t.db.select().from(courseSections).where(eq(courseSections.courseId, courseId)).all(),
        modules: t.db.select().from(courseModules).where(eq(courseModules.courseId, courseId)).all(),
      });
      const before = snapshot();
      const attempts: [string, string, unknown?][] = [
        ['POST', `/api/courses/${courseId}/sections`, { title: 'Anonymous section' }],
        ['POST', `/api/courses/${courseId}/modules`, { title: 'Anonymous module' }],
        ['GET', `/api/sections/${s.id}/modules`],
        ['GET', `/api/modules/${m.id}`],
        ['PATCH', `/api/modules/${m.id}`, { title: 'Hijacked' }],
        ['DELETE', `/api/modules/${m.id}`],
      ];
      for (const [method, path, body] of attempts) {
        const res = await t.call(method, path, { body });
        expectUnauthorized(res, `${method} ${path}`);
      }
      expect(snapshot()).toEqual(before);
      expect(before.sections.map((x) => x.title)).toEqual(['S']);
      expect(before.modules.map((x) => x.title)).toEqual(['M']);
    });
  });

  describe('modules', () => {
    it('creates modules in the course and in sections, lists them in course order and per section', async () => {
      const courseId = await newCourse();
      const s1 = await section(courseId, 'S1');
      const s2 = await section(courseId, 'S2');
      await module(courseId, 'Welcome');
      const m = await module(courseId, 'S2 first', { section_id: s2.id });
      expect(m).toMatchObject({ course_id: courseId, section_id: s2.id, position: 0 });
      await module(courseId, 'S1 second', { section_id: s1.id });
      await module(courseId, 'S1 first', { section_id: s1.id, position: 0 });
      await module(courseId, 'Syllabus');

      const all = await t.call('GET', `/api/courses/${courseId}/modules`, { as: student });
      expect(all.status).toBe(200);
      expect(titles(all)).toEqual(['Welcome', 'Syllabus', 'S1 first', 'S1 second', 'S2 first']);
      const inS1 = await t.call('GET', `/api/sections/${s1.id}/modules`, { as: student });
      expect(titles(inS1)).toEqual(['S1 first', 'S1 second']);
      expect(positions(inS1)).toEqual([0, 1]);
      const page = await t.call('GET', `/api/courses/${courseId}/modules?per_page=2&page=2`, { as: student });
      expect(titles(page)).toEqual(['S1 first', 'S1 second']);
      expect(page.body.pagination.total).toBe(5);
      const one = await t.call('GET', `/api/modules/${m.id}`, { as: student });
      expect(one.body.title).toBe('S2 first');
      expect((await t.call('GET', `/api/modules/${m.id}`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', `/api/modules/${m.id}`, { as: outsider })).status).toBe(404);
      expect((await t.call('GET', '/api/modules/nope', { as: student })).status).toBe(400);
      expect((await t.call('GET', `/api/courses/${courseId}/modules`)).status).toBe(401);
    });

    it('gives distinct dense positions to concurrent creates', async () => {
      const courseId = await newCourse();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: `M${i}` } })),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
      expect(results.map((r) => r.body.position).sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
      const list = await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher });
      expect(positions(list)).toEqual([...Array(20).keys()]);
    });

    it('rejects a section of another course (422), and student or cross-tenant creates (403, 404)', async () => {
      const courseId = await newCourse();
      const elsewhere = await section(await newCourse(), 'Elsewhere');
      const res = await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: 'x', section_id: elsewhere.id } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe('section_id');
      expect((await t.call('POST', `/api/courses/${courseId}/modules`, { as: student, body: { title: 'x' } })).status).toBe(403);
      expect((await t.call('POST', `/api/courses/${courseId}/modules`, { as: other.admin, body: { title: 'x' } })).status).toBe(404);
      expect((await t.call('GET', `/api/courses/${courseId}/modules`, { as: other.admin })).status).toBe(404);
      expect((await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: 'x', section_id: 'nope' } })).status).toBe(400);
    });

    it('updates a module: rename, move within its scope, move to another section; scopes stay dense', async () => {
      const courseId = await newCourse();
      const s1 = await section(courseId, 'S1');
      const a = await module(courseId, 'A', { section_id: s1.id });
      await module(courseId, 'B', { section_id: s1.id });
      const c = await module(courseId, 'C', { section_id: s1.id });
      const x = await module(courseId, 'X');

      const renamed = await t.call('PATCH', `/api/modules/${a.id}`, { as: teacher, body: { title: 'A2', description: 'first' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ title: 'A2', description: 'first', position: 0 });

      expect((await t.call('PATCH', `/api/modules/${c.id}`, { as: teacher, body: { position: 0 } })).body.position).toBe(0);
      expect(titles(await t.call('GET', `/api/sections/${s1.id}/modules`, { as: teacher }))).toEqual(['C', 'A2', 'B']);
      expect((await t.call('PATCH', `/api/modules/${c.id}`, { as: teacher, body: { position: 50 } })).body.position).toBe(2);
      expect(titles(await t.call('GET', `/api/sections/${s1.id}/modules`, { as: teacher }))).toEqual(['A2', 'B', 'C']);

      const moved = await t.call('PATCH', `/api/modules/${a.id}`, { as: teacher, body: { section_id: null, position: 0 } });
      expect(moved.body).toMatchObject({ section_id: null, position: 0 });
      const inS1 = await t.call('GET', `/api/sections/${s1.id}/modules`, { as: teacher });
      expect(titles(inS1)).toEqual(['B', 'C']);
      expect(positions(inS1)).toEqual([0, 1]);
      const all = await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher });
      expect(titles(all)).toEqual(['A2', 'X', 'B', 'C']);
      expect(all.body.data[1]).toMatchObject({ id: x.id, position: 1 });

      expect((await t.call('PATCH', `/api/modules/${a.id}`, { as: student, body: { title: 'no' } })).status).toBe(403);
      expect((await t.call('PATCH', `/api/modules/${a.id}`, { as: other.admin, body: { title: 'no' } })).status).toBe(404);
      expect((await t.call('PATCH', `/api/modules/${a.id}`, { as: teacher, body: {} })).status).toBe(400);
      expect((await t.call('PATCH', '/api/modules/bad', { as: teacher, body: { title: 'x' } })).status).toBe(400);
      expect((await t.call('PATCH', `/api/modules/${MISSING_ID}`, { as: teacher, body: { title: 'x' } })).status).toBe(404);
    });

    it('deletes a module and closes the gap; only instructors may', async () => {
      const courseId = await newCourse();
      const mods = [];
      for (const title of ['A', 'B', 'C', 'D']) mods.push(await module(courseId, title));
      expect((await t.call('DELETE', `/api/modules/${mods[1].id}`, { as: student })).status).toBe(403);
      expect((await t.call('DELETE', `/api/modules/${mods[1].id}`, { as: other.admin })).status).toBe(404);
      const res = await t.call('DELETE', `/api/modules/${mods[1].id}`, { as: teacher });
      expect(res.status).toBe(204);
      const list = await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher });
      expect(titles(list)).toEqual(['A', 'C', 'D']);
      expect(positions(list)).toEqual([0, 1, 2]);
      expect((await t.call('DELETE', `/api/modules/${mods[1].id}`, { as: teacher })).status).toBe(404);
      expect((await t.call('GET', `/api/modules/${mods[1].id}`, { as: teacher })).status).toBe(404);
    });

    it('answers 404 for creating a module in an unknown course, and 400 for deleting a malformed module id', async () => {
      const before = t.db.select().from(courseModules).all();
      for (const as of [teacher, t.admin]) {
        const res = await t.call('POST', `/api/courses/${MISSING_ID}/modules`, { as, body: { title: 'Nowhere' } });
        expectProblem(res, 404, 'not_found');
      }
      const bad = await t.call('DELETE', '/api/modules/bad', { as: t.admin });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors[0].path).toBe('id');
      expect(t.db.select().from(courseModules).all()).toEqual(before);
    });

    it('runs the cleanups of Deps.moduleCleanups inside the deletion transaction: a failing one keeps the module', async () => {
      const courseId = await newCourse();
      const keep = await module(courseId, 'Keep');
      const gone = await module(courseId, 'Gone');
      const cleaned: string[] = [];
      const cleanup: ModuleCleanup = (tx, m) => {
        expect(tx.select().from(courseModules).where(eq(courseModules.id, m.id)).get()).toBeDefined();
        cleaned.push(m.id);
        if (m.id === keep.id) throw new Error('cleanup failed');
      };
      t.deps.moduleCleanups.push(cleanup);
      const unregister = () => t.deps.moduleCleanups.splice(t.deps.moduleCleanups.indexOf(cleanup), 1);
      try {
        expect(() => deleteModule(t.db, getModule(t.db, t.defaultTenantId, keep.id), t.deps.moduleCleanups)).toThrow('cleanup failed');
        expect((await t.call('DELETE', `/api/modules/${gone.id}`, { as: teacher })).status).toBe(204);
      } finally {
        unregister();
      }
      expect(cleaned).toEqual([keep.id, gone.id]);
      const list = await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher });
      expect(list.body.data.map((m: any) => [m.title, m.position])).toEqual([['Keep', 0]]);
    });

    it('hides the structure of a deleted course', async () => {
      const courseId = await newCourse();
      const s = await section(courseId, 'S');
      const m = await module(courseId, 'M', { section_id: s.id });
      expect((await t.call('DELETE', `/api/courses/${courseId}`, { as: teacher })).status).toBe(204);
      expect((await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher })).status).toBe(404);
      expect((await t.call('GET', `/api/sections/${s.id}/modules`, { as: teacher })).status).toBe(404);
      expect((await t.call('PATCH', `/api/modules/${m.id}`, { as: teacher, body: { title: 'x' } })).status).toBe(404);
    });
  });

  describe('reorder', () => {
    it('reorders the course-level modules and a section’s modules', async () => {
      const courseId = await newCourse();
      const s = await section(courseId, 'S');
      const [a, b, c] = [await module(courseId, 'A'), await module(courseId, 'B'), await module(courseId, 'C')];
      const [x, y] = [await module(courseId, 'X', { section_id: s.id }), await module(courseId, 'Y', { section_id: s.id })];

      const res = await t.call('PUT', `/api/courses/${courseId}/modules/order`, { as: teacher, body: { module_ids: [c.id, a.id, b.id] } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.section_id).toBeNull();
      expect(res.body.modules.map((m: any) => [m.title, m.position])).toEqual([['C', 0], ['A', 1], ['B', 2]]);

      const inSection = await t.call('PUT', `/api/courses/${courseId}/modules/order`, {
        as: teacher,
        body: { section_id: s.id, module_ids: [y.id, x.id] },
      });
      expect(inSection.status).toBe(200);
      const all = await t.call('GET', `/api/courses/${courseId}/modules`, { as: student });
      expect(titles(all)).toEqual(['C', 'A', 'B', 'Y', 'X']);
    });

    it('answers 422 naming what is missing, extra or repeated, and changes nothing', async () => {
      const courseId = await newCourse();
      const s = await section(courseId, 'S');
      const [a, b] = [await module(courseId, 'A'), await module(courseId, 'B')];
      const inS = await module(courseId, 'In S', { section_id: s.id });
      const order = (body: unknown) => t.call('PUT', `/api/courses/${courseId}/modules/order`, { as: teacher, body });

      const missing = await order({ module_ids: [b.id] });
      expect(missing.status).toBe(422);
      expect(missing.body.code).toBe('validation_failed');
      expect(missing.body.errors).toEqual([{ path: 'module_ids', message: `missing: ${a.id}` }]);

      const extra = await order({ module_ids: [b.id, a.id, inS.id] });
      expect(extra.status).toBe(422);
      expect(extra.body.detail).toContain(inS.id);
      expect(extra.body.errors[0].message).toBe(`not in this scope: ${inS.id}`);

      const unknown = await order({ module_ids: [b.id, a.id, '0192f6a4-0000-7000-8000-000000000000'] });
      expect(unknown.status).toBe(422);

      const repeated = await order({ module_ids: [b.id, a.id, a.id] });
      expect(repeated.status).toBe(422);
      expect(repeated.body.errors[0].message).toBe(`repeated: ${a.id}`);

      const wrongSection = await order({ section_id: s.id, module_ids: [a.id] });
      expect(wrongSection.status).toBe(422);
      const foreignSection = await order({ section_id: (await section(await newCourse(), 'F')).id, module_ids: [] });
      expect(foreignSection.status).toBe(422);
      expect(foreignSection.body.errors[0].path).toBe('section_id');

      expect(titles(await t.call('GET', `/api/courses/${courseId}/modules`, { as: teacher }))).toEqual(['A', 'B', 'In S']);
    });

    it('rejects malformed bodies (400), students (403) and other tenants (404)', async () => {
      const courseId = await newCourse();
      const a = await module(courseId, 'A');
      const order = (as: TestUser, body: unknown) => t.call('PUT', `/api/courses/${courseId}/modules/order`, { as, body });
      expect((await order(teacher, { module_ids: ['nope'] })).status).toBe(400);
      expect((await order(teacher, {})).status).toBe(400);
      expect((await order(student, { module_ids: [a.id] })).status).toBe(403);
      expect((await order(other.admin, { module_ids: [a.id] })).status).toBe(404);
      expect((await t.call('PUT', `/api/courses/${courseId}/modules/order`, { body: { module_ids: [a.id] } })).status).toBe(401);
    });
  });
});
