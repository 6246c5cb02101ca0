// Text that should not be stored: control characters (C0 but tab and line breaks in multi-line
// text, DEL, C1) and lone surrogates are refused in every text field with a 422 naming the field;
// bodies that are not UTF-8 are a 400; blank search terms are a 400 naming q.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';

let t: TestApp;
let courseId: string;
let documentId: string;
let assignmentId: string;
let studentId: string;
beforeAll(async () => {
  t = await makeTestApp();
  const course = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Texts' } });
  courseId = course.body.id;
  const doc = await t.call('POST', '/api/documents', { as: t.admin, body: { title: 'Texts' } });
  documentId = doc.body.id;
  const assignment = await t.call('POST', `/api/gradebook/offerings/${courseId}/assignments`, {
    as: t.admin,
    body: { label: 'Quiz', grade_metadata: { score_maximum: 10 } },
  });
  assignmentId = assignment.body.id;
  const student = await t.newUser({ name: 'Stu Dent' });
  studentId = student.user.id;
  expect((await t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { as: t.admin, body: { user_id: studentId } })).status).toBe(201);
});
afterAll(() => t.close());

/** A request whose text field `field` (a dotted path; a record key is part of it) holds `text`. */
interface Case {
  name: string;
  method: string;
  path: () => string;
  body: (text: string) => Record<string, unknown>;
  field: string | ((text: string) => string);
  multiLine?: boolean;
  as?: 'anonymous';
}

const scale = [{ letter: 'F', min_percent: 0 }];
const cases: Case[] = [
  { name: 'user name', method: 'POST', path: () => '/api/users', body: (x) => ({ email: 'texts@example.com', name: `A ${x}` }), field: 'name' },
  { name: 'user email', method: 'POST', path: () => '/api/users', body: (x) => ({ email: `te${x}xts@example.com`, name: 'A' }), field: 'email' },
  { name: 'new password', method: 'POST', path: () => '/api/users', body: (x) => ({ email: 'pw@example.com', name: 'A', password: `long password ${x}` }), field: 'password', multiLine: true },
  { name: 'own name', method: 'PATCH', path: () => `/api/users/${t.admin.user.id}`, body: (x) => ({ name: `Me ${x}` }), field: 'name' },
  { name: 'group name', method: 'POST', path: () => '/api/groups', body: (x) => ({ name: `G ${x}` }), field: 'name' },
  { name: 'group description', method: 'POST', path: () => '/api/groups', body: (x) => ({ name: 'G', description: `About ${x}` }), field: 'description', multiLine: true },
  { name: 'API key name', method: 'POST', path: () => '/api/api-keys', body: (x) => ({ name: `K ${x}` }), field: 'name' },
  {
    name: 'tenant name',
    method: 'POST',
    path: () => '/api/tenants',
    body: (x) => ({ name: `T ${x}`, slug: 'texts', admin_email: 'a@texts.example.com', admin_password: 'long-enough-1' }),
    field: 'name',
  },
  {
    name: 'tenant admin name',
    method: 'POST',
    path: () => '/api/tenants',
    body: (x) => ({ name: 'T', slug: 'texts', admin_email: 'a@texts.example.com', admin_password: 'long-enough-1', admin_name: `N ${x}` }),
    field: 'admin_name',
  },
  { name: 'course title', method: 'POST', path: () => '/api/courses', body: (x) => ({ title: `C ${x}` }), field: 'title' },
  { name: 'course description', method: 'POST', path: () => '/api/courses', body: (x) => ({ title: 'C', description: `D ${x}` }), field: 'description', multiLine: true },
  { name: 'section title', method: 'POST', path: () => `/api/courses/${courseId}/sections`, body: (x) => ({ title: `S ${x}` }), field: 'title' },
  { name: 'module description', method: 'POST', path: () => `/api/courses/${courseId}/modules`, body: (x) => ({ title: 'M', description: `D ${x}` }), field: 'description', multiLine: true },
  {
    name: 'assignment label',
    method: 'POST',
    path: () => `/api/gradebook/offerings/${courseId}/assignments`,
    body: (x) => ({ label: `L ${x}`, grade_metadata: { score_maximum: 10 } }),
    field: 'label',
  },
  {
    name: 'assignment category',
    method: 'PATCH',
    path: () => `/api/gradebook/assignments/${assignmentId}`,
    body: (x) => ({ grade_metadata: { category: `c ${x}` } }),
    field: 'grade_metadata.category',
  },
  {
    name: 'grade comment',
    method: 'PUT',
    path: () => `/api/gradebook/assignments/${assignmentId}/grades/${studentId}`,
    body: (x) => ({ score: 5, comment: `Good ${x}` }),
    field: 'comment',
    multiLine: true,
  },
  {
    name: 'letter of the scale',
    method: 'PUT',
    path: () => `/api/gradebook/offerings/${courseId}/settings`,
    body: (x) => ({ category_weights: {}, letter_scale: [{ letter: `F${x}`, min_percent: 0 }] }),
    field: 'letter_scale.0.letter',
  },
  {
    name: 'category of the weights',
    method: 'PUT',
    path: () => `/api/gradebook/offerings/${courseId}/settings`,
    body: (x) => ({ category_weights: { [`c${x}`]: 1 }, letter_scale: scale }),
    field: (x) => `category_weights.c${x}`,
  },
  { name: 'document title', method: 'POST', path: () => '/api/documents', body: (x) => ({ title: `D ${x}` }), field: 'title' },
  { name: 'document category', method: 'PATCH', path: () => `/api/documents/${documentId}`, body: (x) => ({ category: `c ${x}` }), field: 'category' },
  { name: 'document content', method: 'POST', path: () => '/api/documents', body: (x) => ({ title: 'D', content: `# Body ${x}` }), field: 'content', multiLine: true },
  { name: 'version name', method: 'POST', path: () => `/api/documents/${documentId}/versions`, body: (x) => ({ name: `V ${x}` }), field: 'name' },
  { name: 'sign-in email', method: 'POST', path: () => '/api/auth/token', body: (x) => ({ email: `a${x}@example.com`, password: 'x' }), field: 'email', as: 'anonymous' },
  { name: 'sign-in password', method: 'POST', path: () => '/api/auth/token', body: (x) => ({ email: 'a@example.com', password: `pw${x}` }), field: 'password', multiLine: true, as: 'anonymous' },
];

/** Refused everywhere (passwords: NUL and lone surrogates only, any other text may be a password). */
const alwaysRefused = ['\u0000', '\ud800', '\udfff'];
const controls = ['\u0001', '\u001b', '\u007f', '\u0085', '\u009f'];

const send = (c: Case, text: string) => t.call(c.method, c.path(), { as: c.as ? undefined : t.admin, body: c.body(text) });

describe('characters that cannot be stored', () => {
  it.each(cases)('are a 422 naming the $name', async (c) => {
    const secret = c.name.includes('password');
    for (const bad of [...alwaysRefused, ...(secret ? [] : controls), ...(c.multiLine ? [] : ['\t', '\n', '\r'])]) {
      const res = await send(c, `before${bad}after`);
      const where = `${c.method} ${c.path()} ${JSON.stringify(bad)}`;
      expectProblem(res, 422, 'validation_failed', where);
      const path = typeof c.field === 'string' ? c.field : c.field(`before${bad}after`);
      expect(res.body.errors, where).toEqual([{ path, message: expect.stringMatching(/^must not contain/) }]);
    }
  });

  it('leave tab, line breaks (LF, CRLF) and every other character of multi-line text alone, emoji (surrogate pairs) everywhere', async () => {
    const course = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Emoji 🎓 ÿ ☃', description: 'Line 1\r\nLine 2\n\tindented 🎓' } });
    expect(course.status).toBe(201);
    expect(course.body).toMatchObject({ title: 'Emoji 🎓 ÿ ☃', description: 'Line 1\r\nLine 2\n\tindented 🎓' });
    const doc = await t.call('POST', '/api/documents?include=content', { as: t.admin, body: { title: '🎓', content: '# A\n\n\ttab' } });
    expect(doc.status).toBe(201);
  });

  it('a lone surrogate escaped in JSON is not stored as U+FFFD', async () => {
    const res = await t.call('POST', '/api/groups', { as: t.admin, rawBody: '{"name":"Lone \\ud800 surrogate"}', headers: { 'Content-Type': 'application/json' } });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'name', message: expect.stringMatching(/lone surrogate.*U\+D800/) }]);
    const groups = await t.call('GET', '/api/groups', { as: t.admin });
    expect(JSON.stringify(groups.body)).not.toContain('\ufffd');
  });

  it('a body that is not UTF-8 (a surrogate encoded as bytes, a stray byte) is a 400', async () => {
    for (const bytes of [[0xed, 0xa0, 0x80], [0xff], [0xc3]]) {
      const body = Buffer.concat([Buffer.from('{"name":"Bytes '), Buffer.from(bytes), Buffer.from('"}')]);
      const res = await t.call('POST', '/api/groups', { as: t.admin, rawBody: new Uint8Array(body), headers: { 'Content-Type': 'application/json' } });
      expectProblem(res, 400, 'validation_failed', JSON.stringify(bytes));
      expect(res.body.detail).toMatch(/UTF-8/);
    }
    const groups = await t.call('GET', '/api/groups', { as: t.admin });
    expect(JSON.stringify(groups.body)).not.toContain('\ufffd');
    // Well-formed UTF-8 beyond ASCII goes through.
    const ok = await t.call('POST', '/api/groups', { as: t.admin, rawBody: new Uint8Array(Buffer.from('{"name":"Grüße 🎓"}')), headers: { 'Content-Type': 'application/json' } });
    expect(ok.status).toBe(201);
    expect(ok.body.name).toBe('Grüße 🎓');
  });
});

describe('search terms', () => {
  it('q=%00 is refused, naming q, instead of matching every user', async () => {
    const res = await t.call('GET', '/api/users/search?q=%00', { as: t.admin });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'q', message: expect.stringMatching(/control characters/) }]);
    for (const path of ['/api/documents?q=%00', '/api/documents/suggestions?q=a%01b']) {
      expectProblem(await t.call('GET', path, { as: t.admin }), 422, 'validation_failed', path);
    }
  });

  it('blank after trimming is a 400 naming q, on every search', async () => {
    for (const path of ['/api/users/search?q=%20%20', '/api/documents/suggestions?q=%20', '/api/documents?q=', '/api/documents?q=%20%20']) {
      const res = await t.call('GET', path, { as: t.admin });
      expectProblem(res, 400, 'validation_failed', path);
      expect(res.body.errors, path).toEqual([{ path: 'q', message: 'q must not be empty' }]);
    }
    expect((await t.call('GET', '/api/documents?q=texts', { as: t.admin })).status).toBe(200);
    expect((await t.call('GET', '/api/documents', { as: t.admin })).status).toBe(200);
  });
});

describe('query strings and path parameters: the same rule as bodies', () => {
  it('control characters in any query value are a 422 naming the parameter, whatever its schema', async () => {
    for (const [path, name] of [
      ['/api/templates?category=%0D%0Aletters', 'category'],
      ['/api/templates?category=a%C2%85b', 'category'],
      ['/api/documents?category=x%1B', 'category'],
      ['/api/users/search?q=a%7Fb', 'q'],
      ['/api/templates?unknown=%00', 'unknown'],
    ] as const) {
      const res = await t.call('GET', path, { as: t.admin });
      expectProblem(res, 422, 'validation_failed', path);
      expect(res.body.errors, path).toEqual([{ path: name, message: expect.stringMatching(/^must not contain control characters/) }]);
    }
  });

  it('percent-encoding that is not UTF-8 (a stray byte, a truncated sequence, an encoded surrogate) is a 400, in the query and in the path', async () => {
    for (const path of [
      '/api/users/search?q=%FF',
      '/api/documents?q=caf%C3',
      '/api/templates?category=%ED%A0%80',
      `/api/documents/${'%FF'}`,
      `/api/templates/%C3%28`,
    ]) {
      const res = await t.call('GET', path, { as: t.admin });
      expectProblem(res, 400, 'validation_failed', path);
      expect(res.body.detail, path).toMatch(/not valid UTF-8/);
    }
  });

  it('a control character in a path segment is a 422, as in a body', async () => {
    const res = await t.call('GET', '/api/courses/slug/a%0Ab', { as: t.admin });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: '(path)', message: expect.stringMatching(/^must not contain control characters/) }]);
  });

  it('leaves well-formed text alone: UTF-8 beyond ASCII, + as a space, encoded reserved characters', async () => {
    const made = await t.call('POST', '/api/templates', { as: t.admin, body: { name: 'Grüße', category: 'Grüße & co+', body: 'x' } });
    expect(made.status, made.text).toBe(201);
    const listed = await t.call('GET', `/api/templates?category=${encodeURIComponent('Grüße & co+')}`, { as: t.admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([made.body.id]);
    const spaced = await t.call('GET', '/api/users/search?q=Stu+Dent', { as: t.admin });
    expect(spaced.status).toBe(200);
    expect(spaced.body.data.map((u: { id: string }) => u.id)).toContain(studentId);
  });
});
