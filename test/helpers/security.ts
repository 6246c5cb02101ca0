// The security matrix shared by every area (issue 20 item 6): one declarative table per route says
// what each principal gets, and this helper turns it into vitest cases.
//
//   const cast = useCast('courses');                       // app + principals, once per file
//   securityMatrix(cast, {
//     name: 'PATCH /api/courses/{id}',
//     setup: (side) => ({ course: side.course }),           // built in tenant A, and again in tenant B
//     request: (f) => ({ method: 'PATCH', path: `/api/courses/${f.course.id}`, body: { title: 'x' } }),
//     snapshot: (f, cast) => readAs(cast, cast.a.admin, `/api/courses/${f.course.id}`),
//     roles: { platform: 200, admin: 200, instructor: 200, ta: 403, student: 403, outsider: 403,
//              otherTenantAdmin: 404, otherTenantUser: 404 },
//   });
//
// Each matrix checks: no credential → 401 (problem+json, `WWW-Authenticate: Bearer`); each bad
// credential (garbage, a JWT signed by a foreign key, an expired JWT, a deleted API key as Bearer
// and as X-API-Key, an unknown API key, the token of a deleted user) → 401; every role of the table;
// tenant B's copy of the fixture requested by tenant A's admin and by the platform operator → 404,
// answered exactly as an id that does not exist; and, on every answer, that no id of the other
// tenant's fixture or principals shows up in the body. For writes, the `snapshot` is taken before
// and after every refused call (and the B snapshot around the cross-tenant calls): a refusal changes
// nothing. Refused cases run first; with `fresh`, every accepted call gets a fixture of its own;
// read-only routes may share one fixture per tenant (`sharedFixture`).
// A role whose answer today contradicts API.md is marked `knownDiscrepancy('…')` in its table: it
// stays named (every table names every principal), no case runs, and it is reported to be fixed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { newId } from '../../src/lib/ids';
import { expectProblem, expectUnauthorized, makeTestApp, MISSING_ID, type CallResult, type TestApp, type TestUser } from './app';
import { insertCourse, insertEnrollment } from './courses';
import { signWithForeignKey, signWithServerKey, standardClaims } from './jwt';
import { multipartBody } from './multipart';

export type CourseRow = ReturnType<typeof insertCourse>;

/** The principals every table names. */
export const CAST_ROLES = [
  'platform', // the platform operator: the admin made at first start (tenant A's admin too)
  'admin', // a tenant admin of tenant A, not the operator
  'instructor', // of the fixture's course (side.course, or any course made with newCourse)
  'ta',
  'student',
  'outsider', // a plain member of tenant A: no enrollment, no grant
  'otherTenantAdmin', // tenant B's admin, calling tenant A's fixture
  'otherTenantUser', // tenant B's instructor (of B's course), calling tenant A's fixture
] as const;
export type CastRole = (typeof CAST_ROLES)[number];

export type Credential = string | { token: string };

/** One tenant's principals and a published course where instructor, ta and student are enrolled. */
export interface Side {
  name: 'A' | 'B';
  tenantId: string;
  admin: TestUser;
  instructor: TestUser;
  ta: TestUser;
  student: TestUser;
  outsider: TestUser;
  course: CourseRow;
  /** A further member of this tenant, made on first use and the same for every later call with this name. */
  persona(name: string, role?: 'admin' | 'member'): Promise<TestUser>;
}

export interface Cast {
  t: TestApp;
  platform: TestUser;
  /** Tenant A (the default tenant): the tables' principals belong to it. */
  a: Side;
  /** Tenant B: its admin and instructor are the `otherTenant*` roles; its copy of each fixture is the cross-tenant target. */
  b: Side;
  /** Credentials that must all be refused with 401. */
  badCredentials: { label: string; headers: Record<string, string> }[];
}

/** Builds, once for the enclosing scope (beforeAll), a test app with both tenants' principals. */
export function useCast(slug: string, options?: () => Parameters<typeof makeTestApp>[0]): () => Cast {
  let cast: Cast | undefined;
  beforeAll(async () => {
    cast = await buildCast(slug, options?.());
  });
  afterAll(() => cast?.t.close());
  return () => {
    if (!cast) throw new Error('the cast is built in beforeAll');
    return cast;
  };
}

export async function buildCast(slug: string, options?: Parameters<typeof makeTestApp>[0]): Promise<Cast> {
  const t = await makeTestApp(options);
  const other = await t.newTenant(`${slug}-b`);
  const a = await buildSide(t, 'A', t.defaultTenantId, await t.newUser({ role: 'admin', name: 'Tenant A Admin' }));
  const b = await buildSide(t, 'B', other.tenantId, other.admin);

  // A user deleted by their admin: their still unexpired token must be refused.
  const gone = await t.newUser({ name: 'Deleted User' });
  const deleted = await t.call('DELETE', `/api/users/${gone.user.id}`, { as: a.admin });
  expect(deleted.status, deleted.text).toBe(204);
  // A deleted API key, as Bearer and as X-API-Key.
  const key = await t.newApiKey(a.admin, { name: 'deleted key' });
  const revoked = await t.call('DELETE', `/api/api-keys/${key.id}`, { as: a.admin });
  expect(revoked.status, revoked.text).toBe(204);
  const now = Math.floor(t.clock.now().getTime() / 1000);
  const expired = await signWithServerKey(t, { claims: { ...standardClaims(t, a.admin.user), iat: now - 7200, exp: now - 3600 } });
  const foreign = await signWithForeignKey(t, standardClaims(t, a.admin.user));
  const bearer = (credential: string) => ({ Authorization: `Bearer ${credential}` });
  return {
    t,
    platform: t.admin,
    a,
    b,
    badCredentials: [
      { label: 'garbage', headers: bearer('not-a-token') },
      { label: 'a JWT signed by a foreign key', headers: bearer(foreign) },
      { label: 'an expired JWT', headers: bearer(expired) },
      { label: 'the token of a deleted user', headers: bearer(gone.token) },
      { label: 'a deleted API key', headers: bearer(key.key) },
      { label: 'a deleted API key as X-API-Key', headers: { 'X-API-Key': key.key } },
      { label: 'an unknown API key', headers: bearer(`lms_000000000000_${'x'.repeat(43)}`) },
    ],
  };
}

async function buildSide(t: TestApp, name: 'A' | 'B', tenantId: string, admin: TestUser): Promise<Side> {
  const member = (label: string) => t.newUser({ tenantId, name: `${name} ${label}` });
  const side = {
    name,
    tenantId,
    admin,
    instructor: await member('Instructor'),
    ta: await member('TA'),
    student: await member('Student'),
    outsider: await member('Outsider'),
  };
  const personas = new Map<string, Promise<TestUser>>();
  const full: Side = {
    ...side,
    course: undefined as unknown as CourseRow,
    persona(label, role = 'member') {
      const key = `${label}/${role}`;
      if (!personas.has(key)) personas.set(key, t.newUser({ tenantId, role, name: `${name} ${label}` }));
      return personas.get(key)!;
    },
  };
  full.course = newCourse(t, full, { title: `${name} Course` });
  return full;
}

/** A course of the side's tenant with the side's instructor, TA and student enrolled (active). */
export function newCourse(t: TestApp, side: Side, input: { status?: 'draft' | 'published'; title?: string } = {}): CourseRow {
  const course = insertCourse(t.db, { tenantId: side.tenantId, createdBy: side.instructor.user.id, status: input.status ?? 'published', title: input.title });
  for (const [user, role] of [
    [side.instructor, 'instructor'],
    [side.ta, 'ta'],
    [side.student, 'student'],
  ] as const) {
    insertEnrollment(t.db, { tenantId: side.tenantId, courseId: course.id, userId: user.user.id, role });
  }
  return course;
}

/**
 * A setup whose fixture is built once per tenant and shared by every matrix that uses it: for
 * read-only routes, whose cases change nothing that another matrix needs. Writes build their own.
 */
export function sharedFixture<F>(setup: (side: Side, cast: Cast) => F | Promise<F>): (side: Side, cast: Cast) => Promise<F> {
  const built = new WeakMap<Side, Promise<F>>();
  return (side, cast) => {
    if (!built.has(side)) built.set(side, Promise.resolve(setup(side, cast)));
    return built.get(side)!;
  };
}

/** GET as a privileged caller, for snapshots; fails unless 200. */
export async function readAs(cast: Cast, as: Credential, path: string): Promise<unknown> {
  const res = await cast.t.call('GET', path, { as });
  expect(res.status, `snapshot read ${path}: ${res.text}`).toBe(200);
  return res.body;
}

/** How many rows a table holds (every tenant), for the snapshot of a create. */
export const countRows = (cast: Cast, table: SQLiteTable): number => cast.t.db.select({ n: count() }).from(table).get()?.n ?? 0;

export interface SecRequest {
  method: string;
  path: string;
  body?: unknown;
  /** Sent as is (a multipart form, say), with its Content-Type in `headers`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export type Expectation<F> =
  | number
  /** `code`: the problem's code when it is not the status's usual one (`self_enrollment_closed` for a 403). */
  | { status: number; code?: string; check?: (res: CallResult, f: F) => void | Promise<void> }
  /** A known discrepancy with API.md, reported to be fixed: no case is generated for it. */
  | { exception: string };

/** A tenant admin's route on one of the tenant's things: admins `ok`, everyone else of the tenant 403, the other tenant 404. */
export const adminsOnly = (ok: number) => ({
  platform: ok,
  admin: ok,
  instructor: 403,
  ta: 403,
  student: 403,
  outsider: 403,
  otherTenantAdmin: 404,
  otherTenantUser: 404,
});

/** A tenant admin's collection route: each admin in their own tenant, other members 403. */
export const ownTenantAdmins = (ok: number) => ({ ...adminsOnly(ok), otherTenantAdmin: ok, otherTenantUser: 403 });

/** Marks a role whose answer today contradicts API.md: the table still names it, no case runs. */
export const knownDiscrepancy = (why: string): { exception: string } => ({ exception: why });

export interface RequestContext {
  /** The role this request is made for (`crossTenant` for the cross-tenant cases). */
  role: string;
  side: Side;
  cast: Cast;
}

export interface MatrixSpec<F> {
  /** `METHOD /path/{with}/{params}` as in routes.ts: the describe's name. */
  name: string;
  /** Builds the things the request needs, in one tenant; called for tenant A and for tenant B. */
  setup: (side: Side, cast: Cast) => F | Promise<F>;
  request: (f: F, ctx: RequestContext) => SecRequest;
  /** Every principal of CAST_ROLES, plus each extra principal the fixture names. */
  roles: Record<CastRole, Expectation<F>> & Record<string, Expectation<F>>;
  /** Extra principals of the fixture (a document's owner, a key's owner…), by role name. */
  principals?: (f: F) => Record<string, Credential>;
  /**
   * Writes: the state a refused call must leave alone, read as a privileged user. Compared before
   * and after each refused call, and (on B's fixture) around the cross-tenant calls.
   */
  snapshot?: (f: F, cast: Cast, side: Side) => unknown;
  /** Each accepted (2xx/3xx) call gets a fixture of its own (deletes, state changes that answer 409 when repeated). */
  fresh?: boolean;
  /**
   * Whether tenant B's fixture, requested by tenant A's admin and the operator, must be 404. False
   * for collection routes, whose path names nothing of a tenant (their lists are leak-checked).
   */
  crossTenant?: boolean;
  /** False only where seeing other tenants is the point (the operator's tenant list). */
  leakCheck?: boolean;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

const codeOf: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'validation_failed',
};

type Checked<F> = Exclude<Expectation<F>, { exception: string }>;
const statusOf = <F>(e: Checked<F>) => (typeof e === 'number' ? e : e.status);
const accepted = (status: number) => status < 400;

/** Every UUID in a value (deep), for the leak check. */
function uuidsIn(value: unknown, out = new Set<string>(), seen = new Set<unknown>()): Set<string> {
  if (typeof value === 'string') {
    for (const m of value.match(UUID) ?? []) out.add(m.toLowerCase());
  } else if (value && typeof value === 'object' && !seen.has(value)) {
    seen.add(value);
    for (const v of Object.values(value)) uuidsIn(v, out, seen);
  }
  return out;
}

function sideIds(side: Side): unknown[] {
  return [side.tenantId, side.course.id, ...[side.admin, side.instructor, side.ta, side.student, side.outsider].map((u) => u.user.id)];
}

function expectNoLeak(res: CallResult, foreign: Set<string>, where: string): void {
  const found = [...new Set((res.text.match(UUID) ?? []).map((s) => s.toLowerCase()))].filter((id) => foreign.has(id));
  expect(found, `${where}: ids of the other tenant in the answer`).toEqual([]);
}

function expectStatus(res: CallResult, status: number, where: string, expectedCode?: string): void {
  if (status === 401) return expectUnauthorized(res, where);
  const code = expectedCode ?? codeOf[status];
  if (status >= 400 && code) return expectProblem(res, status, code, where);
  expect(res.status, `${where}: ${res.text.slice(0, 300)}`).toBe(status);
}

/** Generates the cases of one route. */
export function securityMatrix<F>(cast: () => Cast, spec: MatrixSpec<F>): void {
  const method = spec.name.split(' ')[0]!;
  const isWrite = method !== 'GET';
  if (isWrite && !spec.snapshot) throw new Error(`${spec.name}: a write needs a snapshot`);
  const crossTenant = spec.crossTenant ?? true;
  const leakCheck = spec.leakCheck ?? true;

  describe(`${spec.name} security`, () => {
    let fa: F;
    let fb: F;
    let before: unknown;
    let foreignToA = new Set<string>(); // B's ids: must never reach a tenant A caller
    let foreignToB = new Set<string>(); // A's ids: must never reach a tenant B caller

    beforeAll(async () => {
      const c = cast();
      fa = await spec.setup(c.a, c);
      fb = await spec.setup(c.b, c);
      foreignToA = uuidsIn([fb, sideIds(c.b)]);
      foreignToB = uuidsIn([fa, sideIds(c.a), c.platform.user.id]);
      const extra = Object.keys(spec.principals?.(fa) ?? {});
      const named = new Set<string>([...CAST_ROLES, ...extra]);
      const missing = [...named].filter((r) => !(r in spec.roles));
      const unknown = Object.keys(spec.roles).filter((r) => !named.has(r));
      expect({ missing, unknown }, `${spec.name}: the table names every principal, and only those`).toEqual({ missing: [], unknown: [] });
      if (isWrite) before = await spec.snapshot!(fa, c, c.a);
    });

    const send = (req: SecRequest, opts: { as?: Credential; headers?: Record<string, string> }) =>
      cast().t.call(req.method, req.path, { as: opts.as, body: req.body, rawBody: req.rawBody, headers: { ...(req.headers ?? {}), ...(opts.headers ?? {}) } });

    const requestFor = (f: F, role: string, side: Side) => {
      const req = spec.request(f, { role, side, cast: cast() });
      expect(req.method, `${spec.name}: request method`).toBe(method);
      return req;
    };

    const unchanged = async (where: string) => {
      if (!isWrite) return;
      expect(await spec.snapshot!(fa, cast(), cast().a), `${where}: a refused call changed nothing`).toEqual(before);
    };

    const credentialOf = (f: F, role: string): { credential: Credential; tenant: 'A' | 'B' } => {
      const c = cast();
      switch (role) {
        case 'platform':
          return { credential: c.platform, tenant: 'A' };
        case 'admin':
        case 'instructor':
        case 'ta':
        case 'student':
        case 'outsider':
          return { credential: c.a[role], tenant: 'A' };
        case 'otherTenantAdmin':
          return { credential: c.b.admin, tenant: 'B' };
        case 'otherTenantUser':
          return { credential: c.b.instructor, tenant: 'B' };
        default: {
          const extra = spec.principals?.(f)[role];
          if (!extra) throw new Error(`${spec.name}: no principal ${role} in the fixture`);
          return { credential: extra, tenant: 'A' };
        }
      }
    };

    it('no credential → 401', async () => {
      const res = await send(requestFor(fa, 'anonymous', cast().a), {});
      expectUnauthorized(res, 'no credential');
      await unchanged('no credential');
    });

    it('bad credentials → 401', async () => {
      for (const bad of cast().badCredentials) {
        const res = await send(requestFor(fa, 'anonymous', cast().a), { headers: bad.headers });
        expectUnauthorized(res, bad.label);
      }
      await unchanged('bad credentials');
    });

    const roles = (Object.entries(spec.roles) as [string, Expectation<F>][]).filter(
      (entry): entry is [string, Checked<F>] => typeof entry[1] === 'number' || !('exception' in entry[1]),
    );
    const refused = roles.filter(([, e]) => !accepted(statusOf(e)));
    const allowed = roles.filter(([, e]) => accepted(statusOf(e)));

    const runRole = async (role: string, expectation: Checked<F>, f: F) => {
      const status = statusOf(expectation);
      const { credential, tenant } = credentialOf(f, role);
      const res = await send(requestFor(f, role, tenant === 'A' ? cast().a : cast().b), { as: credential });
      expectStatus(res, status, `${spec.name} as ${role}`, typeof expectation === 'object' ? expectation.code : undefined);
      if (typeof expectation === 'object') await expectation.check?.(res, f);
      if (leakCheck) expectNoLeak(res, tenant === 'A' ? foreignToA : foreignToB, `${spec.name} as ${role}`);
      return res;
    };

    for (const [role, expectation] of refused) {
      it(`${role} → ${statusOf(expectation)}`, async () => {
        await runRole(role, expectation, fa);
        await unchanged(role);
      });
    }

    if (crossTenant) {
      it("tenant B's thing, asked for by tenant A's admin and the operator → 404, as a missing id", async () => {
        const c = cast();
        const beforeB = isWrite ? await spec.snapshot!(fb, c, c.b) : undefined;
        const req = requestFor(fb, 'crossTenant', c.b);
        const [path, query] = req.path.split('?');
        const missing = { ...req, path: path!.replace(UUID, () => newId()) + (query !== undefined ? `?${query}` : '') };
        const answer = (res: CallResult) => ({ status: res.status, code: res.body?.code, title: res.body?.title, detail: res.body?.detail });
        for (const [label, as] of [
          ['admin', c.a.admin],
          ['platform', c.platform],
        ] as const) {
          const res = await send(req, { as });
          expectProblem(res, 404, 'not_found', `cross-tenant as ${label}`);
          expect(answer(res), `cross-tenant as ${label}: same answer as a missing id`).toEqual(answer(await send(missing, { as })));
          expectNoLeak(res, foreignToA, `cross-tenant as ${label}`);
        }
        if (isWrite) expect(await spec.snapshot!(fb, c, c.b), "tenant B's thing is unchanged").toEqual(beforeB);
      });
    }

    for (const [role, expectation] of allowed) {
      it(`${role} → ${statusOf(expectation)}`, async () => {
        const f = spec.fresh ? await spec.setup(cast().a, cast()) : fa;
        await runRole(role, expectation, f);
      });
    }
  });
}

// ---------------------------------------------------------------- scope and course_ids rows (issue 37)

/** A route as the scope table holds it: `METHOD /path/{param}` and the scope it needs. */
export interface ScopedRoute {
  method: string;
  path: string;
  need: string;
  /** The route takes a multipart form (an upload): the rows send one, as a client would. */
  multipart?: boolean;
}

/** Path parameters that are not ids, with a value the router matches. */
const NON_ID_PARAMS: Record<string, string> = { principal_type: 'user', context_type: 'course', tenant_slug: 'a', slug: 'a', handle: 'a' };

/** The route's path with every parameter filled (an id that exists nowhere, or a plausible word). */
export const filledPath = (path: string): string => path.replace(/\{([^}]+)\}/g, (_, name: string) => NON_ID_PARAMS[name] ?? MISSING_ID);

/**
 * The scope rows: for every route, a key of the operator (who may do the most) holding every scope
 * of the catalogue except the one the route needs (and, for a read, the area's write scope, which
 * holds it) is refused with 403 `insufficient_scope` naming that scope; a key holding exactly the
 * needed scope passes the scope check (whatever the route answers then, never insufficient_scope).
 * Keys are made once per scope and shared by the rows.
 */
export function scopeRows(cast: () => Cast, routes: readonly ScopedRoute[], catalogue: readonly string[]): void {
  const keys = new Map<string, Promise<string>>();
  const keyWith = (scopes: string[]): Promise<string> => {
    const name = scopes.join(' ');
    if (!keys.has(name)) {
      keys.set(
        name,
        (async () => {
          const res = await cast().t.call('POST', '/api/api-keys', { as: cast().platform, body: { name: `scope row ${keys.size}`, scopes } });
          expect(res.status, res.text).toBe(201);
          return res.body.key as string;
        })(),
      );
    }
    return keys.get(name)!;
  };
  const heldBy = (need: string) => (need.endsWith(':read') ? [need, `${need.slice(0, -':read'.length)}:write`] : [need]);
  describe.each(routes.map((r) => ({ ...r, name: `${r.method} ${r.path} (${r.need})` })))('$name', (route) => {
    const request = async (key: string) =>
      cast().t.call(route.method, filledPath(route.path), {
        as: key,
        ...(route.multipart ? await multipartBody(undefined, { name: 'x' }) : route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
      });
    it('every scope but the one it needs: 403 insufficient_scope', async () => {
      const key = await keyWith(catalogue.filter((s) => !heldBy(route.need).includes(s)));
      const res = await request(key);
      expectProblem(res, 403, 'insufficient_scope', `${route.method} ${route.path}`);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${route.need}"`);
    });
    it('exactly the scope it needs: past the scope check', async () => {
      const res = await request(await keyWith([route.need]));
      expect(res.status, res.text).not.toBe(401);
      if (res.status === 403) expect(res.body?.code, res.text).not.toBe('insufficient_scope');
    });
  });
}

/** One course_ids row: what a key limited to another course than the fixture's gets. */
export interface CourseIdsRow<F> {
  name: string;
  request: (f: F) => SecRequest;
  /** `404` as for a course the caller may not read, or `list`: 200 with none of the fixture's course in it (`ids` to look for). */
  expect: 404 | { list: (f: F) => string[] };
}

/**
 * The course_ids rows: each request made with a key of tenant A's instructor limited to another
 * course they also teach (every scope) answers 404 for the fixture's course, or leaves it out of a
 * list; the same request with a key limited to the fixture's course is not refused that way.
 */
export function courseIdsRows<F>(cast: () => Cast, setup: (side: Side, cast: Cast) => F | Promise<F>, rows: CourseIdsRow<F>[]): void {
  let fixture: F;
  let elsewhere: string;
  let here: string;
  beforeAll(async () => {
    const c = cast();
    fixture = await setup(c.a, c);
    const other = newCourse(c.t, c.a, { title: 'Another course' });
    const make = async (courseIds: string[]) => {
      const res = await c.t.call('POST', '/api/api-keys', { as: c.a.instructor, body: { name: 'course row', course_ids: courseIds } });
      expect(res.status, res.text).toBe(201);
      return res.body.key as string;
    };
    elsewhere = await make([other.id]);
    here = await make([c.a.course.id]);
  });
  describe.each(rows)('$name', (row) => {
    it(row.expect === 404 ? 'a key of another course: 404' : 'a key of another course: left out of the list', async () => {
      const req = row.request(fixture);
      const res = await cast().t.call(req.method, req.path, { as: elsewhere, body: req.body, headers: req.headers, rawBody: req.rawBody });
      if (row.expect === 404) {
        expect(res.status, res.text).toBe(404);
        return;
      }
      expect(res.status, res.text).toBe(200);
      for (const id of row.expect.list(fixture)) expect(res.text).not.toContain(id);
    });
    it("a key of the fixture's course: not refused as another course", async () => {
      const req = row.request(fixture);
      const res = await cast().t.call(req.method, req.path, { as: here, body: req.body, headers: req.headers, rawBody: req.rawBody });
      expect(res.status, res.text).toBeLessThan(300);
      if (row.expect !== 404) for (const id of row.expect.list(fixture)) expect(res.text).toContain(id);
    });
  });
}
