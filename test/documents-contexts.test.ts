// Where documents are filed, through the API: the contexts a caller may add documents to, and a
// document's links to courses, modules and activities (filters and counts by context included).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentContexts } from '../db/schema';
import { newId } from '../src/lib/ids';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import { insertActivity, insertModule } from './helpers/dashboard-fixtures';
import { createDoc, share, type DocumentJson } from './helpers/documents';

let t: TestApp;
let other: { tenantId: string; admin: TestUser };

beforeAll(async () => {
  t = await makeTestApp();
  other = await t.newTenant('contexts-other');
});
afterAll(() => t?.close());

const idsOf = (res: { body: { data: { id: string }[] } }) => res.body.data.map((d) => d.id);

/** A course of this tenant, made by its admin, with `members` enrolled. */
const newCourse = (input: Pick<Parameters<typeof insertCourse>[1], 'title' | 'members'> = {}) =>
  insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: t.admin.user.id, ...input });

/**
 * Linking the document to each of `targets` (named for the failure message), or creating one
 * there, is 422 without a Location, and leaves no link and no new document behind.
 */
async function expectNotLinkable(as: TestUser, documentId: string, type: 'module' | 'activity', targets: Record<string, string>) {
  const before = (await t.call('GET', '/api/documents', { as })).body.pagination.total;
  for (const [name, id] of Object.entries(targets)) {
    const body = { context_type: type, context_id: id };
    const res = await t.call('POST', `/api/documents/${documentId}/contexts`, { as, body });
    expect(res.status, name).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([{ path: 'context_id', message: `no such ${type} among your contexts` }]);
    expect(res.headers.get('location')).toBeNull();
    const onCreate = await t.call('POST', '/api/documents', { as, body: { title: 'x', context: body } });
    expect(onCreate.status, name).toBe(422);
    expect(onCreate.body.code).toBe('validation_failed');
  }
  expect((await t.call('GET', `/api/documents/${documentId}/contexts`, { as })).body.data).toEqual([]);
  expect(t.db.select().from(documentContexts).where(eq(documentContexts.documentId, documentId)).all()).toEqual([]);
  expect((await t.call('GET', '/api/documents', { as })).body.pagination.total).toBe(before);
}

/** The id of a new module of `courseId` (modules are tested through their own API elsewhere). */
const moduleIn = (courseId: string, tenantId = t.defaultTenantId, title?: string) => insertModule(t.db, { tenantId, courseId, title }).id;

describe('contexts', () => {
  it('lists personal plus the courses the caller is active in; admins see every course', async () => {
    const student = await t.newUser();
    const mine = newCourse({ title: 'Biology', members: [{ userId: student.user.id, role: 'student' }] });
    const teach = newCourse({ title: 'Algebra', members: [{ userId: student.user.id, role: 'instructor' }] });
    const notMine = newCourse({ title: 'Chemistry' });

    const res = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { context_type: 'personal', context_id: null, title: 'Personal', course_role: null },
      { context_type: 'course', context_id: teach.id, title: 'Algebra', course_role: 'instructor' },
      { context_type: 'course', context_id: mine.id, title: 'Biology', course_role: 'student' },
    ]);
    const admin = await t.call('GET', '/api/documents/contexts', { as: t.admin });
    expect(admin.body.data.map((c: { context_id: string }) => c.context_id)).toContain(notMine.id);
    const otherAdmin = await t.call('GET', '/api/documents/contexts', { as: other.admin });
    expect(otherAdmin.body.data.map((c: { context_id: string }) => c.context_id)).not.toContain(notMine.id);
    expect((await t.call('GET', '/api/documents/contexts')).status).toBe(401);
  });

  it('links documents to courses and modules, lists, filters, counts and unlinks them', async () => {
    const teacher = await t.newUser();
    const course = newCourse({ title: 'Physics', members: [{ userId: teacher.user.id, role: 'instructor' }] });
    const moduleId = moduleIn(course.id, t.defaultTenantId, 'Optics');

    const syllabus = await createDoc(t, teacher, { title: 'Syllabus', context: { context_type: 'course', context_id: course.id } });
    const lab = await createDoc(t, teacher, { title: 'Lab sheet' });
    const personal = await createDoc(t, teacher, { title: 'Private' });

    const link = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });
    expect(link.status).toBe(201);
    expect(link.headers.get('location')).toBe(`/api/documents/${lab.id}/contexts/module/${moduleId}`);
    expect(link.body).toMatchObject({ context_type: 'module', context_id: moduleId, title: 'Optics', course_id: course.id, created_by: teacher.user.id });
    const followed = await t.call('GET', link.headers.get('location')!, { as: teacher });
    expect(followed.status).toBe(200);
    expect(followed.body).toEqual(link.body);
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/course/${course.id}`, { as: teacher })).status).toBe(404);
    const again = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });
    expect(again.status).toBe(200);
    t.clock.advance(1000);
    await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'course', context_id: course.id } });

    const labContexts = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(labContexts.body.data.map((c: { context_type: string; title: string }) => [c.context_type, c.title])).toEqual([
      ['module', 'Optics'],
      ['course', 'Physics'],
    ]);

    const inCourse = await t.call('GET', `/api/documents?context_type=course&context_id=${course.id}`, { as: teacher });
    expect(inCourse.body.data.map((d: DocumentJson) => d.id).sort()).toEqual([syllabus.id, lab.id].sort());
    const inModule = await t.call('GET', `/api/documents?context_type=module&context_id=${moduleId}`, { as: teacher });
    expect(inModule.body.data.map((d: DocumentJson) => d.id)).toEqual([lab.id]);
    const personalOnes = await t.call('GET', '/api/documents?context_type=personal', { as: teacher });
    expect(personalOnes.body.data.map((d: DocumentJson) => d.id)).toEqual([personal.id]);

    const counts = await t.call('GET', '/api/documents/courses', { as: teacher });
    expect(counts.status).toBe(200);
    expect(counts.body.data).toEqual([{ course_id: course.id, title: 'Physics', slug: course.slug, count: 2 }]);
    // Counts are of the caller's visible documents: a student of the course sees none of these.
    const student = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id });
    expect((await t.call('GET', '/api/documents/courses', { as: student })).body.data).toEqual([]);
    await share(t, teacher, syllabus.id, { user: student }, 'viewer');
    expect((await t.call('GET', '/api/documents/courses', { as: student })).body.data).toEqual([
      { course_id: course.id, title: 'Physics', slug: course.slug, count: 1 },
    ]);
    // A viewer may read the links but not change them.
    expect((await t.call('GET', `/api/documents/${syllabus.id}/contexts`, { as: student })).status).toBe(200);
    expect((await t.call('DELETE', `/api/documents/${syllabus.id}/contexts/course/${course.id}`, { as: student })).status).toBe(403);

    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/${moduleId}`, { as: teacher })).status).toBe(204);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/${moduleId}`, { as: teacher })).status).toBe(404);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/planet/${moduleId}`, { as: teacher })).status).toBe(400);
    expect((await t.call('DELETE', `/api/documents/${lab.id}/contexts/module/nope`, { as: teacher })).status).toBe(400);
    await t.call('DELETE', `/api/documents/${lab.id}`, { as: teacher });
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data[0].count).toBe(1);
  });

  it('refuses contexts the caller cannot add to with 422, malformed ones with 400, and non-owners with 403', async () => {
    const user = await t.newUser();
    const foreign = newCourse();
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    const dropped = newCourse({ members: [{ userId: user.user.id, status: 'dropped' }] });
    const doc = await createDoc(t, user);

    for (const body of [
      { context_type: 'course', context_id: foreign.id },
      { context_type: 'course', context_id: otherTenantCourse.id },
      { context_type: 'course', context_id: dropped.id },
      { context_type: 'course', context_id: newId() },
      { context_type: 'module', context_id: newId() },
      // An unknown activity, like an unknown module (activities are tested further below).
      { context_type: 'activity', context_id: newId() },
    ]) {
      const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
    }
    const onCreate = await t.call('POST', '/api/documents', { as: user, body: { title: 'x', context: { context_type: 'course', context_id: foreign.id } } });
    expect(onCreate.status).toBe(422);

    for (const body of [{ context_type: 'course' }, { context_type: 'course', context_id: 'x' }, { context_type: 'personal', context_id: newId() }]) {
      expect((await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body })).status).toBe(400);
    }
    // Admins, instructors of every course, may link any course of their tenant.
    const adminDoc = await createDoc(t, t.admin);
    expect(
      (await t.call('POST', `/api/documents/${adminDoc.id}/contexts`, { as: t.admin, body: { context_type: 'course', context_id: foreign.id } })).status,
    ).toBe(201);

    const editor = await t.newUser();
    const course = newCourse({ members: [{ userId: editor.user.id }] });
    await share(t, user, doc.id, { user: editor }, 'editor');
    const res = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: editor, body: { context_type: 'course', context_id: course.id } });
    expect(res.status).toBe(403);
  });

  it('refuses a real module of a course the caller may not add to with 422, and links nothing', async () => {
    const user = await t.newUser();
    const notEnrolled = newCourse();
    const dropped = newCourse({ members: [{ userId: user.user.id, status: 'dropped' }] });
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id });
    const modules = {
      notEnrolled: moduleIn(notEnrolled.id),
      dropped: moduleIn(dropped.id),
      otherTenant: moduleIn(otherTenantCourse.id, other.tenantId),
    };
    const doc = await createDoc(t, user);
    await expectNotLinkable(user, doc.id, 'module', modules);

    // The same module is linkable once the caller is active in its course.
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: user.user.id });
    const ok = await t.call('POST', `/api/documents/${doc.id}/contexts`, {
      as: user,
      body: { context_type: 'module', context_id: modules.notEnrolled },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ context_type: 'module', context_id: modules.notEnrolled, course_id: notEnrolled.id });
  });

  it('links documents to activities like modules: titles, filters, counts, and the link leaves with the activity', async () => {
    const teacher = await t.newUser();
    const course = newCourse({ title: 'Ctx Optics course', members: [{ userId: teacher.user.id, role: 'instructor' }] });
    const moduleId = moduleIn(course.id, t.defaultTenantId, 'Lenses');
    const of = { tenantId: t.defaultTenantId, courseId: course.id, moduleId, createdBy: teacher.user.id };
    const prism = insertActivity(t.db, { ...of, title: 'Prism lab' });
    const mirror = insertActivity(t.db, { ...of, title: 'Mirror quiz', position: 1 });

    const lab = await createDoc(t, teacher, { title: 'Prism worksheet' });
    const link = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'activity', context_id: prism.id } });
    expect(link.status, link.text).toBe(201);
    expect(link.headers.get('location')).toBe(`/api/documents/${lab.id}/contexts/activity/${prism.id}`);
    expect(link.body).toMatchObject({ context_type: 'activity', context_id: prism.id, title: 'Prism lab', course_id: course.id, created_by: teacher.user.id });
    const followed = await t.call('GET', link.headers.get('location')!, { as: teacher });
    expect(followed.status).toBe(200);
    expect(followed.body).toEqual(link.body);
    const again = await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'activity', context_id: prism.id } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(link.body);
    // A link names the activity under its own type only.
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/module/${prism.id}`, { as: teacher })).status).toBe(404);

    // Created straight into an activity, too.
    const notes = await createDoc(t, teacher, { title: 'Mirror notes', context: { context_type: 'activity', context_id: mirror.id } });
    t.clock.advance(1000);
    await t.call('POST', `/api/documents/${lab.id}/contexts`, { as: teacher, body: { context_type: 'module', context_id: moduleId } });

    const labContexts = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(labContexts.status).toBe(200);
    expect(labContexts.body.data.map((c: { context_type: string; title: string; course_id: string }) => [c.context_type, c.title, c.course_id])).toEqual([
      ['activity', 'Prism lab', course.id],
      ['module', 'Lenses', course.id],
    ]);
    expect(labContexts.body.pagination.total).toBe(2);
    const inPrism = await t.call('GET', `/api/documents?context_type=activity&context_id=${prism.id}`, { as: teacher });
    expect(idsOf(inPrism)).toEqual([lab.id]);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${mirror.id}`, { as: teacher }))).toEqual([notes.id]);
    expect(idsOf(await t.call('GET', '/api/documents?context_type=personal', { as: teacher }))).toEqual([]);
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data).toEqual([
      { course_id: course.id, title: 'Ctx Optics course', slug: course.slug, count: 2 },
    ]);

    // Deleting the activity hides every link to it, as deleting a module does.
    expect((await t.call('DELETE', `/api/activities/${prism.id}`, { as: teacher })).status).toBe(204);
    const after = await t.call('GET', `/api/documents/${lab.id}/contexts`, { as: teacher });
    expect(after.body.data.map((c: { context_type: string }) => c.context_type)).toEqual(['module']);
    expect(after.body.pagination.total).toBe(1);
    expect((await t.call('GET', `/api/documents/${lab.id}/contexts/activity/${prism.id}`, { as: teacher })).status).toBe(404);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${prism.id}`, { as: teacher }))).toEqual([]);
    // Gone with its module: the last link of `notes` was to an activity of it, so it is personal again.
    expect((await t.call('DELETE', `/api/modules/${moduleId}`, { as: teacher })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${notes.id}/contexts`, { as: teacher })).body.data).toEqual([]);
    expect((await t.call('GET', `/api/documents/${notes.id}/contexts/activity/${mirror.id}`, { as: teacher })).status).toBe(404);
    expect(idsOf(await t.call('GET', `/api/documents?context_type=activity&context_id=${mirror.id}`, { as: teacher }))).toEqual([]);
    expect(idsOf(await t.call('GET', '/api/documents?context_type=personal', { as: teacher })).sort()).toEqual([lab.id, notes.id].sort());
    expect((await t.call('GET', '/api/documents/courses', { as: teacher })).body.data).toEqual([]);
  });

  it('refuses an activity of another tenant, an unknown one, or one of a course the caller may not add to with 422; non-owners with 403', async () => {
    const user = await t.newUser();
    const notEnrolled = newCourse();
    const dropped = newCourse({ members: [{ userId: user.user.id, status: 'dropped' }] });
    const deleted = newCourse({ members: [{ userId: user.user.id }] });
    const otherTenantCourse = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id, members: [{ userId: user.user.id }] });
    const activityIn = (courseId: string, tenantId = t.defaultTenantId) =>
      insertActivity(t.db, { tenantId, courseId, moduleId: moduleIn(courseId, tenantId), createdBy: t.admin.user.id }).id;
    const activitiesOf = {
      notEnrolled: activityIn(notEnrolled.id),
      dropped: activityIn(dropped.id),
      deletedCourse: activityIn(deleted.id),
      otherTenant: activityIn(otherTenantCourse.id, other.tenantId),
      unknown: newId(),
    };
    expect((await t.call('DELETE', `/api/courses/${deleted.id}`, { as: t.admin })).status).toBe(204);
    const doc = await createDoc(t, user);
    await expectNotLinkable(user, doc.id, 'activity', activitiesOf);
    // The other tenant's admin cannot link this tenant's activity either.
    const foreignDoc = await createDoc(t, other.admin);
    const foreign = await t.call('POST', `/api/documents/${foreignDoc.id}/contexts`, {
      as: other.admin,
      body: { context_type: 'activity', context_id: activitiesOf.notEnrolled },
    });
    expect(foreign.status).toBe(422);

    // Linkable once the caller is active in its course (a student too), and by a tenant admin anywhere.
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: user.user.id });
    const ok = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: user, body: { context_type: 'activity', context_id: activitiesOf.notEnrolled } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ context_type: 'activity', context_id: activitiesOf.notEnrolled, course_id: notEnrolled.id });
    const adminDoc = await createDoc(t, t.admin);
    const byAdmin = await t.call('POST', `/api/documents/${adminDoc.id}/contexts`, {
      as: t.admin,
      body: { context_type: 'activity', context_id: activitiesOf.dropped },
    });
    expect(byAdmin.status).toBe(201);

    // An editor of the document, active in the course, may not change its links; nor unlink.
    const editor = await t.newUser();
    insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: notEnrolled.id, userId: editor.user.id });
    await share(t, user, doc.id, { user: editor }, 'editor');
    const otherActivity = activityIn(notEnrolled.id);
    const refused = await t.call('POST', `/api/documents/${doc.id}/contexts`, { as: editor, body: { context_type: 'activity', context_id: otherActivity } });
    expect(refused.status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/contexts/activity/${activitiesOf.notEnrolled}`, { as: editor })).status).toBe(403);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/contexts/activity/${activitiesOf.notEnrolled}`, { as: user })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${doc.id}/contexts`, { as: user })).body.data).toEqual([]);
  });

  it('leaves courses of a dropped enrollment and deleted courses out of the available contexts', async () => {
    const student = await t.newUser();
    const kept = newCourse({ title: 'Ctx Anatomy', members: [{ userId: student.user.id }] });
    const dropped = newCourse({ title: 'Ctx Botany' });
    const droppedEnrollment = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: student.user.id });
    const deleted = newCourse({ title: 'Ctx Cartography', members: [{ userId: student.user.id, role: 'ta' }] });
    const personal = { context_type: 'personal', context_id: null, title: 'Personal', course_role: null };

    const before = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(before.body.data).toEqual([
      personal,
      { context_type: 'course', context_id: kept.id, title: 'Ctx Anatomy', course_role: 'student' },
      { context_type: 'course', context_id: dropped.id, title: 'Ctx Botany', course_role: 'student' },
      { context_type: 'course', context_id: deleted.id, title: 'Ctx Cartography', course_role: 'ta' },
    ]);

    expect((await t.call('POST', `/api/enrollments/${droppedEnrollment.id}/drop`, { as: t.admin })).status).toBe(200);
    expect((await t.call('DELETE', `/api/courses/${deleted.id}`, { as: t.admin })).status).toBe(204);

    const after = await t.call('GET', '/api/documents/contexts', { as: student });
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual([personal, { context_type: 'course', context_id: kept.id, title: 'Ctx Anatomy', course_role: 'student' }]);
    expect(after.body.pagination).toEqual({ page: 1, per_page: 100, total: 2, total_pages: 1 });
    // Admins may use every course of the tenant, but not a deleted one.
    const admin = (await t.call('GET', '/api/documents/contexts', { as: t.admin })).body.data.map((c: { context_id: string }) => c.context_id);
    expect(admin).toContain(dropped.id);
    expect(admin).not.toContain(deleted.id);
  });

  it('paginates the available contexts with a Link header', async () => {
    const student = await t.newUser();
    const courses = ['Pg Alpha', 'Pg Beta', 'Pg Gamma'].map((title) => newCourse({ title, members: [{ userId: student.user.id }] }));
    const path = '/api/documents/contexts';
    const link = (page: number, rel: string) => `<${path}?page=${page}&per_page=2>; rel="${rel}"`;
    const contextIds = (res: { body: { data: { context_id: string | null }[] } }) => res.body.data.map((c) => c.context_id);

    const first = await t.call('GET', `${path}?per_page=2`, { as: student });
    expect(first.status).toBe(200);
    expect(contextIds(first)).toEqual([null, courses[0]!.id]);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total: 4, total_pages: 2 });
    expect(first.headers.get('link')).toBe([link(1, 'first'), link(2, 'next'), link(2, 'last')].join(', '));

    const second = await t.call('GET', `${path}?page=2&per_page=2`, { as: student });
    expect(contextIds(second)).toEqual([courses[1]!.id, courses[2]!.id]);
    expect(second.body.pagination).toEqual({ page: 2, per_page: 2, total: 4, total_pages: 2 });
    expect(second.headers.get('link')).toBe([link(1, 'first'), link(1, 'prev'), link(2, 'last')].join(', '));

    const beyond = await t.call('GET', `${path}?page=3&per_page=2`, { as: student });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toEqual({ page: 3, per_page: 2, total: 4, total_pages: 2 });

    for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=x']) {
      const res = await t.call('GET', `${path}?${query}`, { as: student });
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });
});
