// Templates: placeholders checked against declared variables, rendering (escaping, defaults,
// unknown and missing variables), instantiation into documents, categories, who may manage them,
// and tenant isolation.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentTemplates } from '../db/schema';
import { MAX_SECTION_DEPTH } from '../src/templates/engine';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { contentOf } from './helpers/documents';

let t: TestApp;
let instructor: TestUser;
let member: TestUser;

beforeAll(async () => {
  t = await makeTestApp();
  instructor = await t.newUser({ name: 'Instructor' });
  member = await t.newUser({ name: 'Member' });
  const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
  insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: instructor.user.id, role: 'instructor' });
});
afterAll(() => t.close());

const LETTER = {
  name: 'Feedback letter',
  category: 'letters',
  description: 'Feedback to a student',
  body: '# Feedback for {{student}}\n\nCourse: {{course}}\n\n{{#passed}}Well done!{{/passed}}{{^passed}}Please resubmit.{{/passed}}\n\n{{! internal note }}Signed, {{teacher}}\n',
  variables: [
    { name: 'student', label: 'Student name', required: true },
    { name: 'course', required: true },
    { name: 'passed' },
    { name: 'teacher', default: 'The teaching team' },
  ],
};

async function newTemplate(as: TestUser, body: Record<string, unknown> = LETTER) {
  const res = await t.call('POST', '/api/templates', { as, body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('create, read, list, replace, delete', () => {
  it('admins and instructors create; members use them; the creator or an admin manages', async () => {
    const mine = await newTemplate(instructor);
    expect(mine).toMatchObject({
      name: 'Feedback letter',
      category: 'letters',
      created_by: instructor.user.id,
      variables: [
        { name: 'student', label: 'Student name', required: true, default: null },
        { name: 'course', label: null, required: true, default: null },
        { name: 'passed', label: null, required: false, default: null },
        { name: 'teacher', label: null, required: false, default: 'The teaching team' },
      ],
    });
    await newTemplate(t.admin, { ...LETTER, name: 'Admin letter' });
    expectProblem(await t.call('POST', '/api/templates', { as: member, body: LETTER }), 403, 'forbidden');

    expect((await t.call('GET', `/api/templates/${mine.id}`, { as: member })).body.body).toBe(LETTER.body);
    expectProblem(await t.call('PUT', `/api/templates/${mine.id}`, { as: member, body: LETTER }), 403, 'forbidden');
    expectProblem(await t.call('DELETE', `/api/templates/${mine.id}`, { as: member }), 403, 'forbidden');

    const replaced = await t.call('PUT', `/api/templates/${mine.id}`, { as: instructor, body: { ...LETTER, name: 'Renamed', category: null } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: 'Renamed', category: null, description: 'Feedback to a student' });
    expect((await t.call('PUT', `/api/templates/${mine.id}`, { as: t.admin, body: LETTER })).status).toBe(200);
    expect((await t.call('DELETE', `/api/templates/${mine.id}`, { as: t.admin })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/templates/${mine.id}`, { as: member }), 404, 'not_found');
  });

  it('lists by name with a category filter, and counts categories', async () => {
    const local = await makeTestApp();
    try {
      for (const [name, category] of [['B', 'letters'], ['A', 'letters'], ['C', 'rubrics'], ['D', null]] as const) {
        const res = await local.call('POST', '/api/templates', { as: local.admin, body: { name, category, body: 'Hi', variables: [] } });
        expect(res.status).toBe(201);
      }
      const all = await local.call('GET', '/api/templates', { as: local.admin });
      expect(all.body.data.map((x: any) => x.name)).toEqual(['A', 'B', 'C', 'D']);
      expect(all.body.pagination.total).toBe(4);
      const letters = await local.call('GET', '/api/templates?category=letters', { as: local.admin });
      expect(letters.body.data.map((x: any) => x.name)).toEqual(['A', 'B']);
      const cats = await local.call('GET', '/api/templates/categories', { as: local.admin });
      expect(cats.body.data).toEqual([
        { category: 'letters', count: 2 },
        { category: 'rubrics', count: 1 },
        { category: null, count: 1 },
      ]);
    } finally {
      await local.close();
    }
  });

  it('checks the body at create and update: undeclared placeholders, unescaped output, partials, syntax errors are 422', async () => {
    const cases: [string, string, RegExp][] = [
      ['undeclared', 'Hello {{nobody}}', /"nobody".*not a declared variable/],
      ['undeclared in a section', '{{#passed}}{{ghost}}{{/passed}}', /"ghost"/],
      ['undeclared section', '{{#ghost}}x{{/ghost}}', /"ghost"/],
      ['triple mustache', 'Hello {{{student}}}', /unescaped/],
      ['ampersand', 'Hello {{& student}}', /unescaped/],
      ['partial', 'Hello {{> other}}', /partials/],
      ['delimiters', '{{=<% %>=}} <% student %>', /delimiters/],
      ['implicit iterator', '{{.}}', /"\."/],
      ['dotted name', '{{student.name}}', /"student\.name"/],
      ['unclosed section', '{{#passed}} open', /syntax.*Unclosed section/],
      ['unclosed tag', 'Hello {{student', /syntax.*Unclosed tag/],
    ];
    for (const [label, body, message] of cases) {
      const res = await t.call('POST', '/api/templates', { as: t.admin, body: { ...LETTER, body } });
      expectProblem(res, 422, 'validation_failed', label);
      expect(res.body.detail, label).toMatch(message);
    }
    const dup = await t.call('POST', '/api/templates', { as: t.admin, body: { ...LETTER, variables: [...LETTER.variables, { name: 'student' }] } });
    expectProblem(dup, 422, 'validation_failed');
    const badName = await t.call('POST', '/api/templates', { as: t.admin, body: { ...LETTER, variables: [{ name: 'not-valid' }] } });
    expectProblem(badName, 400, 'validation_failed');
    const existing = await newTemplate(t.admin);
    const update = await t.call('PUT', `/api/templates/${existing.id}`, { as: t.admin, body: { ...LETTER, body: 'Hi {{{student}}}' } });
    expectProblem(update, 422, 'validation_failed');
    expect((await t.call('GET', `/api/templates/${existing.id}`, { as: t.admin })).body.body).toBe(LETTER.body);
  });
});

describe('nesting depth', () => {
  const nested = (depth: number) => `${'{{#passed}}'.repeat(depth)}deep${'{{/passed}}'.repeat(depth)}`;

  it(`takes sections nested ${MAX_SECTION_DEPTH} deep, and refuses deeper ones at create and update (422), 6,000 deep included`, async () => {
    const deepest = await newTemplate(t.admin, { ...LETTER, body: nested(MAX_SECTION_DEPTH) });
    const rendered = await t.call('POST', `/api/templates/${deepest.id}/render`, { as: t.admin, body: { variables: { student: 'A', course: 'B', passed: true } } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.content).toBe('deep');
    for (const depth of [MAX_SECTION_DEPTH + 1, 6_000]) {
      const res = await t.call('POST', '/api/templates', { as: t.admin, body: { ...LETTER, body: nested(depth) } });
      expectProblem(res, 422, 'validation_failed', `depth ${depth}`);
      expect(res.body.detail).toMatch(new RegExp(`nested more than ${MAX_SECTION_DEPTH} deep`));
      const update = await t.call('PUT', `/api/templates/${deepest.id}`, { as: t.admin, body: { ...LETTER, body: nested(depth) } });
      expectProblem(update, 422, 'validation_failed', `update to depth ${depth}`);
    }
    expect((await t.call('GET', `/api/templates/${deepest.id}`, { as: t.admin })).body.body).toBe(nested(MAX_SECTION_DEPTH));
  });

  it('a template stored deeper than the limit (before it existed) is read as it is, and rendering it is 422, not 500', async () => {
    const stored = await newTemplate(t.admin);
    t.db.update(documentTemplates).set({ body: nested(6_000) }).where(eq(documentTemplates.id, stored.id)).run();
    expect((await t.call('GET', `/api/templates/${stored.id}`, { as: t.admin })).body.body).toBe(nested(6_000));
    const variables = { student: 'A', course: 'B', passed: true };
    const rendered = await t.call('POST', `/api/templates/${stored.id}/render`, { as: t.admin, body: { variables } });
    expectProblem(rendered, 422, 'validation_failed');
    expect(rendered.body.detail).toMatch(/nested more than/);
    const made = await t.call('POST', `/api/templates/${stored.id}/instantiate`, { as: t.admin, body: { variables } });
    expectProblem(made, 422, 'validation_failed');
  });
});

describe('render', () => {
  let id: string;
  beforeAll(async () => {
    id = (await newTemplate(instructor)).id;
  });

  it('fills placeholders and sections, applies defaults, and escapes values in html', async () => {
    const res = await t.call('POST', `/api/templates/${id}/render`, {
      as: member,
      body: { variables: { student: '<script>alert("x")</script> & Co', course: 'Biology **101**', passed: true } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.content).toBe(
      '# Feedback for <script>alert("x")</script> & Co\n\nCourse: Biology **101**\n\nWell done!\n\nSigned, The teaching team\n',
    );
    expect(res.body.html).not.toContain('<script>');
    expect(res.body.html).toContain('<h1>Feedback for &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co</h1>');
    expect(res.body.html).toContain('<p>Well done!</p>');
    const failed = await t.call('POST', `/api/templates/${id}/render`, { as: member, body: { variables: { student: 'Ann', course: 'Art', passed: false, teacher: 'Ms Lee' } } });
    expect(failed.body.content).toContain('Please resubmit.');
    expect(failed.body.content).toContain('Signed, Ms Lee');
  });

  it('names every missing required variable in one 422, and refuses unknown ones', async () => {
    const missing = await t.call('POST', `/api/templates/${id}/render`, { as: member, body: { variables: { passed: true } } });
    expectProblem(missing, 422, 'validation_failed');
    expect(missing.body.errors).toEqual([
      { path: 'variables.student', message: '"student" is required' },
      { path: 'variables.course', message: '"course" is required' },
    ]);
    const unknown = await t.call('POST', `/api/templates/${id}/render`, { as: member, body: { variables: { student: 'A', course: 'B', hacker: 'x', constructor: 'y' } } });
    expectProblem(unknown, 422, 'validation_failed');
    expect(unknown.body.errors.map((e: any) => e.path)).toEqual(['variables.hacker', 'variables.constructor']);
    const wrongType = await t.call('POST', `/api/templates/${id}/render`, { as: member, body: { variables: { student: { toString: 1 }, course: 'B' } } });
    expectProblem(wrongType, 400, 'validation_failed');
  });

  it('never runs code: a view holds values only, and names of Object.prototype find nothing inherited', async () => {
    const tpl = await newTemplate(t.admin, {
      name: 'Proto',
      body: '[{{constructor}}][{{#toString}}yes{{/toString}}]',
      variables: [{ name: 'constructor' }, { name: 'toString' }],
    });
    const res = await t.call('POST', `/api/templates/${tpl.id}/render`, { as: member, body: { variables: {} } });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('[][]');
  });
});

describe('instantiate', () => {
  it('makes a document owned by the caller from the rendered Markdown, template_id recorded, optionally in a context', async () => {
    const tpl = await newTemplate(instructor);
    const res = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, {
      as: member,
      body: { title: 'Feedback for Ann', variables: { student: 'Ann', course: 'Art', passed: true } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/documents/${res.body.id}`);
    expect(res.body).toMatchObject({ title: 'Feedback for Ann', category: 'letters', template_id: tpl.id, created_by: member.user.id, role: 'owner' });
    expect(await contentOf(t, member, res.body.id)).toBe('# Feedback for Ann\n\nCourse: Art\n\nWell done!\n\nSigned, The teaching team\n');
    expect((await t.call('GET', `/api/documents/${res.body.id}`, { as: member })).body.template_id).toBe(tpl.id);

    const untitled = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: member, body: { variables: { student: 'Bo', course: 'Art' } } });
    expect(untitled.body.title).toBe('Feedback letter');

    const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: member.user.id });
    const filed = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, {
      as: member,
      body: { variables: { student: 'Cy', course: 'Art' }, context: { context_type: 'course', context_id: course.id } },
    });
    expect(filed.status, filed.text).toBe(201);
    const contexts = await t.call('GET', `/api/documents/${filed.body.id}/contexts`, { as: member });
    expect(contexts.body.data).toMatchObject([{ context_type: 'course', context_id: course.id }]);

    // Deleting the template keeps the documents; their template_id becomes null.
    expect((await t.call('DELETE', `/api/templates/${tpl.id}`, { as: instructor })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${res.body.id}`, { as: member })).body.template_id).toBeNull();
  });

  it('refuses missing variables (422) and creates nothing', async () => {
    const tpl = await newTemplate(instructor);
    const before = (await t.call('GET', '/api/documents', { as: member })).body.pagination.total;
    const res = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, { as: member, body: { variables: {} } });
    expectProblem(res, 422, 'validation_failed');
    expect((await t.call('GET', '/api/documents', { as: member })).body.pagination.total).toBe(before);
  });

  it("refuses a context the caller may not add documents to (422, as POST /api/documents) and creates nothing", async () => {
    const tpl = await newTemplate(instructor);
    // A course of the tenant the member is not enrolled in, a missing course, and a missing module.
    const notTheirs = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: instructor.user.id });
    const before = (await t.call('GET', '/api/documents', { as: member })).body.pagination.total;
    for (const context of [
      { context_type: 'course', context_id: notTheirs.id },
      { context_type: 'course', context_id: MISSING_ID },
      { context_type: 'module', context_id: MISSING_ID },
    ]) {
      const res = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, {
        as: member,
        body: { title: 'Filed elsewhere', variables: { student: 'Di', course: 'Art' }, context },
      });
      expectProblem(res, 422, 'validation_failed', `${context.context_type} ${context.context_id}`);
      expect(res.body.errors, res.text).toEqual([expect.objectContaining({ path: 'context_id' })]);
    }
    expect((await t.call('GET', '/api/documents', { as: member })).body.pagination.total).toBe(before);
    // The same course once the member is enrolled: accepted.
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notTheirs.id, userId: member.user.id });
    const filed = await t.call('POST', `/api/templates/${tpl.id}/instantiate`, {
      as: member,
      body: { variables: { student: 'Di', course: 'Art' }, context: { context_type: 'course', context_id: notTheirs.id } },
    });
    expect(filed.status, filed.text).toBe(201);
  });
});

describe('tenancy', () => {
  it("another tenant's templates are 404 on every path; lists show only the caller's tenant", async () => {
    const tpl = await newTemplate(instructor);
    const other = await t.newTenant('templates-other');
    for (const [method, path, body] of [
      ['GET', `/api/templates/${tpl.id}`, undefined],
      ['PUT', `/api/templates/${tpl.id}`, LETTER],
      ['DELETE', `/api/templates/${tpl.id}`, undefined],
      ['POST', `/api/templates/${tpl.id}/render`, { variables: { student: 'a', course: 'b' } }],
      ['POST', `/api/templates/${tpl.id}/instantiate`, { variables: { student: 'a', course: 'b' } }],
    ] as const) {
      expectProblem(await t.call(method, path, { as: other.admin, body }), 404, 'not_found', `${method} ${path}`);
    }
    expect((await t.call('GET', '/api/templates', { as: other.admin })).body.data).toEqual([]);
    expect((await t.call('GET', '/api/templates/categories', { as: other.admin })).body.data).toEqual([]);
    expect((await t.call('GET', `/api/templates/${tpl.id}`, { as: instructor })).status).toBe(200);
    expectProblem(await t.call('GET', `/api/templates/${MISSING_ID}`, { as: member }), 404, 'not_found');
    expectProblem(await t.call('GET', '/api/templates'), 401, 'unauthorized');
  });
});
