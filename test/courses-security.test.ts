// Security matrix of courses and their structure (sections, modules): who gets what on every route
// of src/courses/routes.ts, for each principal, with bad credentials and across tenants.
// Reading: members of the course, admins, and any member of the tenant once the course is
// published (a draft is 404 to a non-member); changing: instructors of the course and admins (403
// for those who may read); another tenant's course is 404 (API.md Tenancy).
import { describe, expect, it } from 'vitest';
import { courses } from '../db/schema';
import type { TestUser } from './helpers/app';
import { countRows, newCourse, readAs, securityMatrix, sharedFixture, useCast, type Cast, type CourseRow, type Side } from './helpers/security';

const cast = useCast('courses-sec');

/** Readers of a published course: every member of the tenant; other tenants 404. */
const readPublished = { platform: 200, admin: 200, instructor: 200, ta: 200, student: 200, outsider: 200, otherTenantAdmin: 404, otherTenantUser: 404 };
/** Readers of a draft: its members and admins; a plain member does not learn it exists. */
const readDraft = { ...readPublished, outsider: 404 };
/** Changes to a published course: instructors and admins; those who may read it 403. */
const managePublished = (ok: number) => ({ platform: ok, admin: ok, instructor: ok, ta: 403, student: 403, outsider: 403, otherTenantAdmin: 404, otherTenantUser: 404 });
const manageDraft = (ok: number) => ({ ...managePublished(ok), outsider: 404 });

async function post(c: Cast, as: TestUser, path: string, body: unknown) {
  const res = await c.t.call('POST', path, { as, body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

interface Structure {
  course: CourseRow;
  section: { id: string };
  sectionModule: { id: string };
  modules: { id: string }[];
}

/** A course with a section holding one module and two modules of its own (no section). */
async function structured(side: Side, c: Cast, status: 'draft' | 'published' = 'published'): Promise<Structure> {
  const course = newCourse(c.t, side, { status });
  const section = await post(c, side.instructor, `/api/courses/${course.id}/sections`, { title: 'Week 1' });
  const sectionModule = await post(c, side.instructor, `/api/courses/${course.id}/modules`, { title: 'In week 1', section_id: section.id });
  const modules = [
    await post(c, side.instructor, `/api/courses/${course.id}/modules`, { title: 'First' }),
    await post(c, side.instructor, `/api/courses/${course.id}/modules`, { title: 'Second' }),
  ];
  return { course, section, sectionModule, modules };
}

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((x) => x.id);

// Read-only routes share one fixture per tenant.
const readCourse = sharedFixture((side, c) => ({ course: newCourse(c.t, side) }));
const readDraftCourse = sharedFixture((side, c) => ({ course: newCourse(c.t, side, { status: 'draft' }) }));
const readStructured = sharedFixture((side, c) => structured(side, c));
const readStructuredDraft = sharedFixture((side, c) => structured(side, c, 'draft'));

describe('courses', () => {
  securityMatrix(cast, {
    name: 'GET /api/courses',
    crossTenant: false,
    setup: readCourse,
    request: () => ({ method: 'GET', path: '/api/courses' }),
    roles: {
      ...readPublished,
      platform: { status: 200, check: (res, f) => expect(ids(res)).toContain(f.course.id) },
      admin: { status: 200, check: (res, f) => expect(ids(res)).toContain(f.course.id) },
      student: { status: 200, check: (res, f) => expect(ids(res)).toContain(f.course.id) },
      // Published, yet not listed: the list is the caller's own courses.
      outsider: { status: 200, check: (res, f) => expect(ids(res)).not.toContain(f.course.id) },
      otherTenantAdmin: 200,
      otherTenantUser: 200,
    },
  });

  securityMatrix(cast, {
    name: 'POST /api/courses',
    crossTenant: false,
    setup: () => ({}),
    request: () => ({ method: 'POST', path: '/api/courses', body: { title: 'Anyone may create' } }),
    snapshot: (_f, c) => countRows(c, courses),
    // Every member may create courses (permission courses:create), in their own tenant.
    roles: { platform: 201, admin: 201, instructor: 201, ta: 201, student: 201, outsider: 201, otherTenantAdmin: 201, otherTenantUser: 201 },
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/slug/{slug} (published)',
    setup: readCourse,
    request: (f) => ({ method: 'GET', path: `/api/courses/slug/${f.course.slug}` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/slug/{slug} (draft)',
    setup: readDraftCourse,
    request: (f) => ({ method: 'GET', path: `/api/courses/slug/${f.course.slug}` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id} (published)',
    setup: readCourse,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id} (draft)',
    setup: readDraftCourse,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}` }),
    roles: readDraft,
  });

  const courseSnapshot = (f: { course: CourseRow }, c: Cast, side: Side) => readAs(c, side.admin, `/api/courses/${f.course.id}`);

  securityMatrix(cast, {
    name: 'PATCH /api/courses/{id} (published)',
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: (f) => ({ method: 'PATCH', path: `/api/courses/${f.course.id}`, body: { title: 'Renamed', description: 'Changed' } }),
    snapshot: courseSnapshot,
    roles: managePublished(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/courses/{id} (draft)',
    setup: (side, c) => ({ course: newCourse(c.t, side, { status: 'draft' }) }),
    request: (f) => ({ method: 'PATCH', path: `/api/courses/${f.course.id}`, body: { title: 'Renamed' } }),
    snapshot: courseSnapshot,
    roles: manageDraft(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/courses/{id}',
    fresh: true,
    setup: (side, c) => ({ course: newCourse(c.t, side) }),
    request: (f) => ({ method: 'DELETE', path: `/api/courses/${f.course.id}` }),
    snapshot: courseSnapshot,
    roles: managePublished(204),
  });

  securityMatrix(cast, {
    name: 'POST /api/courses/{id}/publish',
    fresh: true,
    setup: (side, c) => ({ course: newCourse(c.t, side, { status: 'draft' }) }),
    request: (f) => ({ method: 'POST', path: `/api/courses/${f.course.id}/publish` }),
    snapshot: courseSnapshot,
    roles: manageDraft(200),
  });
});

describe('course structure', () => {
  const sectionsOf = (f: Structure, c: Cast, side: Side) => readAs(c, side.admin, `/api/courses/${f.course.id}/sections`);
  const modulesOf = (f: Structure, c: Cast, side: Side) => readAs(c, side.admin, `/api/courses/${f.course.id}/modules`);

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/sections',
    setup: readStructured,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/sections` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/sections (draft)',
    setup: readStructuredDraft,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/sections` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'POST /api/courses/{id}/sections',
    setup: (side, c) => structured(side, c),
    request: (f) => ({ method: 'POST', path: `/api/courses/${f.course.id}/sections`, body: { title: 'Week 2', position: 0 } }),
    snapshot: sectionsOf,
    roles: managePublished(201),
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/modules',
    setup: readStructured,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/modules` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/courses/{id}/modules (draft)',
    setup: readStructuredDraft,
    request: (f) => ({ method: 'GET', path: `/api/courses/${f.course.id}/modules` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'POST /api/courses/{id}/modules',
    setup: (side, c) => structured(side, c),
    request: (f) => ({ method: 'POST', path: `/api/courses/${f.course.id}/modules`, body: { title: 'Extra', section_id: f.section.id, position: 0 } }),
    snapshot: modulesOf,
    roles: managePublished(201),
  });

  securityMatrix(cast, {
    name: 'PUT /api/courses/{id}/modules/order',
    setup: (side, c) => structured(side, c),
    request: (f) => ({ method: 'PUT', path: `/api/courses/${f.course.id}/modules/order`, body: { module_ids: f.modules.map((m) => m.id).reverse() } }),
    snapshot: modulesOf,
    roles: managePublished(200),
  });

  securityMatrix(cast, {
    name: 'PUT /api/courses/{id}/modules/order (draft)',
    setup: (side, c) => structured(side, c, 'draft'),
    request: (f) => ({ method: 'PUT', path: `/api/courses/${f.course.id}/modules/order`, body: { module_ids: f.modules.map((m) => m.id).reverse() } }),
    snapshot: modulesOf,
    roles: manageDraft(200),
  });

  securityMatrix(cast, {
    name: 'GET /api/sections/{id}',
    setup: readStructured,
    request: (f) => ({ method: 'GET', path: `/api/sections/${f.section.id}` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/sections/{id} (draft)',
    setup: readStructuredDraft,
    request: (f) => ({ method: 'GET', path: `/api/sections/${f.section.id}` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'GET /api/sections/{id}/modules',
    setup: readStructured,
    request: (f) => ({ method: 'GET', path: `/api/sections/${f.section.id}/modules` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/sections/{id}/modules (draft)',
    setup: readStructuredDraft,
    request: (f) => ({ method: 'GET', path: `/api/sections/${f.section.id}/modules` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'GET /api/modules/{id}',
    setup: readStructured,
    request: (f) => ({ method: 'GET', path: `/api/modules/${f.sectionModule.id}` }),
    roles: readPublished,
  });

  securityMatrix(cast, {
    name: 'GET /api/modules/{id} (draft)',
    setup: readStructuredDraft,
    request: (f) => ({ method: 'GET', path: `/api/modules/${f.sectionModule.id}` }),
    roles: readDraft,
  });

  securityMatrix(cast, {
    name: 'PATCH /api/modules/{id}',
    setup: (side, c) => structured(side, c),
    // Renames it and moves it out of its section, to the front of the course's own modules.
    request: (f) => ({ method: 'PATCH', path: `/api/modules/${f.sectionModule.id}`, body: { title: 'Moved', section_id: null, position: 0 } }),
    snapshot: modulesOf,
    roles: managePublished(200),
  });

  securityMatrix(cast, {
    name: 'PATCH /api/modules/{id} (draft)',
    setup: (side, c) => structured(side, c, 'draft'),
    request: (f) => ({ method: 'PATCH', path: `/api/modules/${f.sectionModule.id}`, body: { title: 'Renamed' } }),
    snapshot: modulesOf,
    roles: manageDraft(200),
  });

  securityMatrix(cast, {
    name: 'DELETE /api/modules/{id}',
    fresh: true,
    setup: (side, c) => structured(side, c),
    request: (f) => ({ method: 'DELETE', path: `/api/modules/${f.sectionModule.id}` }),
    snapshot: modulesOf,
    roles: managePublished(204),
  });

  it("tenant B's section or modules named in a module body are answered as unknown ids (422), and change nothing", async () => {
    const c = cast();
    const a = await structured(c.a, c);
    const b = await readStructured(c.b, c);
    const before = await modulesOf(a, c, c.a);
    const answer = async (method: string, path: string, body: unknown, foreign: string) => {
      const res = await c.t.call(method, path, { as: c.a.instructor, body });
      expect(res.status, res.text).toBe(422);
      const detail = { code: res.body.code, detail: res.body.detail, errors: res.body.errors };
      return JSON.parse(JSON.stringify(detail).replaceAll(foreign, '<id>'));
    };
    for (const [method, path, body] of [
      ['POST', `/api/courses/${a.course.id}/modules`, (id: string) => ({ title: 'Foreign', section_id: id })],
      ['PATCH', `/api/modules/${a.modules[0]!.id}`, (id: string) => ({ section_id: id })],
    ] as const) {
      const missing = crypto.randomUUID();
      expect(await answer(method, path, body(b.section.id), b.section.id), `${method} ${path}`).toEqual(await answer(method, path, body(missing), missing));
    }
    const order = (id: string) => ({ module_ids: [a.modules[0]!.id, a.modules[1]!.id, id] });
    const missing = crypto.randomUUID();
    const reorder = `/api/courses/${a.course.id}/modules/order`;
    expect(await answer('PUT', reorder, order(b.modules[0]!.id), b.modules[0]!.id)).toEqual(await answer('PUT', reorder, order(missing), missing));
    expect(await modulesOf(a, c, c.a)).toEqual(before);
  });
});
