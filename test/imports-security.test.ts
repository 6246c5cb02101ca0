// Course migration's security matrix: importing into a course and exporting one are for its
// instructors and admins (TA, student, outsider 403; another tenant 404, as a missing id); an import
// is seen by whoever started it and by admins (404 to anyone else); every list shows only the
// caller's own. A refused import leaves nothing queued or written.
import { describe, expect, it } from 'vitest';
import { courseModules, courses, jobs } from '../db/schema';
import { expectProblem, MISSING_ID } from './helpers/app';
import { fullCartridge, importForm } from './helpers/cartridges';
import { countRows, securityMatrix, sharedFixture, useCast, type Side, type Cast } from './helpers/security';

const cast = useCast('imports');
const cartridge = fullCartridge('1.3');

const snapshot = (_f: unknown, c: Cast) => ({ jobs: countRows(c, jobs), courses: countRows(c, courses), modules: countRows(c, courseModules) });

async function startImport(c: Cast, side: Side) {
  const form = await importForm(await cartridge, { course_id: side.course.id });
  const res = await c.t.call('POST', '/api/imports', { as: side.instructor, rawBody: form.rawBody, headers: form.headers });
  expect(res.status, res.text).toBe(202);
  return res.body as { id: string };
}

securityMatrix<{ course: Side['course']; form: Awaited<ReturnType<typeof importForm>> }>(cast, {
  name: 'POST /api/imports',
  setup: async (side) => ({ course: side.course, form: await importForm(await cartridge, { course_id: side.course.id }) }),
  request: (f) => ({ method: 'POST', path: '/api/imports', rawBody: f.form.rawBody, headers: f.form.headers }),
  snapshot,
  crossTenant: false,
  roles: {
    platform: 202,
    admin: 202,
    instructor: 202,
    ta: 403,
    student: 403,
    outsider: 403,
    otherTenantAdmin: 404,
    otherTenantUser: 404,
  },
});

securityMatrix<{ job: { id: string } }>(cast, {
  name: 'GET /api/imports/{id}',
  setup: sharedFixture(async (side, c) => ({ job: await startImport(c, side) })),
  request: (f) => ({ method: 'GET', path: `/api/imports/${f.job.id}` }),
  roles: {
    platform: 200,
    admin: 200,
    instructor: 200,
    ta: 404,
    student: 404,
    outsider: 404,
    otherTenantAdmin: 404,
    otherTenantUser: 404,
  },
});

securityMatrix<{ job: { id: string } }>(cast, {
  name: 'GET /api/imports',
  setup: sharedFixture(async (side, c) => ({ job: await startImport(c, side) })),
  request: () => ({ method: 'GET', path: '/api/imports' }),
  crossTenant: false,
  roles: {
    platform: 200,
    admin: 200,
    instructor: { status: 200, check: (res, f) => expect(res.body.data.map((j: { id: string }) => j.id)).toContain(f.job.id) },
    ta: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
    student: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
    outsider: { status: 200, check: (res) => expect(res.body.data).toEqual([]) },
    otherTenantAdmin: { status: 200, check: (res, f) => expect(res.body.data.map((j: { id: string }) => j.id)).not.toContain(f.job.id) },
    otherTenantUser: { status: 200, check: (res, f) => expect(res.body.data.map((j: { id: string }) => j.id)).not.toContain(f.job.id) },
  },
});

securityMatrix<{ course: Side['course'] }>(cast, {
  name: 'GET /api/courses/{id}/export',
  setup: sharedFixture((side) => ({ course: side.course })),
  request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/export?format=imscc` }),
  roles: {
    platform: 200,
    admin: 200,
    instructor: 200,
    ta: 403,
    student: 403,
    outsider: 403,
    otherTenantAdmin: 404,
    otherTenantUser: 404,
  },
});

describe('POST /api/imports across tenants and without a course', () => {
  it("another tenant's course_id is a 404, answered as a missing one, and queues nothing", async () => {
    const c = cast();
    const before = snapshot(undefined, c);
    const theirs = await importForm(await cartridge, { course_id: c.b.course.id });
    const missing = await importForm(await cartridge, { course_id: MISSING_ID });
    const a = await c.t.call('POST', '/api/imports', { as: c.a.admin, rawBody: theirs.rawBody, headers: theirs.headers });
    const m = await c.t.call('POST', '/api/imports', { as: c.a.admin, rawBody: missing.rawBody, headers: missing.headers });
    expectProblem(a, 404, 'not_found');
    expect({ ...a.body, instance: undefined }).toEqual({ ...m.body, instance: undefined });
    expect(snapshot(undefined, c)).toEqual(before);
  });

  it('a malformed course_id is a 400; without one, a member imports a new course', async () => {
    const c = cast();
    const bad = await importForm(await cartridge, { course_id: 'not-a-uuid' });
    expectProblem(await c.t.call('POST', '/api/imports', { as: c.a.student, rawBody: bad.rawBody, headers: bad.headers }), 400, 'validation_failed');
    const fresh = await importForm(await cartridge);
    const res = await c.t.call('POST', '/api/imports', { as: c.a.student, rawBody: fresh.rawBody, headers: fresh.headers });
    expect(res.status, res.text).toBe(202);
    expect(res.body.course_id).toBeNull();
  });

  it('a JSON body is a 415, no credential a 401', async () => {
    const c = cast();
    expectProblem(await c.t.call('POST', '/api/imports', { as: c.a.instructor, body: { course_id: c.a.course.id } }), 415, 'unsupported_media_type');
    expect((await c.t.call('POST', '/api/imports')).status).toBe(401);
  });
});
