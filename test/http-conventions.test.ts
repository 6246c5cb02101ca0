// The conventions every endpoint shares: health and system routes, problem+json errors (400, 404,
// 405, 413, 415, 500), pagination, the OpenAPI document and reference, CORS and secure headers.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { isPublicRoute } from '../src/auth/middleware';
import { startHttpServer } from '../src/http-server';
import { createLogger } from '../src/logger';
import { MISSING_ID, expectProblem, expectUnauthorized, makeTestApp, type TestApp } from './helpers/app';
import { findChromium } from './helpers/chromium';

const packageVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `<url>; rel="x"` pairs of a Link header, by rel. */
function links(header: string | null): Record<string, URLSearchParams & { path: string }> {
  const out: Record<string, URLSearchParams & { path: string }> = {};
  for (const part of (header ?? '').split(',')) {
    const match = /<([^>]+)>;\s*rel="(\w+)"/.exec(part.trim());
    if (!match) continue;
    const url = new URL(match[1]!, 'http://x');
    out[match[2]!] = Object.assign(url.searchParams, { path: url.pathname });
  }
  return out;
}


/** A log destination that keeps every line, for tests that read what was logged. */
function captureLogs(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, sink };
}

describe('health and system', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('GET /api/health is public and reports each check', async () => {
    const res = await t.call('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // PDF export works wherever Chromium is installed (it is launched on the first export only).
    const pdf = findChromium() ? 'ok' : 'unavailable';
    expect(res.body).toEqual({ status: pdf === 'ok' ? 'ok' : 'degraded', checks: { database: 'ok', collab: 'disabled', pdf_export: pdf } });
  });

  it('GET /api/health is degraded when a capability does not work, and 503 without the database', async () => {
    const d = await makeTestApp({
      deps: (deps) => {
        deps.capabilities.collab = { available: () => true };
        deps.capabilities.pdf_export = { available: () => false };
      },
    });
    try {
      const degraded = await d.call('GET', '/api/health');
      expect(degraded.status).toBe(200);
      expect(degraded.body).toEqual({ status: 'degraded', checks: { database: 'ok', collab: 'ok', pdf_export: 'unavailable' } });

      d.deps.capabilities.pdf_export = {
        available: () => {
          throw new Error('chromium exploded');
        },
      };
      const failing = await d.call('GET', '/api/health');
      expect(failing.body.checks.pdf_export).toBe('error');
      expect(failing.text).not.toContain('chromium');

      d.deps.sqlite.close();
      const down = await d.call('GET', '/api/health');
      expect(down.status).toBe(503);
      expect(down.body.checks.database).toBe('error');
      expect(down.body.status).toBe('degraded');
    } finally {
      d.close();
    }
  });

  it('GET /api/health/uptime is public and counts from the start', async () => {
    const first = await t.call('GET', '/api/health/uptime');
    expect(first.status).toBe(200);
    expect(first.body.started_at).toBe(t.deps.startedAt.toISOString());
    t.clock.advance(90_500);
    const later = await t.call('GET', '/api/health/uptime');
    expect(later.body.uptime_seconds - first.body.uptime_seconds).toBe(90);
  });

  it('GET /api/system/features needs a credential and reports only what works', async () => {
    expectProblem(await t.call('GET', '/api/system/features'), 401, 'unauthorized');
    const member = await t.newUser();
    const res = await t.call('GET', '/api/system/features', { as: member });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      version: packageVersion,
      features: { collab: false, pdf_export: findChromium() !== undefined, pdf_fonts: true, competencies: true, gamification: true, sequencing: true, webhooks: true, lti: true, saml: true, oidc: true, oneroster: true, migration: true, email: false },
    });

    const on = await makeTestApp({ deps: (deps) => void (deps.capabilities.collab = { available: async () => true }) });
    try {
      expect((await on.call('GET', '/api/system/features', { as: on.admin })).body.features.collab).toBe(true);
    } finally {
      on.close();
    }
  });
});

describe('errors are problem+json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({ config: { bodyLimitBytes: 1024 } });
  });
  afterAll(() => t.close());

  it('404 for an unknown route, inside and outside /api', async () => {
    const inside = await t.call('GET', '/api/no-such-thing', { as: t.admin });
    expectProblem(inside, 404, 'not_found');
    expect(Object.keys(inside.body).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
    expect(inside.body.title).toBe('Not Found');
    expectProblem(await t.call('GET', '/no-such-thing'), 404, 'not_found');
  });

  it('405 with an Allow header where the path exists with other methods', async () => {
    const health = await t.call('POST', '/api/health');
    expectProblem(health, 405, 'method_not_allowed');
    expect(health.headers.get('allow')).toBe('GET, HEAD');

    const groups = await t.call('DELETE', '/api/groups', { as: t.admin });
    expectProblem(groups, 405, 'method_not_allowed');
    expect(groups.headers.get('allow')).toBe('GET, HEAD, POST');

    const key = await t.call('PATCH', `/api/api-keys/${crypto.randomUUID()}`, { as: t.admin, body: { name: 'x' } });
    expect(key.status).toBe(405);
    expect(key.headers.get('allow')).toBe('DELETE, GET, HEAD');
  });

  it('405 on the sign-in paths for another method, credential or not (they are public)', async () => {
    for (const path of ['/api/auth/token', '/api/auth/refresh', '/api/auth/logout']) {
      const res = await t.call('GET', path);
      expectProblem(res, 405, 'method_not_allowed', path);
      expect(res.headers.get('allow'), path).toBe('POST');
    }
    expectProblem(await t.call('GET', '/api/auth/nothing-here'), 404, 'not_found');
  });

  it('a trailing slash is another path: 404, never a 405 that offers the very method used', async () => {
    for (const [method, path] of [
      ['GET', '/api/users/me/'],
      ['GET', '/api/groups/'],
      ['POST', '/api/health/'],
      ['GET', `/api/api-keys/${crypto.randomUUID()}/`],
    ] as const) {
      const res = await t.call(method, path, { as: t.admin });
      expectProblem(res, 404, 'not_found', `${method} ${path}`);
      expect(res.headers.get('allow'), path).toBeNull();
    }
    // Without the slash, the same requests reach their routes.
    expect((await t.call('GET', '/api/users/me', { as: t.admin })).status).toBe(200);
    expect((await t.call('GET', '/api/groups', { as: t.admin })).status).toBe(200);
  });

  it('400 for a malformed UUID, naming the parameter', async () => {
    const res = await t.call('GET', '/api/groups/not-a-uuid', { as: t.admin });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'id', message: 'id must be a UUID' }]);
  });

  it('reads UUIDs in capitals as the same ids, in paths, queries and bodies', async () => {
    const course = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Capital ids' } });
    const id: string = course.body.id;
    const upper = id.toUpperCase();
    const byPath = await t.call('GET', `/api/courses/${upper}`, { as: t.admin });
    expect(byPath.status).toBe(200);
    expect(byPath.body.id).toBe(id);

    const learner = await t.newUser();
    const enrolled = await t.call('POST', `/api/enrollments/course/${upper}/enroll`, {
      as: t.admin,
      body: { user_id: learner.user.id.toUpperCase() },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body).toMatchObject({ course_id: id, user_id: learner.user.id });
    const listed = await t.call('GET', `/api/enrollments?course_id=${upper}&user_id=${learner.user.id.toUpperCase()}`, { as: t.admin });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([enrolled.body.id]);
  });

  it('400 for malformed JSON', async () => {
    const res = await t.call('POST', '/api/groups', {
      as: t.admin,
      rawBody: '{"name": "unterminated',
      headers: { 'Content-Type': 'application/json' },
    });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.detail).toMatch(/Malformed JSON/);
  });

  it('400 with field errors for a body that fails its schema', async () => {
    const res = await t.call('POST', '/api/groups', { as: t.admin, body: { name: 42 } });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'name' })]);
  });

  it('400 for a JSON endpoint called without a body', async () => {
    expectProblem(await t.call('POST', '/api/groups', { as: t.admin }), 400, 'validation_failed');
  });

  it('reads an empty body sent as JSON as {}: an optional body is left out, a required one names its fields', async () => {
    // What fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' } }) sends.
    const empty = { rawBody: '', headers: { 'Content-Type': 'application/json' } };
    const course = await t.call('POST', '/api/courses', { as: t.admin, body: { title: 'Open to all' } });
    await t.call('PATCH', `/api/courses/${course.body.id}`, { as: t.admin, body: { enrollment: { self_enroll: 'open' } } });
    await t.call('POST', `/api/courses/${course.body.id}/publish`, { as: t.admin, ...empty });
    const learner = await t.newUser();
    const enrolled = await t.call('POST', `/api/enrollments/course/${course.body.id}/enroll`, { as: learner, ...empty });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body).toMatchObject({ user_id: learner.user.id, role: 'student', status: 'active' });

    const group = await t.call('POST', '/api/groups', { as: t.admin, ...empty });
    expectProblem(group, 400, 'validation_failed');
    expect(group.body.errors).toEqual([expect.objectContaining({ path: 'name' })]);

    // The same through node's HTTP server, whose requests the app sees through @hono/node-server.
    const server = await startHttpServer({ app: t.app, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 });
    try {
      const other = await t.newUser();
      const res = await fetch(`http://127.0.0.1:${server.port}/api/enrollments/course/${course.body.id}/enroll`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${other.token}` },
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ user_id: other.user.id, status: 'active' });
    } finally {
      await server.close();
    }
  });

  it('413 for a body over the limit, announced or streamed', async () => {
    const big = { name: 'x'.repeat(2000) };
    const announced = await t.call('POST', '/api/groups', { as: t.admin, body: big });
    expectProblem(announced, 413, 'payload_too_large');
    expect(announced.body.detail).toMatch(/1024 bytes/);

    const bytes = new TextEncoder().encode(JSON.stringify(big));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
        controller.close();
      },
    });
    const streamed = await t.app.request('/api/groups', {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { Authorization: `Bearer ${t.admin.token}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { code: string }).code).toBe('payload_too_large');

    // Just under the limit is fine.
    expect((await t.call('POST', '/api/groups', { as: t.admin, body: { name: 'small enough' } })).status).toBe(201);
  });

  it('415 for a non-JSON body on a JSON endpoint', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await t.call('POST', '/api/groups', { as: t.admin, rawBody: 'name=x', headers: { 'Content-Type': type } });
      expectProblem(res, 415, 'unsupported_media_type');
    }
    const untyped = await t.call('POST', '/api/auth/token', { rawBody: '{"email":"a@b.c","password":"x"}' });
    expect(untyped.status).toBe(415);
    // JSON with a charset, or a +json type, is JSON.
    const charset = await t.call('POST', '/api/groups', { as: t.admin, body: { name: 'charset' }, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    expect(charset.status).toBe(201);
  });

  it('401 problems carry WWW-Authenticate: Bearer', async () => {
    const res = await t.call('GET', '/api/groups');
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('403 for a member on admin endpoints', async () => {
    const member = await t.newUser();
    for (const [method, path, body] of [
      ['GET', '/api/users', undefined],
      ['POST', '/api/users', { email: 'x@example.com', name: 'X' }],
      ['DELETE', `/api/users/${t.admin.user.id}`, undefined],
      ['POST', '/api/groups', { name: 'g' }],
      ['GET', '/api/tenants', undefined],
      ['POST', '/api/tenants', { name: 'n', slug: 'sl', admin_email: 'a@example.com', admin_password: 'long-enough' }],
    ] as const) {
      const res = await t.call(method, path, { as: member, ...(body ? { body } : {}) });
      expectProblem(res, 403, 'forbidden');
    }
  });
});

describe('unexpected errors', () => {
  it('answer 500 internal with nothing of the error, and log it with the request id', async () => {
    const { lines, sink } = captureLogs();
    const t = await makeTestApp({ logger: createLogger('error', sink) });
    try {
      const app = createApp(t.deps);
      app.get('/api/boom', () => {
        throw new Error('SQLITE_ERROR: no such column users.secret_sauce at /srv/app/src/users/service.ts:42');
      });
      const res = await app.request('/api/boom', { headers: { Authorization: `Bearer ${t.admin.token}`, 'X-Request-Id': 'req-boom-1' } });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ type: 'urn:lms:problem:internal', title: 'Internal Server Error', status: 500, code: 'internal' });
      expect(text).not.toMatch(/SQLITE|secret_sauce|service\.ts|at /);
      expect(res.headers.get('x-request-id')).toBe('req-boom-1');

      const logged = lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'unhandled error');
      expect(logged).toBeDefined();
      expect(logged!.requestId).toBe('req-boom-1');
      expect(logged!.err.message).toContain('secret_sauce');
    } finally {
      t.close();
    }
  });

  it('the log level (LOG_LEVEL) decides what is written: one access line per request at info, none at warn, errors at both', async () => {
    for (const level of ['info', 'warn'] as const) {
      const { lines, sink } = captureLogs();
      const t = await makeTestApp({ logger: createLogger(level, sink) });
      try {
        const app = createApp(t.deps);
        app.get('/api/boom', () => {
          throw new Error('boom');
        });
        expect((await app.request('/api/health', { headers: { 'X-Request-Id': `health-${level}` } })).status).toBe(200);
        expect((await app.request('/api/boom', { headers: { Authorization: `Bearer ${t.admin.token}` } })).status).toBe(500);
        const logged = lines.map((l) => JSON.parse(l) as Record<string, any>);
        const accessLines = logged.filter((l) => l.msg === 'request');
        if (level === 'info') expect(accessLines.find((l) => l.requestId === 'health-info')).toMatchObject({ method: 'GET', path: '/api/health', status: 200 });
        else expect(accessLines).toEqual([]);
        expect(logged.filter((l) => l.msg === 'unhandled error')).toHaveLength(1);
      } finally {
        t.close();
      }
    }
  });
});

describe('pagination', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
    for (let i = 0; i < 6; i++) await t.newUser({ name: `Paged ${i}` });
  });
  afterAll(() => t.close());

  it('defaults to page 1 of 100', async () => {
    const res = await t.call('GET', '/api/users', { as: t.admin });
    expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 7, total_pages: 1 });
    expect(res.body.data).toHaveLength(7);
    const rels = links(res.headers.get('link'));
    expect(Object.keys(rels).sort()).toEqual(['first', 'last']);
  });

  it('answers the asked page with first, prev, next and last links that keep the filters', async () => {
    const res = await t.call('GET', '/api/users?role=member&per_page=2&page=2', { as: t.admin });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 2, per_page: 2, total: 6, total_pages: 3 });
    expect(res.body.data).toHaveLength(2);
    const rels = links(res.headers.get('link'));
    expect(Object.keys(rels).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect([rels.first!.get('page'), rels.prev!.get('page'), rels.next!.get('page'), rels.last!.get('page')]).toEqual(['1', '1', '3', '3']);
    for (const rel of Object.values(rels)) {
      expect(rel.path).toBe('/api/users');
      expect(rel.get('per_page')).toBe('2');
      expect(rel.get('role')).toBe('member');
    }

    const pages = await Promise.all([1, 2, 3].map((p) => t.call('GET', `/api/users?role=member&per_page=2&page=${p}`, { as: t.admin })));
    const seen = pages.flatMap((p) => p.body.data.map((u: { id: string }) => u.id));
    expect(new Set(seen).size).toBe(6);
  });

  it('the last page has no next; a page past the end is empty and points back', async () => {
    const last = await t.call('GET', '/api/users?per_page=3&page=3', { as: t.admin });
    expect(last.body.data).toHaveLength(1);
    expect(links(last.headers.get('link')).next).toBeUndefined();
    const past = await t.call('GET', '/api/users?per_page=3&page=9', { as: t.admin });
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(links(past.headers.get('link')).prev!.get('page')).toBe('3');
  });

  it('400 above the maximum or below 1, never clamped', async () => {
    for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=-1', 'page=1.5', 'per_page=ten', 'page=1000000001', 'page=1000000000000000']) {
      const res = await t.call('GET', `/api/users?${query}`, { as: t.admin });
      expectProblem(res, 400, 'validation_failed');
    }
    const tooMany = await t.call('GET', '/api/users?per_page=101', { as: t.admin });
    expect(tooMany.body.errors).toEqual([{ path: 'per_page', message: 'per_page must be a whole number from 1 to 100' }]);
    expect((await t.call('GET', '/api/users?per_page=100', { as: t.admin })).status).toBe(200);
    // The largest page is still an (empty) page, not an error.
    const farthest = await t.call('GET', '/api/users?page=1000000000', { as: t.admin });
    expect(farthest.status).toBe(200);
    expect(farthest.body.data).toEqual([]);
    const tooFar = await t.call('GET', '/api/users?page=1000000001', { as: t.admin });
    expect(tooFar.body.errors).toEqual([{ path: 'page', message: 'page must be a whole number from 1 to 1000000000' }]);
    // Every way to miss gets the one message that says what is expected (not "received NaN").
    for (const query of ['per_page=ten', 'per_page=2.5', 'per_page=10&per_page=20', 'per_page=']) {
      const res = await t.call('GET', `/api/users?${query}`, { as: t.admin });
      expect(res.body.errors, query).toEqual([{ path: 'per_page', message: 'per_page must be a whole number from 1 to 100' }]);
    }
  });
});

describe('OpenAPI document and reference', () => {
  let t: TestApp;
  let doc: any;
  beforeAll(async () => {
    t = await makeTestApp();
    const res = await t.call('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => t.close());

  // Not in the document: the document itself, the reference page and its assets.
  const undocumented = (path: string) => path === '/api/openapi.json' || path === '/api/docs' || path.startsWith('/api/docs/');
  // app.routes lists a route once per handler (validators included): one entry per method and path.
  const routes = () =>
    [
      ...new Set(
        t.app.routes
          .filter((r) => r.method !== 'ALL' && !r.path.includes('*') && !undocumented(r.path))
          .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
      ),
    ].map((key) => {
      const [method, path] = key.split(' ') as [string, string];
      return { method, path };
    });

  it('is OpenAPI 3.1 with both security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(packageVersion);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('documents every route the app answers, and nothing else', () => {
    const expected = routes();
    expect(expected.length).toBeGreaterThan(20);
    for (const { method, path } of expected) {
      expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
    }
    const documentedOps = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(documentedOps.sort()).toEqual(expected.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('declares path parameters, security on every authenticated route, and problem responses', () => {
    for (const { method, path } of routes()) {
      const op = doc.paths[path][method];
      const where = `${method.toUpperCase()} ${path}`;
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        expect(op.parameters?.some((p: { in: string; name: string }) => p.in === 'path' && p.name === name), `${where} declares ${name}`).toBe(true);
      }
      const authenticated = (path.startsWith('/api/') || path.startsWith('/competencies/')) && !isPublicRoute(path);
      if (authenticated) {
        expect(op.security, `${where} security`).toEqual(expect.arrayContaining([{ bearerAuth: [] }, { apiKeyHeader: [] }]));
        expect(op.responses['401'], `${where} documents 401`).toBeDefined();
      }
      // Success is 2xx, 101 for a WebSocket upgrade, or the redirect that ends a browser's single sign-on step.
      expect(Object.keys(op.responses).some((s) => Number(s) < 300 || (path.startsWith('/sso/') && s === '302')), `${where} documents success`).toBe(true);
    }
  });

  it('every authenticated route answers 401 without a credential and with a garbage one, before looking at anything else', async () => {
    const authenticated = routes().filter(
      ({ method, path }) => (path.startsWith('/api/') || path.startsWith('/competencies/')) && !isPublicRoute(path),
    );
    expect(authenticated.length).toBeGreaterThan(60);
    for (const { method, path } of authenticated) {
      const url = path.replace(/\{\w+\}/g, MISSING_ID);
      for (const headers of [{}, { Authorization: 'Bearer not-a-token' }, { 'X-API-Key': 'lms_nope_nope' }] as Record<string, string>[]) {
        const res = await t.app.request(url, {
          method: method.toUpperCase(),
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: method === 'get' ? undefined : '{}',
        });
        expectUnauthorized({ status: res.status, headers: res.headers, body: await res.json() }, `${method.toUpperCase()} ${path} with ${JSON.stringify(headers)}`);
      }
    }
  });

  it('answers malformed ids, queries and bodies on every route with a problem (4xx), never a 500', async () => {
    const ids = [MISSING_ID, 'not-a-uuid'];
    const queries = ['', '?page=abc&per_page=-1', `?q=%00%FF&format=xml&include=zzz&status=weird&role=god&from=x&to=y&course_id=nope&user_id=nope`];
    const bodies = [undefined, '{}', '[]', 'null', '{"title":{"a":1},"name":[1],"score":"x","role":7,"email":5,"content":null,"page":1e400}'];
    const failures: string[] = [];
    let sent = 0;
    // The LTI token endpoint answers OAuth 2 error bodies (RFC 6749 §5.2, application/json), as its clients expect: test/lti.test.ts checks them.
    for (const { method, path } of routes().filter((r) => !r.path.startsWith('/collab/') && r.path !== '/api/lti/token')) {
      for (const id of ids) {
        for (const query of queries) {
          for (const body of method === 'get' || method === 'delete' ? [undefined] : bodies) {
            const url = path.replace(/\{\w+\}/g, id) + query;
            const headers: Record<string, string> = { Authorization: `Bearer ${t.admin.token}` };
            if (body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
            const res = await t.app.request(url, { method: method.toUpperCase(), headers, body });
            sent++;
            const problem = (res.headers.get('content-type') ?? '').includes('application/problem+json');
            if (res.status >= 500 || (res.status >= 400 && !problem)) failures.push(`${res.status} ${method.toUpperCase()} ${url} ${body ?? ''}`);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
  });

  it('GET /api/docs is a browsable reference that loads the document', async () => {
    const res = await t.call('GET', '/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('/api/openapi.json');
    expect(res.text.toLowerCase()).toContain('swagger');
    // An HTML page also gets the headers that only matter to a rendered document.
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('x-xss-protection')).toBe('0');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const json = await t.call('GET', '/api/health');
    expect(json.headers.get('cross-origin-opener-policy')).toBeNull();
  });
});

describe('CORS and secure headers', () => {
  let t: TestApp;
  const allowed = 'https://app.example.org';
  beforeAll(async () => {
    t = await makeTestApp({ config: { corsOrigins: `${allowed},https://admin.example.org` } });
  });
  afterAll(() => t.close());

  it('an allowed origin gets the CORS headers, also on errors', async () => {
    const res = await t.call('GET', '/api/health', { headers: { Origin: allowed } });
    expect(res.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(res.headers.get('vary')).toMatch(/Origin/i);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/Link/);
    const unauthorized = await t.call('GET', '/api/users/me', { headers: { Origin: allowed } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(allowed);
  });

  it('answers an allowed preflight without a credential', async () => {
    const res = await t.call('OPTIONS', '/api/users', {
      headers: { Origin: allowed, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/i);
  });

  it('other origins get no CORS headers', async () => {
    const res = await t.call('GET', '/api/health', { headers: { Origin: 'https://evil.example.com' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await t.call('OPTIONS', '/api/users', {
      headers: { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('no origin is allowed by default', async () => {
    const plain = await makeTestApp();
    try {
      const res = await plain.call('GET', '/api/health', { headers: { Origin: allowed } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      plain.close();
    }
  });

  it('secure headers are on every answer, errors included, and a request id too', async () => {
    const plain = await makeTestApp();
    const answers = [];
    for (const app of [t, plain]) {
      answers.push(await app.call('GET', '/api/health'), await app.call('GET', '/api/nope', { as: app.admin }), await app.call('GET', '/api/users'));
      answers.push(await app.call('PUT', '/api/health'), await app.call('POST', '/api/groups', { as: app.admin, rawBody: 'x', headers: { 'Content-Type': 'text/plain' } }));
    }
    plain.close();
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-site');
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });
});
