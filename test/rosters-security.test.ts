// Security matrix of roster imports: every route of src/rosters/routes.ts, for each principal, with
// bad credentials and across tenants. Only tenant admins import rosters and read their tenant's
// imports (members 403); another tenant's import is 404, answered as an id that does not exist.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { jobs, users } from '../db/schema';
import { ownTenantAdmins, adminsOnly, countRows, securityMatrix, sharedFixture, useCast, type Cast, type Side } from './helpers/security';
import { multipart, rosterBundle } from './helpers/zip';

// The uploads land in a data directory of the test's own.
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rosters-sec-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});
const cast = useCast('rosters-sec', () => ({ config: { dataDir } }));

/** A small bundle of one class, naming the side in its emails. */
const bundle = (side: Side) =>
  rosterBundle({
    mode: 'delta',
    files: {
      courses: [{ sourcedId: 'course-1', title: `Course of ${side.name}` }],
      classes: [{ sourcedId: 'class-1', title: `Class of ${side.name}`, courseSourcedId: 'course-1' }],
      users: [{ sourcedId: 'u-1', givenName: 'Pat', familyName: side.name, email: `pat@side-${side.name.toLowerCase()}.example.org` }],
      enrollments: [{ sourcedId: 'e-1', classSourcedId: 'class-1', userSourcedId: 'u-1', role: 'student' }],
    },
  });

const upload = sharedFixture(async (side: Side) => multipart(await bundle(side)));

/** An import of the side's tenant, run to its end. */
const imported = sharedFixture(async (side: Side, c: Cast) => {
  const { body, contentType } = await upload(side, c);
  const res = await c.t.call('POST', '/api/rosters/imports', { as: side.admin, rawBody: body, headers: { 'Content-Type': contentType } });
  expect(res.status, res.text).toBe(202);
  await c.t.deps.jobs.drain();
  return { id: res.body.id as string };
});



securityMatrix(cast, {
  name: 'POST /api/rosters/imports',
  crossTenant: false,
  setup: upload,
  request: (f) => ({ method: 'POST', path: '/api/rosters/imports', rawBody: f.body, headers: { 'Content-Type': f.contentType } }),
  snapshot: (_f, c, side) => ({
    jobs: countRows(c, jobs),
    users: c.t.db.select({ id: users.id }).from(users).where(eq(users.tenantId, side.tenantId)).all().length,
  }),
  roles: {
    ...ownTenantAdmins(202),
    admin: { status: 202, check: (res) => expect(res.body).toMatchObject({ status: 'queued', mode: 'delta', report: null }) },
  },
});

securityMatrix(cast, {
  name: 'GET /api/rosters/imports',
  crossTenant: false,
  setup: imported,
  request: () => ({ method: 'GET', path: '/api/rosters/imports' }),
  roles: {
    ...ownTenantAdmins(200),
    admin: { status: 200, check: (res, f) => expect(res.body.data.map((i: { id: string }) => i.id)).toContain(f.id) },
  },
});

securityMatrix(cast, {
  name: 'GET /api/rosters/imports/{id}',
  setup: imported,
  request: (f) => ({ method: 'GET', path: `/api/rosters/imports/${f.id}` }),
  roles: {
    ...adminsOnly(200),
    admin: {
      status: 200,
      // The imports the POST matrix queued may have run first: the bundle's four records are created or found unchanged.
      check: (res) => {
        expect(res.body).toMatchObject({ status: 'succeeded', report: { errors: [], deleted: 0 } });
        expect(res.body.report.created + res.body.report.unchanged).toBe(4);
      },
    },
  },
});
