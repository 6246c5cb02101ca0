// Security matrix of competencies: every route of src/competencies/routes.ts, for each principal,
// with bad credentials and across tenants. Frameworks and competencies: every member reads, tenant
// admins write. Alignments: the instructors of the aligned content's course (and admins). Progress:
// each caller's own; a course's instructors read a learner's and the course's mastery summary.
import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { competencies, competencyAlignments, competencyFrameworks } from '../db/schema';
import { newId } from '../src/lib/ids';
import { countRows, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('competencies-sec');
const fixture = readFileSync(new URL('./fixtures/case-math-grades-3-5.json', import.meta.url), 'utf8');
const documentId = JSON.parse(fixture).CFDocument.identifier as string;

interface Fixture {
  course: CourseRow;
  framework: string;
  parent: string;
  competency: string;
  module: string;
  alignment: string;
}

async function made(c: Cast, as: Side['admin'], method: string, path: string, body: unknown): Promise<any> {
  const res = await c.t.call(method, path, { as, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(201);
  return res.body;
}

/** A framework with a parent and a child competency, the child aligned to a module of the side's course. */
async function aligned(side: Side, c: Cast): Promise<Fixture> {
  const framework = (await made(c, side.admin, 'POST', '/api/competencies/frameworks', { title: `Framework ${side.name}` })).id;
  const parent = (await made(c, side.admin, 'POST', `/api/competencies/frameworks/${framework}/competencies`, { code: 'P', title: 'Parent' })).id;
  const competency = (await made(c, side.admin, 'POST', `/api/competencies/frameworks/${framework}/competencies`, { code: 'P.1', title: 'Child', parent_id: parent })).id;
  const module = (await made(c, side.instructor, 'POST', `/api/courses/${side.course.id}/modules`, { title: 'Week' })).id;
  const alignment = (await made(c, side.instructor, 'POST', `/api/competencies/${competency}/alignments`, { target_type: 'module', target_id: module })).id;
  return { course: side.course, framework, parent, competency, module, alignment };
}

const shared = sharedFixture(aligned);
const everyone = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: ok, student: ok, outsider: ok, otherTenantAdmin: 404, otherTenantUser: 404 });
const adminsWrite = (ok: number) => ({ platform: ok, admin: ok, instructor: 403, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
const instructors = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
const collection = { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 200, otherTenantUser: 200 };

const frameworkState = (f: Fixture, c: Cast, side: Side) => readAs(c, side.admin, `/api/competencies/frameworks/${f.framework}/tree`);
const alignmentsState = (f: Fixture, c: Cast) =>
  c.t.db.select().from(competencyAlignments).where(eq(competencyAlignments.competencyId, f.competency)).all().length;

describe('competencies', () => {
  securityMatrix(cast, {
    name: 'GET /api/competencies/frameworks',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/competencies/frameworks' }),
    roles: collection,
  });

  securityMatrix(cast, {
    name: 'POST /api/competencies/frameworks',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'POST', path: '/api/competencies/frameworks', body: { title: 'New one' } }),
    snapshot: (_f, c) => countRows(c, competencyFrameworks),
    roles: { platform: 201, admin: 201, instructor: 403, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 201, otherTenantUser: 403 },
  });

  securityMatrix(cast, {
    name: 'POST /api/competencies/frameworks/import',
    setup: shared,
    crossTenant: false,
    // A package never imported before on every call, so that each accepted import creates.
    request: () => ({ method: 'POST', path: '/api/competencies/frameworks/import', body: JSON.parse(fixture.replaceAll(documentId, `doc-${newId()}`)) }),
    snapshot: (_f, c) => [countRows(c, competencyFrameworks), countRows(c, competencies)],
    roles: { platform: 201, admin: 201, instructor: 403, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 201, otherTenantUser: 403 },
  });

  securityMatrix(cast, {
    name: 'GET /api/competencies/frameworks/{id}',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/competencies/frameworks/${f.framework}` }),
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/competencies/frameworks/{id}',
    setup: shared,
    request: (f) => ({ method: 'PATCH', path: `/api/competencies/frameworks/${f.framework}`, body: { description: 'Changed' } }),
    snapshot: (f, c, side) => readAs(c, side.admin, `/api/competencies/frameworks/${f.framework}`),
    roles: adminsWrite(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/competencies/frameworks/{id}',
    fresh: true,
    setup: aligned,
    request: (f) => ({ method: 'DELETE', path: `/api/competencies/frameworks/${f.framework}?cascade=true` }),
    snapshot: frameworkState,
    roles: adminsWrite(204),
  });

  for (const what of ['case', 'competencies', 'tree']) {
    securityMatrix(cast, {
      name: `GET /api/competencies/frameworks/{id}/${what}`,
      setup: shared,
      request: (f) => ({ method: 'GET', path: `/api/competencies/frameworks/${f.framework}/${what}` }),
      roles: everyone(200),
    });
  }

  securityMatrix(cast, {
    name: 'POST /api/competencies/frameworks/{id}/competencies',
    setup: shared,
    request: (f) => ({ method: 'POST', path: `/api/competencies/frameworks/${f.framework}/competencies`, body: { code: `N-${newId()}`, title: 'New', parent_id: f.parent } }),
    snapshot: frameworkState,
    roles: adminsWrite(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/competencies/{id}',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/competencies/${f.competency}` }),
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/competencies/{id}',
    setup: shared,
    request: (f) => ({ method: 'PATCH', path: `/api/competencies/${f.competency}`, body: { mastery_threshold: 0.7 } }),
    snapshot: (f, c, side) => readAs(c, side.admin, `/api/competencies/${f.competency}`),
    roles: adminsWrite(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/competencies/{id}',
    fresh: true,
    setup: aligned,
    request: (f) => ({ method: 'DELETE', path: `/api/competencies/${f.parent}?cascade=true` }),
    snapshot: frameworkState,
    roles: adminsWrite(204),
  });

  securityMatrix(cast, {
    name: 'GET /api/competencies/search',
    setup: shared,
    crossTenant: false,
    request: () => ({ method: 'GET', path: '/api/competencies/search?q=P' }),
    roles: collection,
  });

  securityMatrix(cast, {
    name: 'GET /api/competencies/{id}/alignments',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/competencies/${f.competency}/alignments` }),
    roles: instructors(200),
  });

  securityMatrix(cast, {
    name: 'POST /api/competencies/{id}/alignments',
    fresh: true,
    setup: aligned,
    request: (f) => ({ method: 'POST', path: `/api/competencies/${f.parent}/alignments`, body: { target_type: 'module', target_id: f.module, weight: 2 } }),
    snapshot: (f, c) => c.t.db.select().from(competencyAlignments).where(eq(competencyAlignments.competencyId, f.parent)).all().length,
    roles: instructors(201),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/competencies/{id}/alignments/{alignment_id}',
    fresh: true,
    setup: aligned,
    request: (f) => ({ method: 'DELETE', path: `/api/competencies/${f.competency}/alignments/${f.alignment}` }),
    snapshot: alignmentsState,
    roles: instructors(204),
  });

  for (const path of ['/competencies/progress', '/api/competencies/progress', '/api/competencies/mastery-summary']) {
    securityMatrix(cast, {
      name: `GET ${path}`,
      setup: shared,
      crossTenant: false,
      request: () => ({ method: 'GET', path }),
      roles: collection,
    });
  }

  securityMatrix(cast, {
    name: 'GET /competencies/progress?framework_id=',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/competencies/progress?framework_id=${f.framework}` }),
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/competencies/progress',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/competencies/progress` }),
    roles: everyone(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/competencies/progress?user_id=',
    setup: shared,
    request: (f, ctx) => ({ method: 'GET', path: `/api/courses/${f.course.id}/competencies/progress?user_id=${ctx.side.student.user.id}` }),
    roles: { platform: 200, admin: 200, instructor: 200, ta: 403, student: 200, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 },
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/competency-mastery',
    setup: shared,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/competency-mastery` }),
    roles: instructors(200),
  });
});
