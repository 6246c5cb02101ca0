// Competencies through the HTTP API: frameworks and competencies as a tree (cycles, parents in
// another framework, codes, cascade), ranked search, alignments to an activity, a module and an
// assignment, mastery following grades and completions (with due dates and the roll-up to parents),
// the learner, course and per-framework views, CASE import (a realistic package), re-import and a
// malformed package rolled back, export round trip, and the spec path's 401 and 404.
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competencies, competencyAlignments, competencyFrameworks } from '../db/schema';
import { MISSING_ID, expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/case-math-grades-3-5.json', import.meta.url), 'utf8'));
const clone = () => JSON.parse(JSON.stringify(fixture));

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await makeTestApp();
  admin = t.admin;
});
afterAll(() => t?.close());

async function ok<T = any>(method: string, path: string, as: TestUser, body?: unknown, status = 200): Promise<T> {
  const res = await t.call(method, path, { as, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
  return res.body as T;
}

async function newFramework(title = 'Framework') {
  return ok('POST', '/api/competencies/frameworks', admin, { title }, 201);
}

async function newCompetency(frameworkId: string, body: Record<string, unknown>) {
  return ok('POST', `/api/competencies/frameworks/${frameworkId}/competencies`, admin, body, 201);
}

interface Course {
  id: string;
  instructor: TestUser;
  students: TestUser[];
}

async function newCourse(students = 2): Promise<Course> {
  const instructor = await t.newUser();
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
  const list: TestUser[] = [];
  for (let i = 0; i < students; i++) {
    const s = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: s.user.id, role: 'student' });
    list.push(s);
  }
  return { id: course.id, instructor, students: list };
}

const newModule = async (course: Course, title = 'Week') => (await ok('POST', `/api/courses/${course.id}/modules`, course.instructor, { title }, 201)).id as string;
const newActivity = async (course: Course, moduleId: string, body: Record<string, unknown> = {}) =>
  (await ok('POST', `/api/modules/${moduleId}/activities`, course.instructor, { title: 'Activity', type: 'reading', ...body }, 201)).id as string;
const newAssignment = async (course: Course, max = 10) =>
  (await ok('POST', `/api/gradebook/offerings/${course.id}/assignments`, course.instructor, { label: 'Quiz', grade_metadata: { score_maximum: max } }, 201)).id as string;
const grade = (course: Course, assignmentId: string, student: TestUser, score: number) =>
  t.call('PUT', `/api/gradebook/assignments/${assignmentId}/grades/${student.user.id}`, { as: course.instructor, body: { score } });
const complete = async (activityId: string, student: TestUser) => ok('POST', `/api/activities/${activityId}/complete`, student);
const align = (competencyId: string, as: TestUser, body: Record<string, unknown>) => t.call('POST', `/api/competencies/${competencyId}/alignments`, { as, body });

const byCode = (items: any[]) => Object.fromEntries(items.map((i) => [i.code, i]));

describe('frameworks and competencies', () => {
  it('creates, reads, updates a framework; a tree with parents, the flat list, the nested tree, get, update', async () => {
    const f = await newFramework('Digital skills');
    expect(f).toMatchObject({ title: 'Digital skills', competency_count: 0, case_identifier: null });
    const root = await newCompetency(f.id, { code: 'DS', title: 'Digital skills' });
    expect(root).toMatchObject({ parent_id: null, mastery_threshold: 0.8, framework_id: f.id });
    const a = await newCompetency(f.id, { code: 'DS.1', title: 'Information literacy', parent_id: root.id, mastery_threshold: 0.6 });
    const a1 = await newCompetency(f.id, { code: 'DS.1.1', title: 'Searching', parent_id: a.id });
    await newCompetency(f.id, { code: 'DS.2', title: 'Communication', parent_id: root.id });

    const flat = await ok('GET', `/api/competencies/frameworks/${f.id}/competencies`, admin);
    expect(flat.data.map((c: any) => c.code)).toEqual(['DS', 'DS.1', 'DS.1.1', 'DS.2']);
    expect(flat.pagination.total).toBe(4);

    const member = await t.newUser();
    const tree = await ok('GET', `/api/competencies/frameworks/${f.id}/tree`, member);
    expect(tree.framework.competency_count).toBe(4);
    expect(tree.competencies).toHaveLength(1);
    expect(tree.competencies[0].code).toBe('DS');
    expect(tree.competencies[0].children.map((c: any) => c.code)).toEqual(['DS.1', 'DS.2']);
    expect(tree.competencies[0].children[0].children[0]).toMatchObject({ code: 'DS.1.1', children: [] });

    expect(await ok('GET', `/api/competencies/${a1.id}`, member)).toMatchObject({ code: 'DS.1.1', parent_id: a.id });
    const patched = await ok('PATCH', `/api/competencies/${a1.id}`, admin, { title: 'Searching the web', mastery_threshold: 0.5, parent_id: root.id });
    expect(patched).toMatchObject({ title: 'Searching the web', mastery_threshold: 0.5, parent_id: root.id });
    expect((await ok('PATCH', `/api/competencies/frameworks/${f.id}`, admin, { description: 'For everyone' })).description).toBe('For everyone');
    expect((await ok('GET', '/api/competencies/frameworks', member)).data.some((x: any) => x.id === f.id)).toBe(true);
  });

  it('refuses a cycle, a parent in another framework (422), a repeated code (409), a threshold out of 0..1, and members writing (403)', async () => {
    const f = await newFramework('Cycles');
    const other = await newFramework('Other');
    const a = await newCompetency(f.id, { code: 'A', title: 'A' });
    const b = await newCompetency(f.id, { code: 'B', title: 'B', parent_id: a.id });
    const c = await newCompetency(f.id, { code: 'C', title: 'C', parent_id: b.id });
    const foreign = await newCompetency(other.id, { code: 'X', title: 'X' });

    expectProblem(await t.call('PATCH', `/api/competencies/${a.id}`, { as: admin, body: { parent_id: c.id } }), 422, 'validation_failed');
    expectProblem(await t.call('PATCH', `/api/competencies/${a.id}`, { as: admin, body: { parent_id: a.id } }), 422, 'validation_failed');
    expectProblem(await t.call('PATCH', `/api/competencies/${b.id}`, { as: admin, body: { parent_id: foreign.id } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/competencies/frameworks/${f.id}/competencies`, { as: admin, body: { code: 'D', title: 'D', parent_id: foreign.id } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/competencies/frameworks/${f.id}/competencies`, { as: admin, body: { code: 'D', title: 'D', parent_id: MISSING_ID } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/competencies/frameworks/${f.id}/competencies`, { as: admin, body: { code: 'A', title: 'again' } }), 409, 'conflict');
    expectProblem(await t.call('PATCH', `/api/competencies/${c.id}`, { as: admin, body: { code: 'B' } }), 409, 'conflict');
    // The same code in another framework is fine.
    await newCompetency(other.id, { code: 'A', title: 'A elsewhere' });
    for (const mastery_threshold of [-0.1, 1.5]) {
      const res = await t.call('POST', `/api/competencies/frameworks/${f.id}/competencies`, { as: admin, body: { code: 'T', title: 'T', mastery_threshold } });
      expectProblem(res, 400, 'validation_failed');
    }
    const member = await t.newUser();
    expectProblem(await t.call('POST', `/api/competencies/frameworks/${f.id}/competencies`, { as: member, body: { code: 'M', title: 'M' } }), 403, 'forbidden');
    expectProblem(await t.call('POST', '/api/competencies/frameworks', { as: member, body: { title: 'Mine' } }), 403, 'forbidden');
    expect((await ok('GET', `/api/competencies/${c.id}`, admin)).parent_id).toBe(b.id);
  });

  it('deletes: a competency with children or alignments is 409 unless cascade=true, which takes the subtree and its alignments; a framework likewise', async () => {
    const course = await newCourse(0);
    const moduleId = await newModule(course);
    const f = await newFramework('Deletion');
    const a = await newCompetency(f.id, { code: 'A', title: 'A' });
    const b = await newCompetency(f.id, { code: 'A.1', title: 'A.1', parent_id: a.id });
    const leaf = await newCompetency(f.id, { code: 'L', title: 'Leaf' });
    expect((await align(b.id, course.instructor, { target_type: 'module', target_id: moduleId })).status).toBe(201);
    expect((await align(leaf.id, course.instructor, { target_type: 'module', target_id: moduleId })).status).toBe(201);

    expectProblem(await t.call('DELETE', `/api/competencies/${a.id}`, { as: admin }), 409, 'conflict');
    expectProblem(await t.call('DELETE', `/api/competencies/${leaf.id}`, { as: admin }), 409, 'conflict');
    expect((await t.call('DELETE', `/api/competencies/${a.id}?cascade=true`, { as: admin })).status).toBe(204);
    expect((await t.call('GET', `/api/competencies/${b.id}`, { as: admin })).status).toBe(404);
    expect(t.db.select().from(competencyAlignments).where(eq(competencyAlignments.competencyId, b.id)).all()).toEqual([]);

    expectProblem(await t.call('DELETE', `/api/competencies/frameworks/${f.id}`, { as: admin }), 409, 'conflict');
    expect((await t.call('DELETE', `/api/competencies/frameworks/${f.id}?cascade=true`, { as: admin })).status).toBe(204);
    expect((await t.call('GET', `/api/competencies/${leaf.id}`, { as: admin })).status).toBe(404);
    expect(t.db.select().from(competencyAlignments).where(eq(competencyAlignments.competencyId, leaf.id)).all()).toEqual([]);
    const empty = await newFramework('Empty');
    expect((await t.call('DELETE', `/api/competencies/frameworks/${empty.id}`, { as: admin })).status).toBe(204);
  });

  it('searches by code or title: exact code, code prefix, title prefix, then substring; tenant-scoped, paginated', async () => {
    const f = await newFramework('Search');
    await newCompetency(f.id, { code: 'ALG', title: 'Geometry of shapes' });
    await newCompetency(f.id, { code: 'ALG.2', title: 'Linear equations' });
    await newCompetency(f.id, { code: 'GEO', title: 'Algebra basics' });
    await newCompetency(f.id, { code: 'NUM', title: 'Numbers in ALGebraic form' });
    await newCompetency(f.id, { code: 'X_1', title: '100% literal' });
    const other = await t.newTenant('search-other');
    const otherFramework = await ok('POST', '/api/competencies/frameworks', other.admin, { title: 'Other' }, 201);
    await ok('POST', `/api/competencies/frameworks/${otherFramework.id}/competencies`, other.admin, { code: 'ALG', title: 'Other tenant' }, 201);

    const member = await t.newUser();
    const res = await ok('GET', `/api/competencies/search?q=alg&framework_id=${f.id}`, member);
    expect(res.data.map((c: any) => [c.code, c.rank])).toEqual([
      ['ALG', 0],
      ['ALG.2', 1],
      ['GEO', 2],
      ['NUM', 3],
    ]);
    const all = await ok('GET', '/api/competencies/search?q=alg', member);
    expect(all.data.every((c: any) => c.title !== 'Other tenant')).toBe(true);
    const page = await ok('GET', `/api/competencies/search?q=alg&framework_id=${f.id}&per_page=2&page=2`, member);
    expect(page.data.map((c: any) => c.code)).toEqual(['GEO', 'NUM']);
    expect(page.pagination).toMatchObject({ total: 4, total_pages: 2 });
    // Wildcards are literal.
    expect((await ok('GET', `/api/competencies/search?q=${encodeURIComponent('_')}&framework_id=${f.id}`, member)).data.map((c: any) => c.code)).toEqual(['X_1']);
    expect((await ok('GET', `/api/competencies/search?q=${encodeURIComponent('%')}&framework_id=${f.id}`, member)).data.map((c: any) => c.code)).toEqual(['X_1']);
    expectProblem(await t.call('GET', '/api/competencies/search?q=%20', { as: member }), 400, 'validation_failed');
  });
});

describe('alignments and mastery', () => {
  it('mastery follows grades and completions, rolls up to the parent, and shows in every view', async () => {
    const course = await newCourse(2);
    const [ann, bob] = course.students as [TestUser, TestUser];
    const moduleId = await newModule(course);
    const reading = await newActivity(course, moduleId, { title: 'Reading' });
    const quiz = await newAssignment(course, 20);

    const f = await newFramework('Mastery');
    const parent = await newCompetency(f.id, { code: 'P', title: 'Parent' });
    const c1 = await newCompetency(f.id, { code: 'P.1', title: 'Child one', parent_id: parent.id });
    const c2 = await newCompetency(f.id, { code: 'P.2', title: 'Child two', parent_id: parent.id, mastery_threshold: 0.5 });
    await newCompetency(f.id, { code: 'Q', title: 'Not aligned' });

    const a1 = await align(c1.id, course.instructor, { target_type: 'activity', target_id: reading });
    expect(a1.status, a1.text).toBe(201);
    expect(a1.body).toMatchObject({ competency_id: c1.id, course_id: course.id, target_type: 'activity', target_id: reading, target_title: 'Reading', weight: 1 });
    expect(a1.headers.get('location')).toBe(`/api/competencies/${c1.id}/alignments/${a1.body.id}`);
    expect((await align(c1.id, course.instructor, { target_type: 'assignment', target_id: quiz, weight: 3 })).status).toBe(201);
    expect((await align(c2.id, course.instructor, { target_type: 'assignment', target_id: quiz })).status).toBe(201);
    expectProblem(await align(c1.id, course.instructor, { target_type: 'activity', target_id: reading }), 409, 'conflict');
    expectProblem(await align(c1.id, course.instructor, { target_type: 'activity', target_id: quiz }), 422, 'validation_failed');
    expectProblem(await align(c1.id, course.instructor, { target_type: 'module', target_id: MISSING_ID }), 422, 'validation_failed');
    expectProblem(await align(c1.id, ann, { target_type: 'module', target_id: moduleId }), 403, 'forbidden');

    const listed = await ok('GET', `/api/competencies/${c1.id}/alignments`, course.instructor);
    expect(listed.data.map((a: any) => [a.target_type, a.weight])).toEqual([
      ['activity', 1],
      ['assignment', 3],
    ]);

    const mastery = async () => byCode((await ok('GET', `/api/courses/${course.id}/competency-mastery`, course.instructor)).data);
    const progressOf = async (who: TestUser) => byCode((await ok('GET', `/api/courses/${course.id}/competencies/progress`, who)).data);

    // Nothing yet: every aligned competency and its parent, nobody started; Q is not aligned here.
    let m = await mastery();
    expect(Object.keys(m)).toEqual(['P', 'P.1', 'P.2']);
    expect(m['P.1']).toMatchObject({ learners: 2, mastered: 0, in_progress: 0, not_started: 2, percent_mastered: 0, mean_score: null, alignment_count: 2 });
    expect((await progressOf(ann))['P.1']).toMatchObject({ status: 'not_started', score: null, mastered: false, evidence_count: 0 });

    // Ann completes the reading: P.1 = 1 (only evidence) → mastered; P rolls up P.1 only.
    await complete(reading, ann);
    let p = await progressOf(ann);
    expect(p['P.1']).toMatchObject({ score: 1, status: 'mastered', evidence_count: 1 });
    expect(p['P.2']).toMatchObject({ score: null, status: 'not_started' });
    expect(p['P']).toMatchObject({ score: 1, status: 'mastered', evidence_count: 1 });

    // A grade of 10/20: P.1 = (1·1 + 3·0.5)/4 = 0.625 (in progress), P.2 = 0.5 (mastered at its 0.5), P = (0.625 + 0.5)/2.
    expect((await grade(course, quiz, ann, 10)).status).toBe(201);
    p = await progressOf(ann);
    expect(p['P.1']).toMatchObject({ score: 0.625, status: 'in_progress', evidence_count: 2 });
    expect(p['P.2']).toMatchObject({ score: 0.5, status: 'mastered' });
    expect(p['P']).toMatchObject({ score: 0.5625, status: 'in_progress', evidence_count: 2 });

    // The grade changes: it shows at once.
    expect((await grade(course, quiz, ann, 20)).status).toBe(200);
    p = await progressOf(ann);
    expect(p['P.1'].score).toBe(1);
    expect(p['P'].status).toBe('mastered');

    // Bob: graded low only.
    await grade(course, quiz, bob, 4);
    m = await mastery();
    expect(m['P.1']).toMatchObject({ mastered: 1, in_progress: 1, not_started: 0, percent_mastered: 50 });
    expect(m['P.2']).toMatchObject({ mastered: 1, in_progress: 1, mean_score: 0.6 });

    // The instructor reads Ann's progress with user_id; Bob may not.
    const forAnn = byCode((await ok('GET', `/api/courses/${course.id}/competencies/progress?user_id=${ann.user.id}`, course.instructor)).data);
    expect(forAnn['P.1'].score).toBe(1);
    expectProblem(await t.call('GET', `/api/courses/${course.id}/competencies/progress?user_id=${ann.user.id}`, { as: bob }), 403, 'forbidden');
    expectProblem(await t.call('GET', `/api/courses/${course.id}/competency-mastery`, { as: bob }), 403, 'forbidden');
    expectProblem(await t.call('GET', `/api/courses/${course.id}/competencies/progress?user_id=${MISSING_ID}`, { as: course.instructor }), 404, 'not_found');
    // Only a student of the course is a learner there: a TA of it is not found.
    const ta = await t.newUser({ name: 'Course TA' });
    expect((await t.call('POST', `/api/enrollments/course/${course.id}/enroll`, { as: course.instructor, body: { user_id: ta.user.id, role: 'ta' } })).status).toBe(201);
    expectProblem(await t.call('GET', `/api/courses/${course.id}/competencies/progress?user_id=${ta.user.id}`, { as: course.instructor }), 404, 'not_found');

    // The learner's own views: every competency of the tenant, or one framework, at both paths.
    for (const path of ['/competencies/progress', '/api/competencies/progress']) {
      const own = await ok('GET', `${path}?framework_id=${f.id}`, ann);
      expect(own.data.map((x: any) => [x.code, x.status])).toEqual([
        ['P', 'mastered'],
        ['P.1', 'mastered'],
        ['P.2', 'mastered'],
        ['Q', 'not_started'],
      ]);
      expect((await ok('GET', `${path}?framework_id=${f.id}&status=not_started`, ann)).data.map((x: any) => x.code)).toEqual(['Q']);
    }
    const summary = await ok('GET', '/api/competencies/mastery-summary?per_page=100', bob);
    expect(summary.data.find((s: any) => s.framework_id === f.id)).toMatchObject({ total: 4, mastered: 0, in_progress: 3, not_started: 1, title: 'Mastery' });

    // Removing the alignment takes its evidence away.
    const activityAlignment = listed.data[0].id;
    expectProblem(await t.call('DELETE', `/api/competencies/${c1.id}/alignments/${activityAlignment}`, { as: ann }), 403, 'forbidden');
    expect((await t.call('DELETE', `/api/competencies/${c1.id}/alignments/${activityAlignment}`, { as: course.instructor })).status).toBe(204);
    expectProblem(await t.call('DELETE', `/api/competencies/${c1.id}/alignments/${activityAlignment}`, { as: course.instructor }), 404, 'not_found');
    expect((await progressOf(ann))['P.1']).toMatchObject({ evidence_count: 1, alignment_count: 1 });
  });

  it('an activity or a module past its due date uncompleted counts 0; a module counts 1 once its required activities are completed', async () => {
    const course = await newCourse(1);
    const [ann] = course.students as [TestUser];
    const soon = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const week = await newModule(course, 'Week 1');
    const required = await newActivity(course, week, { title: 'Required', due_at: soon });
    await newActivity(course, week, { title: 'Optional', required: false });
    const late = await newActivity(course, week, { title: 'Late', due_at: soon, required: false });
    const f = await newFramework('Due dates');
    const modC = await newCompetency(f.id, { code: 'MOD', title: 'Module' });
    const lateC = await newCompetency(f.id, { code: 'LATE', title: 'Late activity' });
    expect((await align(modC.id, course.instructor, { target_type: 'module', target_id: week })).status).toBe(201);
    expect((await align(lateC.id, course.instructor, { target_type: 'activity', target_id: late })).status).toBe(201);
    const progress = async () => byCode((await ok('GET', `/api/courses/${course.id}/competencies/progress`, ann)).data);

    expect(await progress()).toMatchObject({ MOD: { status: 'not_started' }, LATE: { status: 'not_started' } });
    t.clock.advance(2 * 3_600_000);
    expect(await progress()).toMatchObject({ MOD: { status: 'in_progress', score: 0 }, LATE: { status: 'in_progress', score: 0 } });
    await complete(required, ann);
    expect(await progress()).toMatchObject({ MOD: { status: 'mastered', score: 1 }, LATE: { score: 0 } });
    await complete(late, ann);
    expect((await progress()).LATE).toMatchObject({ status: 'mastered', score: 1 });
  });

  it('deleting the aligned activity, module (with its activities) or assignment removes its alignments', async () => {
    const course = await newCourse(0);
    const week = await newModule(course);
    const inWeek = await newActivity(course, week);
    const other = await newActivity(course, await newModule(course, 'Week 2'));
    const quiz = await newAssignment(course);
    const f = await newFramework('Cleanup');
    const c = await newCompetency(f.id, { code: 'C', title: 'C' });
    for (const [target_type, target_id] of [['module', week], ['activity', inWeek], ['activity', other], ['assignment', quiz]]) {
      expect((await align(c.id, course.instructor, { target_type, target_id })).status).toBe(201);
    }
    expect((await ok('GET', `/api/competencies/${c.id}/alignments`, admin)).pagination.total).toBe(4);
    expect((await t.call('DELETE', `/api/activities/${other}`, { as: course.instructor })).status).toBe(204);
    expect((await ok('GET', `/api/competencies/${c.id}/alignments`, admin)).pagination.total).toBe(3);
    expect((await t.call('DELETE', `/api/modules/${week}`, { as: course.instructor })).status).toBe(204);
    expect((await ok('GET', `/api/competencies/${c.id}/alignments`, admin)).pagination.total).toBe(1);
    expect((await t.call('DELETE', `/api/gradebook/assignments/${quiz}`, { as: course.instructor })).status).toBe(204);
    expect((await ok('GET', `/api/competencies/${c.id}/alignments`, admin)).pagination.total).toBe(0);
  });
});

describe('CASE import and export', () => {
  it('imports a published-style package (63 items over 3 levels), keeps CASE identifiers and codes, and builds the tree', async () => {
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: fixture });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ created: 63, updated: 0, not_in_package: 0 });
    const f = res.body.framework;
    expect(f).toMatchObject({ title: fixture.CFDocument.title, creator: fixture.CFDocument.creator, version: '2024', case_identifier: fixture.CFDocument.identifier, competency_count: 63 });

    const tree = await ok('GET', `/api/competencies/frameworks/${f.id}/tree`, admin);
    expect(tree.competencies.map((c: any) => c.code)).toEqual(['3', '4', '5']);
    const grade3 = tree.competencies[0];
    expect(grade3.children.map((c: any) => c.code)).toEqual(['3.MD', '3.NBT', '3.NF', '3.OA']);
    expect(grade3.children[3].children.map((c: any) => c.code)).toEqual(['3.OA.A.1', '3.OA.B.2', '3.OA.C.3', '3.OA.D.4']);
    const leaf = grade3.children[3].children[0];
    const item = fixture.CFItems.find((i: any) => i.humanCodingScheme === '3.OA.A.1');
    expect(leaf).toMatchObject({ case_identifier: item.identifier, title: item.fullStatement, item_type: 'Standard' });
    const hit = await ok('GET', '/api/competencies/search?q=3.oa.a.1', admin);
    expect(hit.data[0]).toMatchObject({ code: '3.OA.A.1', rank: 0 });
  });

  it('a re-import updates in place by CASE identifier (one item changed, one moved), keeping ids and alignments', async () => {
    const first = await ok('POST', '/api/competencies/frameworks/import', admin, fixture);
    const f = first.framework;
    const before = await ok('GET', `/api/competencies/frameworks/${f.id}/competencies?per_page=100`, admin);
    const target = byCode(before.data)['4.NF.C.3'];
    const course = await newCourse(0);
    const week = await newModule(course);
    expect((await align(target.id, course.instructor, { target_type: 'module', target_id: week })).status).toBe(201);

    const changed = clone();
    const item = changed.CFItems.find((i: any) => i.humanCodingScheme === '4.NF.C.3');
    item.fullStatement = 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b).';
    item.humanCodingScheme = '4.NF.C.3a';
    // And one item moves to another domain.
    const moved = changed.CFItems.find((i: any) => i.humanCodingScheme === '5.MD.D.4');
    const newDomain = changed.CFItems.find((i: any) => i.humanCodingScheme === '5.NF');
    changed.CFAssociations.find((a: any) => a.originNodeURI.identifier === moved.identifier).destinationNodeURI = { identifier: newDomain.identifier, uri: newDomain.uri, title: 'NF' };
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: changed });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ created: 0, updated: 2, not_in_package: 0 });
    expect(res.body.framework.id).toBe(f.id);
    const after = await ok('GET', `/api/competencies/${target.id}`, admin);
    expect(after).toMatchObject({ code: '4.NF.C.3a', title: item.fullStatement, parent_id: target.parent_id });
    expect((await ok('GET', `/api/competencies/${byCode(before.data)['5.MD.D.4'].id}`, admin)).parent_id).toBe(byCode(before.data)['5.NF'].id);
    expect((await ok('GET', `/api/competencies/frameworks/${f.id}`, admin)).competency_count).toBe(63);
    expect((await ok('GET', `/api/competencies/${target.id}/alignments`, admin)).pagination.total).toBe(1);
    expect(t.db.select().from(competencyFrameworks).where(eq(competencyFrameworks.caseIdentifier, fixture.CFDocument.identifier)).all()).toHaveLength(1);
  });

  it('a re-import writes only what changed (two items swap codes, one moves, one is retitled, one is new); one that fails after its writes began changes nothing', async () => {
    const base = JSON.parse(JSON.stringify(fixture).replaceAll(fixture.CFDocument.identifier, 'a-document-of-edges'));
    const f = (await ok('POST', '/api/competencies/frameworks/import', admin, base, 201)).framework;
    const list = async (): Promise<any[]> => (await ok('GET', `/api/competencies/frameworks/${f.id}/competencies?per_page=100`, admin)).data;
    const before = byCode(await list());
    t.clock.advance(60_000);
    const now = t.clock.now().toISOString();

    const pkg = JSON.parse(JSON.stringify(base));
    const item = (code: string) => pkg.CFItems.find((i: any) => i.humanCodingScheme === code);
    const parentLink = (p: any, identifier: string) => p.CFAssociations.find((a: any) => a.associationType === 'isChildOf' && a.originNodeURI.identifier === identifier);
    const [a, b] = [item('3.OA.A.1'), item('3.OA.B.2')];
    [a.humanCodingScheme, b.humanCodingScheme] = [b.humanCodingScheme, a.humanCodingScheme];
    const [moved, domain] = [item('5.MD.D.4'), item('5.NF')];
    parentLink(pkg, moved.identifier).destinationNodeURI = { identifier: domain.identifier, uri: domain.uri, title: 'NF' };
    item('4.NF.C.3').fullStatement = 'Retitled';
    pkg.CFItems.push({ identifier: 'edges-new-item', fullStatement: 'New', humanCodingScheme: '5.NF.NEW' });
    pkg.CFAssociations.push({ identifier: 'edges-new-link', associationType: 'isChildOf', originNodeURI: { identifier: 'edges-new-item' }, destinationNodeURI: { identifier: domain.identifier } });
    expect(await ok('POST', '/api/competencies/frameworks/import', admin, pkg)).toMatchObject({ created: 1, updated: 4, not_in_package: 0 });

    const after = await list();
    const changed = new Map([
      [before['3.OA.A.1'].id, { code: '3.OA.B.2' }],
      [before['3.OA.B.2'].id, { code: '3.OA.A.1' }],
      [before['5.MD.D.4'].id, { parent_id: before['5.NF'].id }],
      [before['4.NF.C.3'].id, { title: 'Retitled' }],
    ]);
    const was = new Map(Object.values(before).map((c: any) => [c.id, c]));
    expect(after).toHaveLength(64);
    for (const c of after) {
      if (c.code === '5.NF.NEW') expect(c).toMatchObject({ title: 'New', parent_id: before['5.NF'].id, created_at: now, updated_at: now });
      else if (changed.has(c.id)) expect(c, c.code).toEqual({ ...was.get(c.id), ...changed.get(c.id), updated_at: now });
      else expect(c, c.code).toEqual(was.get(c.id));
    }

    // Moved back, retitled, and a new item with a code authored here meanwhile: the insert fails
    // after the updates have run, and the transaction is rolled back whole.
    await newCompetency(f.id, { code: 'EDGES-LOCAL', title: 'Authored here' });
    const snapshot = await list();
    const failing = JSON.parse(JSON.stringify(pkg));
    parentLink(failing, moved.identifier).destinationNodeURI = parentLink(base, moved.identifier).destinationNodeURI;
    failing.CFItems.find((i: any) => i.humanCodingScheme === '3.NF').fullStatement = 'Must not stay';
    failing.CFItems.push({ identifier: 'edges-clashing-item', fullStatement: 'Clash', humanCodingScheme: 'EDGES-LOCAL' });
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: failing });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(/CFItems\[64\] \(identifier edges-clashing-item\).*EDGES-LOCAL/);
    expect(await list()).toEqual(snapshot);
  });

  it('a malformed package is 422 naming the offending item, and nothing is imported', async () => {
    const count = () => t.db.select().from(competencies).all().length;
    const frameworks = () => t.db.select().from(competencyFrameworks).all().length;
    const cases: [string, (p: any) => void, RegExp][] = [
      ['item without fullStatement', (p) => delete p.CFItems[40].fullStatement, /CFItems\[40\] \(identifier [0-9a-f-]+\)\.fullStatement: is required/],
      ['item without identifier', (p) => delete p.CFItems[5].identifier, /CFItems\[5\]\.identifier: is required/],
      ['repeated code', (p) => (p.CFItems[30].humanCodingScheme = p.CFItems[29].humanCodingScheme), /CFItems\[30\].*humanCodingScheme .* is already used by item/],
      ['association to an unknown item', (p) => (p.CFAssociations[10].destinationNodeURI.identifier = 'no-such-item'), /CFAssociations\[10\].*destinationNodeURI: names no-such-item/],
      ['a cycle', (p) => {
        const first = p.CFItems[0];
        const deep = p.CFItems[2];
        p.CFAssociations[0].destinationNodeURI = { identifier: deep.identifier, uri: deep.uri, title: 'x' };
        expect(p.CFAssociations[0].originNodeURI.identifier).toBe(first.identifier);
      }, /its own ancestor/],
      ['a second parent', (p) => p.CFAssociations.push({ ...p.CFAssociations[5], identifier: 'dup', destinationNodeURI: p.CFAssociations[6].originNodeURI }), /second parent/],
      ['an item that is not an object', (p) => (p.CFItems[12] = 'oops'), /CFItems\[12\]: must be an object/],
      ['control characters', (p) => (p.CFItems[7].fullStatement = 'bad\u0007'), /CFItems\[7\].*control characters/],
    ];
    // Each case twice: against the framework imported earlier, and as a package never seen.
    const renamed = JSON.parse(JSON.stringify(fixture).replaceAll(fixture.CFDocument.identifier, 'a-brand-new-document'));
    for (const [label, breakIt, detail] of cases) {
      for (const base of [clone(), JSON.parse(JSON.stringify(renamed))]) {
        const before = [count(), frameworks()];
        breakIt(base);
        const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: base });
        expectProblem(res, 422, 'validation_failed', label);
        expect(res.body.detail, label).toMatch(detail);
        expect([count(), frameworks()], `${label}: nothing imported`).toEqual(before);
      }
    }
    // A code taken by a competency authored in the imported framework: rolled back after writing had begun.
    const imported = (await ok('POST', '/api/competencies/frameworks/import', admin, fixture)).framework;
    await newCompetency(imported.id, { code: 'LOCAL', title: 'Authored here' });
    const clash = clone();
    clash.CFItems[50].humanCodingScheme = 'LOCAL';
    clash.CFItems[10].fullStatement = 'Changed, but must not stay changed';
    const snapshot = await ok('GET', `/api/competencies/frameworks/${imported.id}/competencies?per_page=100`, admin);
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: clash });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(/CFItems\[50\].*LOCAL/);
    expect(await ok('GET', `/api/competencies/frameworks/${imported.id}/competencies?per_page=100`, admin)).toEqual(snapshot);
    expectProblem(await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: { CFItems: [] } }), 400, 'validation_failed');
    const member = await t.newUser();
    expectProblem(await t.call('POST', '/api/competencies/frameworks/import', { as: member, body: fixture }), 403, 'forbidden');
  });

  it('exports the CASE shape, which imports into another tenant as the same tree', async () => {
    const f = (await ok('POST', '/api/competencies/frameworks/import', admin, fixture)).framework;
    await newCompetency(f.id, { code: 'EXTRA', title: 'Authored here', parent_id: (await ok('GET', `/api/competencies/search?q=5.MD&framework_id=${f.id}`, admin)).data[0].id });
    // Earlier tests imported the same package into this tenant: the framework holds what they added too.
    const held = (await ok('GET', `/api/competencies/frameworks/${f.id}`, admin)).competency_count;
    expect(held).toBeGreaterThanOrEqual(64);
    const pkg = await ok('GET', `/api/competencies/frameworks/${f.id}/case`, await t.newUser());
    expect(pkg.CFDocument).toMatchObject({ identifier: fixture.CFDocument.identifier, title: fixture.CFDocument.title, creator: fixture.CFDocument.creator, uri: fixture.CFDocument.uri });
    expect(pkg.CFItems).toHaveLength(held);
    const original = fixture.CFItems[20];
    expect(pkg.CFItems.find((i: any) => i.identifier === original.identifier)).toMatchObject({
      fullStatement: original.fullStatement,
      humanCodingScheme: original.humanCodingScheme,
      CFItemType: original.CFItemType,
      uri: original.uri,
    });
    // One isChildOf per competency (the tree), and the package's other associations as given.
    const tree = pkg.CFAssociations.filter((a: any) => a.associationType === 'isChildOf');
    expect(tree).toHaveLength(held);
    expect(new Set(tree.map((a: any) => a.originNodeURI.identifier)).size).toBe(held);
    const others = fixture.CFAssociations.filter((a: any) => a.associationType !== 'isChildOf');
    expect(pkg.CFAssociations.filter((a: any) => a.associationType !== 'isChildOf')).toEqual(others);

    const other = await t.newTenant('case-roundtrip');
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: other.admin, body: pkg });
    expect(res.status, res.text).toBe(201);
    expect(res.body.created).toBe(held);
    const shape = (tree: any[]): any[] => tree.map((n) => [n.code, shape(n.children)]);
    const mine = await ok('GET', `/api/competencies/frameworks/${f.id}/tree`, admin);
    const theirs = await ok('GET', `/api/competencies/frameworks/${res.body.framework.id}/tree`, other.admin);
    expect(shape(theirs.competencies)).toEqual(shape(mine.competencies));
    expectProblem(await t.call('GET', `/api/competencies/frameworks/${f.id}/case`, { as: other.admin }), 404, 'not_found');
  });
});

describe('the specification path', () => {
  it('GET /competencies/progress: 401 without a credential, 404 for a framework that is not there (or another tenant\'s), 200 otherwise', async () => {
    expectUnauthorized(await t.call('GET', '/competencies/progress'));
    expectUnauthorized(await t.call('GET', '/competencies/progress', { as: 'garbage' }));
    const member = await t.newUser();
    expectProblem(await t.call('GET', `/competencies/progress?framework_id=${MISSING_ID}`, { as: member }), 404, 'not_found');
    const other = await t.newTenant('spec-path');
    const theirs = await ok('POST', '/api/competencies/frameworks', other.admin, { title: 'Theirs' }, 201);
    expectProblem(await t.call('GET', `/competencies/progress?framework_id=${theirs.id}`, { as: member }), 404, 'not_found');
    const res = await ok('GET', '/competencies/progress?per_page=5', member);
    expect(res.pagination.per_page).toBe(5);
    expect(res.data.every((p: any) => p.status === 'not_started')).toBe(true);
  });

  it('features.competencies is true', async () => {
    expect((await ok('GET', '/api/system/features', admin)).features.competencies).toBe(true);
  });
});
