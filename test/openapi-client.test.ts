// The OpenAPI document is what client generators read, so it must describe what the server
// answers. Three checks on the served /api/openapi.json:
//   1. test/generated/api.d.ts is what openapi-typescript makes of it today (a schema change
//      without `npm run gen:api-types` fails here), and `tsc --noEmit` compiles the typed calls
//      below against those types;
//   2. a typed client (openapi-fetch over app.request) signs in, reads the caller, creates and
//      lists courses, creates and reads a document, fills and reads a gradebook;
//   3. every answer it gets is validated against the document: the status must be one the
//      operation declares, and a JSON body must match the published schema of that status and
//      media type, with no property a plain object schema does not name (members of an allOf
//      are checked without that rule). A route whose answer drifts from its schema fails CI.
import { readFileSync } from 'node:fs';
// Ajv 8 as Redocly ships it: the validator of @redocly/openapi-core, which openapi-typescript
// parses documents with (a dependency of a devDependency, not declared itself, so that
// package-lock.json stays as npm wrote it). JSON Schema 2020-12 is OpenAPI 3.1's dialect.
import Ajv2020, { type ErrorObject, type ValidateFunction } from '@redocly/ajv/dist/2020';
import createClient, { type Middleware } from 'openapi-fetch';
import type { Method, OperationObject, PathItemObject, ResponseObject } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, MISSING_ID, makeTestApp, type TestApp } from './helpers/app';
import { API_TYPES_FILE, apiTypesSource, fetchOpenApiDocument, type OpenApiDocument } from './helpers/openapi';
import type { components, paths } from './generated/api';
import { insertActivity, insertModule, insertState } from './helpers/dashboard-fixtures';
import { appendEvent } from '../src/events/log';

let t: TestApp;
let document: OpenApiDocument;
beforeAll(async () => {
  t = await makeTestApp();
  document = await fetchOpenApiDocument(t.app);
});
afterAll(() => t.close());

/** The first line where two texts differ, for a readable failure instead of a 8,000-line diff. */
function firstDifference(actual: string, expected: string): string | undefined {
  const a = actual.split('\n');
  const b = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: generated ${JSON.stringify(a[i])}, committed ${JSON.stringify(b[i])}`;
  }
  return undefined;
}

describe('test/generated/api.d.ts', () => {
  it('is what openapi-typescript generates from the served document (else: npm run gen:api-types)', async () => {
    const generated = await apiTypesSource(document);
    const committed = readFileSync(API_TYPES_FILE, 'utf8');
    expect(firstDifference(generated, committed), 'test/generated/api.d.ts is stale: run `npm run gen:api-types` and commit it').toBeUndefined();
  });
});

// ---- Answers against the published schemas ------------------------------------------------

const DOCUMENT_ID = 'lms-openapi.json';
const escapePointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

const operationOf = (doc: OpenApiDocument, schemaPath: string, method: string) =>
  (doc.paths?.[schemaPath] as PathItemObject | undefined)?.[method as Method] as OperationObject | undefined;

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) over the served document, its $refs included. */
function responseValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({
    strict: false, // the document carries OpenAPI keywords (example, …) beside JSON Schema
    allErrors: true,
    // An object schema without additionalProperties/unevaluatedProperties accepts nothing it does
    // not name: an answer with an undocumented field is drift too (an option of Redocly's fork).
    defaultUnevaluatedProperties: false,
  });
  // The formats the document uses, checked as the server writes them.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  ajv.addFormat('date-time', { validate: (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)) });
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+$/);
  ajv.addFormat('uri', { validate: (s: string) => URL.canParse(s) });
  ajv.addSchema(doc as object, DOCUMENT_ID);
  const compiled = new Map<string, ValidateFunction>();

  return function validate(schemaPath: string, method: string, status: number, contentType: string | null, body: string): string[] {
    const operation = operationOf(doc, schemaPath, method);
    if (!operation) return [`${method.toUpperCase()} ${schemaPath} is not in the document`];
    const response = operation.responses?.[String(status)] as ResponseObject | undefined;
    const declared = Object.keys(operation.responses ?? {}).join(', ');
    if (!response) return [`answered ${status}, which the document does not declare (declared: ${declared})`];
    const mediaType = contentType?.split(';')[0]?.trim() ?? null;
    const contents = Object.keys(response.content ?? {});
    if (!mediaType || body === '') {
      return contents.length === 0 ? [] : [`answered ${status} without a body, where the document promises ${contents.join(', ')}`];
    }
    if (!contents.includes(mediaType)) return [`answered ${status} as ${mediaType}, where the document declares ${contents.join(', ') || 'no body'}`];
    if (!/json/.test(mediaType)) return [];
    const pointer = ['paths', schemaPath, method, 'responses', String(status), 'content', mediaType, 'schema'].map(escapePointer).join('/');
    let check = compiled.get(pointer);
    if (!check) {
      check = ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
      compiled.set(pointer, check);
    }
    if (check(JSON.parse(body))) return [];
    return (check.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  };
}

/** Operation ids whose answers were validated, with the statuses seen. */
const validated = new Map<string, Set<number>>();

let validateAnswer: ReturnType<typeof responseValidator> | undefined;

function validatingMiddleware(): Middleware {
  const validate = (validateAnswer ??= responseValidator(document));
  return {
    async onResponse({ request, response, schemaPath }) {
      const method = request.method.toLowerCase();
      const body = await response.clone().text();
      const problems = validate(schemaPath, method, response.status, response.headers.get('content-type'), body);
      if (problems.length > 0) {
        throw new Error(
          `${request.method} ${schemaPath} → ${response.status}: the answer does not match the OpenAPI document\n  ` +
            `${problems.join('\n  ')}\n  body: ${body.slice(0, 500)}`,
        );
      }
      const operationId = operationOf(document, schemaPath, method)?.operationId ?? `${method} ${schemaPath}`;
      if (!validated.has(operationId)) validated.set(operationId, new Set());
      validated.get(operationId)!.add(response.status);
    },
  };
}

/** A typed client over the app itself, its answers checked against the document; with a token when given. */
function client(token?: string) {
  const api = createClient<paths>({
    baseUrl: 'http://lms.test',
    fetch: async (request) => t.app.request(request),
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  api.use(validatingMiddleware());
  return api;
}

describe('the check of an answer against the document', () => {
  it('accepts an answer as published and names every kind of drift', async () => {
    const validate = responseValidator(document);
    const res = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Drift check' } });
    expect(res.status).toBe(201);
    const course = res.body as Record<string, unknown>;
    const check = (status: number, body: unknown, contentType: string | null = 'application/json') =>
      validate('/api/courses/{id}', 'get', status, contentType, body === undefined ? '' : JSON.stringify(body)).join('\n');

    expect(check(200, course)).toBe('');
    expect(check(200, { ...course, secret: 'x' })).toMatch(/unevaluated properties.*secret/i);
    expect(check(200, { ...course, status: 'archived' })).toMatch(/\/status must be equal to one of the allowed values/);
    expect(check(200, { ...course, slug: undefined })).toMatch(/must have required property 'slug'/);
    expect(check(200, { ...course, id: 'course-1' })).toMatch(/\/id must match format "uuid"/);
    expect(check(200, { ...course, created_at: 'yesterday' })).toMatch(/\/created_at must match format "date-time"/);
    expect(check(200, { ...course, description: 42 })).toMatch(/\/description must be string,null/);
    expect(check(200, undefined, null)).toMatch(/without a body/);
    expect(check(200, course, 'text/html')).toMatch(/as text\/html/);
    expect(check(418, course)).toMatch(/418, which the document does not declare/);
    expect(check(404, course, 'application/problem+json')).toMatch(/must have required property 'code'/);
    expect(check(404, { type: 'urn:lms:problem:not_found', title: 'Not Found', status: 404, code: 'not_found' }, 'application/problem+json')).toBe('');
  });
});

describe('a typed client, every answer checked against the served document', () => {
  it('signs in, reads the caller, creates and lists courses, creates and reads a document, fills and reads a gradebook', async () => {
    const anonymous = client();

    const health = await anonymous.GET('/api/health');
    expect(health.response.status).toBe(200);

    const signIn = await anonymous.POST('/api/auth/token', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(signIn.response.status).toBe(200);
    const tokens = signIn.data!;
    expectTypeOf(tokens.access_token).toEqualTypeOf<string>();
    expect(tokens.token_type).toBe('Bearer');

    const unauthorized = await anonymous.GET('/api/users/me');
    expect(unauthorized.response.status).toBe(401);
    expectTypeOf(unauthorized.error!).toEqualTypeOf<components['schemas']['Problem']>();
    expect(unauthorized.error!.code).toBe('unauthorized');

    const api = client(tokens.access_token);

    const me = await api.GET('/api/users/me');
    expect(me.response.status).toBe(200);
    expect(me.data!.email).toBe(ADMIN_EMAIL);

    const created = await api.POST('/api/courses', { body: { title: 'Typed client course' } });
    expect(created.response.status).toBe(201);
    const course = created.data!;
    expectTypeOf(course).toEqualTypeOf<components['schemas']['Course']>();
    expect(course).toMatchObject({ title: 'Typed client course', status: 'draft' });

    const listed = await api.GET('/api/courses', { params: { query: { per_page: 100 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data!.data.map((c) => c.id)).toContain(course.id);
    expect(listed.data!.pagination.total).toBeGreaterThanOrEqual(1);

    const one = await api.GET('/api/courses/{id}', { params: { path: { id: course.id } } });
    expect(one.data!.slug).toBe(course.slug);
    const missing = await api.GET('/api/courses/{id}', { params: { path: { id: MISSING_ID } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.code).toBe('not_found');

    const published = await api.POST('/api/courses/{id}/publish', { params: { path: { id: course.id } } });
    expect(published.data!.status).toBe('published');

    const newDocument = await api.POST('/api/documents', {
      body: { title: 'Typed client notes', content: '# Notes\n\nWritten through the typed client.' },
    });
    expect(newDocument.response.status).toBe(201);
    const documentId = newDocument.data!.id;
    const read = await api.GET('/api/documents/{id}', { params: { path: { id: documentId }, query: { include: 'content' } } });
    expect(read.response.status).toBe(200);
    expect(read.data!.title).toBe('Typed client notes');
    expect(read.data!.content).toContain('Written through the typed client.');

    // A gradebook: one student, one assignment, one grade, then the instructor's reads.
    const student = await t.newUser({ name: 'Typed Student' });
    const enrolled = await api.POST('/api/enrollments/course/{course_id}/enroll', {
      params: { path: { course_id: course.id } },
      body: { user_id: student.user.id },
    });
    expect(enrolled.response.status).toBe(201);
    const assignment = await api.POST('/api/gradebook/offerings/{offering_id}/assignments', {
      params: { path: { offering_id: course.id } },
      body: { label: 'Essay', grade_metadata: { score_maximum: 20 } },
    });
    expect(assignment.response.status).toBe(201);
    const graded = await api.PUT('/api/gradebook/assignments/{id}/grades/{student_id}', {
      params: { path: { id: assignment.data!.id, student_id: student.user.id } },
      body: { score: 15 },
    });
    expect([200, 201]).toContain(graded.response.status);

    const assignments = await api.GET('/api/gradebook/offerings/{offering_id}/assignments', { params: { path: { offering_id: course.id } } });
    expect(assignments.response.status).toBe(200);
    expect(assignments.data!.data.map((a) => a.id)).toEqual([assignment.data!.id]);
    const grades = await api.GET('/api/gradebook/offerings/{offering_id}/grades', { params: { path: { offering_id: course.id } } });
    expect(grades.response.status).toBe(200);
    const summary = await api.GET('/api/gradebook/offerings/{offering_id}/summary', { params: { path: { offering_id: course.id } } });
    expect(summary.response.status).toBe(200);

    // The student reads their own grades; the instructor-only list is a 403 for them.
    const asStudent = client(student.token);
    const own = await asStudent.GET('/api/gradebook/offerings/{offering_id}/students/{student_id}/grades', {
      params: { path: { offering_id: course.id, student_id: student.user.id } },
    });
    expect(own.response.status).toBe(200);
    const refused = await asStudent.GET('/api/gradebook/offerings/{offering_id}/assignments', { params: { path: { offering_id: course.id } } });
    expect(refused.response.status).toBe(403);

    // Every answer above went through the check (a vacuous pass would show here).
    expect(Object.fromEntries([...validated].map(([id, statuses]) => [id, [...statuses].sort()]))).toEqual({
      getHealth: [200],
      createToken: [200],
      getCurrentUser: [200, 401],
      createCourse: [201],
      listCourses: [200],
      getCourse: [200, 404],
      publishCourse: [200],
      createDocument: [201],
      getDocument: [200],
      enrollInCourse: [201],
      createGradebookAssignment: [201],
      recordGrade: [graded.response.status],
      getGradebookAssignments: [200, 403],
      getGradebookGrades: [200],
      getGradebookSummary: [200],
      getStudentGrades: [200],
    });
  });

  it('compiles only calls the document allows (checked by tsc --noEmit)', () => {
    const api = client();
    // Each line is a call the document does not allow; tsc fails if one of them compiles.
    const calls = [
      // @ts-expect-error no such path
      () => api.GET('/api/nowhere'),
      // @ts-expect-error the path parameter is required
      () => api.GET('/api/courses/{id}'),
      // @ts-expect-error a course needs a title
      () => api.POST('/api/courses', { body: { slug: 'no-title' } }),
      // @ts-expect-error status is draft or published
      () => api.GET('/api/courses', { params: { query: { status: 'archived' } } }),
    ];
    expect(calls).toHaveLength(4);
  });
});

describe('the dashboard through the typed client, every answer checked against the served document', () => {
  it("reads a learner's feed of every kind of event, marks it read, reads the shelf, its analytics and the summary", async () => {
    const instructor = await t.newUser({ name: 'Typed Instructor' });
    const learner = await t.newUser({ name: 'Typed Learner' });
    const teacher = client(instructor.token);
    const created = await teacher.POST('/api/courses', { body: { title: 'Typed dashboard course' } });
    const course = created.data!;
    await teacher.POST('/api/courses/{id}/publish', { params: { path: { id: course.id } } });
    await teacher.POST('/api/enrollments/course/{course_id}/enroll', { params: { path: { course_id: course.id } }, body: { user_id: learner.user.id } });
    const assignment = await teacher.POST('/api/gradebook/offerings/{offering_id}/assignments', {
      params: { path: { offering_id: course.id } },
      body: { label: 'Lab', grade_metadata: { score_maximum: 10 } },
    });
    await teacher.PUT('/api/gradebook/assignments/{id}/grades/{student_id}', {
      params: { path: { id: assignment.data!.id, student_id: learner.user.id } },
      body: { score: 7 },
    });
    const doc = await teacher.POST('/api/documents', { body: { title: 'Typed handout' } });
    await teacher.POST('/api/documents/{id}/collaborators', {
      params: { path: { id: doc.data!.id } },
      body: { principal_type: 'user', principal_id: learner.user.id, role: 'viewer' },
    });
    // The activities area's events (completion, badge, level, help request), appended as it does.
    const module = insertModule(t.db, { tenantId: t.defaultTenantId, courseId: course.id });
    const activity = insertActivity(t.db, {
      tenantId: t.defaultTenantId,
      courseId: course.id,
      moduleId: module.id,
      createdBy: instructor.user.id,
      dueAt: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
    });
    insertState(t.db, activity, learner.user.id, { savedAt: t.clock.now().toISOString(), remindAt: t.clock.now().toISOString() });
    const subject = { type: 'activity', id: activity.id };
    const of = { tenantId: t.defaultTenantId, actorId: learner.user.id, subject, courseId: course.id };
    appendEvent(t.db, t.clock, { ...of, type: 'activity.completed', recipients: [learner.user.id], data: { activity_id: activity.id, module_id: module.id, course_id: course.id, user_id: learner.user.id, score: null, xp_awarded: 10, completed_at: t.clock.now().toISOString() } });
    appendEvent(t.db, t.clock, { ...of, type: 'badge.awarded', recipients: [learner.user.id], data: { user_id: learner.user.id, badge: 'first_completion', scope_id: null, course_id: null } });
    appendEvent(t.db, t.clock, { ...of, type: 'level.reached', recipients: [learner.user.id], data: { user_id: learner.user.id, level: 2, total_xp: 100 } });
    appendEvent(t.db, t.clock, { ...of, type: 'help.requested', recipients: [instructor.user.id], data: { activity_id: activity.id, course_id: course.id, user_id: learner.user.id, message: 'Help' } });

    const api = client(learner.token);
    validated.clear();
    const feed = await api.GET('/api/dashboard/feed');
    expect(feed.response.status).toBe(200);
    expect(feed.data!.data.map((e) => e.type).sort()).toEqual(
      ['activity.completed', 'badge.awarded', 'document.shared', 'enrollment.created', 'grade.recorded', 'level.reached'].sort(),
    );
    const instructorFeed = await teacher.GET('/api/dashboard/feed');
    expect(instructorFeed.data!.data.map((e) => e.type)).toEqual(['help.requested']);
    const read = await api.POST('/api/dashboard/feed/read', { body: { up_to: feed.data!.data[1]!.id } });
    expect(read.data).toEqual({ read_up_to: feed.data!.data[1]!.id, unread_count: 1 });
    const unknown = await api.POST('/api/dashboard/feed/read', { body: { up_to: MISSING_ID } });
    expect(unknown.response.status).toBe(404);
    const shelf = await api.GET('/api/dashboard/shelf');
    expect(shelf.data!.data.map((i) => [i.activity_id, i.reminder_due])).toEqual([[activity.id, true]]);
    const analytics = await api.GET('/api/dashboard/shelf/analytics');
    expect(analytics.data!.saved).toBe(1);
    const summary = await api.GET('/api/dashboard/summary');
    expect(summary.data!.courses.map((c) => c.course_id)).toEqual([course.id]);
    expect(summary.data!.due_soon.map((d) => d.activity_id)).toEqual([activity.id]);
    const zoned = await api.PATCH('/api/users/{id}', { params: { path: { id: learner.user.id } }, body: { timezone: 'Europe/Paris' } });
    expect(zoned.data!.timezone).toBe('Europe/Paris');
    const refused = await api.PATCH('/api/users/{id}', { params: { path: { id: learner.user.id } }, body: { timezone: 'Mars/Base' } });
    expect(refused.response.status).toBe(422);

    expect(Object.fromEntries([...validated].map(([id, statuses]) => [id, [...statuses].sort()]))).toEqual({
      getDashboardFeed: [200],
      markDashboardFeedRead: [200, 404],
      getDashboardShelf: [200],
      getDashboardShelfAnalytics: [200],
      getDashboardSummary: [200],
      updateUser: [200, 422],
    });
  });
});
