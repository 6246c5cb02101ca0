import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, isNull } from 'drizzle-orm';
import { courses, enrollments } from '../db/schema';
import { MISSING_ID, expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';

describe('courses', () => {
  let t: TestApp;
  let teacher: TestUser;
  let student: TestUser;
  let outsider: TestUser;
  let other: { tenantId: string; admin: TestUser };

  beforeAll(async () => {
    t = await makeTestApp();
    teacher = await t.newUser();
    student = await t.newUser();
    outsider = await t.newUser();
    other = await t.newTenant('courses-other');
  });
  afterAll(() => t.close());

  const create = async (as: TestUser, body: Record<string, unknown>) => {
    const res = await t.call('POST', '/api/courses', { as, body });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };

  describe('create', () => {
    it('creates a draft with a Location, and enrols the creator as instructor', async () => {
      const res = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Intro to Statistics', description: 'Numbers' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/api/courses/${res.body.id}`);
      expect(res.body).toMatchObject({
        title: 'Intro to Statistics',
        slug: 'intro-to-statistics',
        description: 'Numbers',
        status: 'draft',
        created_by: teacher.user.id,
        published_at: null,
      });
      const rows = t.db.select().from(enrollments).where(eq(enrollments.courseId, res.body.id)).all();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ userId: teacher.user.id, role: 'instructor', status: 'active' });
    });

    it('generates ASCII slugs and appends -2, -3 when the generated one is taken', async () => {
      const a = await create(teacher, { title: 'Ça va? Économie & Société!' });
      expect(a.slug).toBe('ca-va-economie-societe');
      const b = await create(teacher, { title: 'Ça va, économie société' });
      expect(b.slug).toBe('ca-va-economie-societe-2');
      const c = await create(student, { title: 'ca va economie societe' });
      expect(c.slug).toBe('ca-va-economie-societe-3');
      const d = await create(teacher, { title: '???' });
      expect(d.slug).toBe('course');
    });

    it('answers 409 for an explicit slug that is taken, and 400 for a malformed one', async () => {
      await create(teacher, { title: 'Algebra', slug: 'algebra-one' });
      const clash = await t.call('POST', '/api/courses', { as: student, body: { title: 'Other', slug: 'algebra-one' } });
      expect(clash.status).toBe(409);
      expect(clash.headers.get('content-type')).toContain('application/problem+json');
      expect(clash.body.code).toBe('conflict');
      const bad = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Other', slug: 'Not A Slug' } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].path).toBe('slug');
    });

    it('keeps slugs per tenant: another tenant may use the same slug', async () => {
      await create(teacher, { title: 'Shared', slug: 'shared-slug' });
      const res = await t.call('POST', '/api/courses', { as: other.admin, body: { title: 'Shared', slug: 'shared-slug' } });
      expect(res.status).toBe(201);
    });

    it('rejects bad bodies with 400 and no credential with 401', async () => {
      expect((await t.call('POST', '/api/courses', { as: teacher, body: { title: '' } })).status).toBe(400);
      expect((await t.call('POST', '/api/courses', { as: teacher, body: { title: 'x', extra: 1 } })).status).toBe(400);
      expect((await t.call('POST', '/api/courses', { as: teacher, rawBody: '{"title":', headers: { 'Content-Type': 'application/json' } })).status).toBe(400);
      const anon = await t.call('POST', '/api/courses', { body: { title: 'x' } });
      expect(anon.status).toBe(401);
      expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    });
  });

  describe('read', () => {
    let draft: any;
    let published: any;
    beforeAll(async () => {
      draft = await create(teacher, { title: 'Read Draft' });
      published = await create(teacher, { title: 'Read Published' });
      expect((await t.call('POST', `/api/courses/${published.id}/publish`, { as: teacher })).status).toBe(200);
    });

    it('lets members, admins and (for published courses) any tenant member read a course', async () => {
      expect((await t.call('GET', `/api/courses/${draft.id}`, { as: teacher })).body.id).toBe(draft.id);
      expect((await t.call('GET', `/api/courses/${draft.id}`, { as: t.admin })).status).toBe(200);
      expect((await t.call('GET', `/api/courses/${published.id}`, { as: outsider })).status).toBe(200);
      expect((await t.call('GET', `/api/courses/slug/${published.slug}`, { as: outsider })).body.id).toBe(published.id);
    });

    it('hides a draft from non-members (404), and every course from other tenants (404)', async () => {
      expect((await t.call('GET', `/api/courses/${draft.id}`, { as: outsider })).status).toBe(404);
      expect((await t.call('GET', `/api/courses/slug/${draft.slug}`, { as: outsider })).status).toBe(404);
      const cross = await t.call('GET', `/api/courses/${published.id}`, { as: other.admin });
      expect(cross.status).toBe(404);
      expect(cross.body.code).toBe('not_found');
      expect((await t.call('GET', `/api/courses/slug/${published.slug}`, { as: other.admin })).status).toBe(404);
    });

    it('answers 400 for a malformed id, 404 for an unknown one, 401 without credential', async () => {
      const bad = await t.call('GET', '/api/courses/not-a-uuid', { as: teacher });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
      expect((await t.call('GET', `/api/courses/${MISSING_ID}`, { as: teacher })).status).toBe(404);
      expect((await t.call('GET', '/api/courses/slug/nothing-here', { as: teacher })).status).toBe(404);
      expect((await t.call('GET', `/api/courses/${draft.id}`)).status).toBe(401);
    });

    it('lets a student member read a draft course', async () => {
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: draft.id, userId: student.user.id });
      expect((await t.call('GET', `/api/courses/${draft.id}`, { as: student })).status).toBe(200);
    });
  });

  describe('list', () => {
    it("lists the caller's courses (enrolled or teaching, not dropped), by title, with status filter", async () => {
      const learner = await t.newUser();
      const owner = await t.newUser();
      const teaching = await create(learner, { title: 'B Teaching' });
      const enrolled = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'A Enrolled', status: 'published' });
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: enrolled.id, userId: learner.user.id });
      const dropped = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'C Dropped' });
      const e = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: dropped.id, userId: learner.user.id });
      t.db.update(enrollments).set({ status: 'dropped' }).where(eq(enrollments.id, e.id)).run();
      const completed = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'D Completed' });
      const c = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: completed.id, userId: learner.user.id });
      t.db.update(enrollments).set({ status: 'completed' }).where(eq(enrollments.id, c.id)).run();
      insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'E Not mine' });

      const res = await t.call('GET', '/api/courses', { as: learner });
      expect(res.status).toBe(200);
      expect(res.body.data.map((x: any) => x.title)).toEqual(['A Enrolled', 'B Teaching', 'D Completed']);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 3, total_pages: 1 });

      for (const course of res.body.data) {
        expect(course).toEqual((await t.call('GET', `/api/courses/${course.id}`, { as: learner })).body);
      }
      const drafts = await t.call('GET', '/api/courses?status=draft', { as: learner });
      expect(drafts.body.data.map((x: any) => x.id)).toEqual([teaching.id]);
      const page2 = await t.call('GET', '/api/courses?per_page=2&page=2', { as: learner });
      expect(page2.body.data.map((x: any) => x.title)).toEqual(['D Completed']);
      expect(page2.headers.get('link')).toContain('rel="prev"');
      expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
      const past = await t.call('GET', '/api/courses?per_page=2&page=3', { as: learner });
      expect(past.status).toBe(200);
      expect(past.body.data).toEqual([]);
      expect(past.body.pagination.total).toBe(3);
    });

    it('pages through many courses in title order at every page size, for members and admins', async () => {
      const member = await t.newUser();
      const owner = await t.newUser();
      const titles = Array.from({ length: 150 }, (_, i) => `Order ${String((i * 37) % 150).padStart(3, '0')}`);
      for (const title of titles) {
        const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title });
        insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: member.user.id });
      }
      const sorted = [...titles].sort();
      const pages = async (as: TestUser, perPage: number) => {
        const seen: string[] = [];
        for (let page = 1; ; page++) {
          const res = await t.call('GET', `/api/courses?per_page=${perPage}&page=${page}`, { as });
          expect(res.status).toBe(200);
          if (res.body.data.length === 0) return { seen, total: res.body.pagination.total };
          seen.push(...res.body.data.map((c: { title: string }) => c.title));
        }
      };
      for (const perPage of [100, 7]) {
        expect(await pages(member, perPage)).toEqual({ seen: sorted, total: 150 });
        const all = await pages(t.admin, perPage);
        expect(all.seen.length).toBe(all.total);
        expect(all.seen).toEqual([...all.seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        expect(all.seen.filter((title) => title.startsWith('Order '))).toEqual(sorted);
      }
    });

    it('lists every course of the tenant for admins, never another tenant’s', async () => {
      const mine = await t.call('GET', '/api/courses?per_page=100', { as: t.admin });
      const total = t.db.select().from(courses).where(eq(courses.tenantId, t.defaultTenantId)).all().filter((c) => !c.deletedAt).length;
      expect(mine.body.pagination.total).toBe(total);
      const first = mine.body.data[0];
      expect(first).toEqual((await t.call('GET', `/api/courses/${first.id}`, { as: t.admin })).body);
      const theirs = await t.call('GET', '/api/courses', { as: other.admin });
      expect(theirs.body.data.every((c: any) => c.slug !== 'intro-to-statistics')).toBe(true);
    });

    it('filters the admin list by status: every draft, or every published course, of the tenant and no other', async () => {
      const owner = await t.newUser();
      const draft = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'Admin filter draft', status: 'draft' });
      const published = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'Admin filter published' });
      const deleted = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title: 'Admin filter deleted', status: 'draft' });
      t.db.update(courses).set({ deletedAt: new Date().toISOString() }).where(eq(courses.id, deleted.id)).run();
      const foreign = insertCourse(t.db, { tenantId: other.tenantId, createdBy: other.admin.user.id, title: 'Admin filter foreign', status: 'draft' });

      const expected = (status: 'draft' | 'published') =>
        t.db
          .select()
          .from(courses)
          .where(and(eq(courses.tenantId, t.defaultTenantId), isNull(courses.deletedAt), eq(courses.status, status)))
          .all()
          .sort((x, y) => (x.title < y.title ? -1 : x.title > y.title ? 1 : x.id < y.id ? -1 : 1))
          .map((c) => c.id);
      const walk = async (query: string) => {
        const seen: any[] = [];
        let total = -1;
        for (let page = 1; ; page++) {
          const res = await t.call('GET', `/api/courses?${query ? `${query}&` : ''}per_page=100&page=${page}`, { as: t.admin });
          expect(res.status, res.text).toBe(200);
          total = res.body.pagination.total;
          if (res.body.data.length === 0) return { seen, total };
          seen.push(...res.body.data);
        }
      };

      const drafts = await walk('status=draft');
      const publishedOnes = await walk('status=published');
      const everything = await walk('');
      expect(drafts.seen.map((c) => c.id)).toEqual(expected('draft'));
      expect(drafts.total).toBe(expected('draft').length);
      expect(drafts.seen.every((c) => c.status === 'draft')).toBe(true);
      expect(publishedOnes.seen.map((c) => c.id)).toEqual(expected('published'));
      expect(publishedOnes.total).toBe(expected('published').length);
      expect(publishedOnes.seen.every((c) => c.status === 'published')).toBe(true);
      expect(drafts.total + publishedOnes.total).toBe(everything.total);

      expect(drafts.seen.map((c) => c.id)).toContain(draft.id);
      expect(publishedOnes.seen.map((c) => c.id)).not.toContain(draft.id);
      expect(publishedOnes.seen.map((c) => c.id)).toContain(published.id);
      expect(drafts.seen.map((c) => c.id)).not.toContain(published.id);
      for (const hidden of [deleted.id, foreign.id]) {
        expect(drafts.seen.map((c) => c.id)).not.toContain(hidden);
        expect(publishedOnes.seen.map((c) => c.id)).not.toContain(hidden);
      }
      // The filtered row is the same representation as the single read.
      const row = drafts.seen.find((c) => c.id === draft.id);
      expect(row).toEqual((await t.call('GET', `/api/courses/${draft.id}`, { as: t.admin })).body);
    });

    it('no longer lists a soft-deleted course to a member who was enrolled in it', async () => {
      const learner = await t.newUser();
      const kept = await create(teacher, { title: 'Member kept course' });
      const gone = await create(teacher, { title: 'Member gone course' });
      for (const course of [kept, gone]) {
        expect((await t.call('POST', `/api/courses/${course.id}/publish`, { as: teacher })).status).toBe(200);
        insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: learner.user.id });
      }
      const before = await t.call('GET', '/api/courses', { as: learner });
      expect(before.body.data.map((c: any) => c.id)).toEqual([gone.id, kept.id]);
      const teacherBefore = (await t.call('GET', '/api/courses?per_page=100', { as: teacher })).body;
      expect(teacherBefore.data.some((c: any) => c.id === gone.id)).toBe(true);

      expect((await t.call('DELETE', `/api/courses/${gone.id}`, { as: teacher })).status).toBe(204);

      const after = await t.call('GET', '/api/courses', { as: learner });
      expect(after.status).toBe(200);
      expect(after.body.data.map((c: any) => c.id)).toEqual([kept.id]);
      expect(after.body.pagination).toEqual({ page: 1, per_page: 100, total: 1, total_pages: 1 });
      const published = await t.call('GET', '/api/courses?status=published', { as: learner });
      expect(published.body.data.map((c: any) => c.id)).toEqual([kept.id]);
      expect(published.body.pagination.total).toBe(1);
      // The instructor who deleted it stops seeing it too.
      const teacherAfter = (await t.call('GET', '/api/courses?per_page=100', { as: teacher })).body;
      expect(teacherAfter.data.some((c: any) => c.id === gone.id)).toBe(false);
      expect(teacherAfter.pagination.total).toBe(teacherBefore.pagination.total - 1);
      // The learner's enrollment is kept, as the course is.
      const rows = t.db.select().from(enrollments).where(and(eq(enrollments.courseId, gone.id), eq(enrollments.userId, learner.user.id))).all();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.status).toBe('active');
    });

    it('rejects a bad status filter and per_page above 100 with 400, and no credential with 401', async () => {
      expect((await t.call('GET', '/api/courses?status=archived', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', '/api/courses?per_page=101', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', '/api/courses')).status).toBe(401);
    });
  });

  describe('update, publish, delete', () => {
    it('lets the instructor update title, slug and description', async () => {
      const course = await create(teacher, { title: 'Patch me' });
      const res = await t.call('PATCH', `/api/courses/${course.id}`, {
        as: teacher,
        body: { title: 'Patched', slug: 'patched-course', description: null },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ title: 'Patched', slug: 'patched-course', description: null });
      expect((await t.call('GET', '/api/courses/slug/patched-course', { as: teacher })).body.id).toBe(course.id);
    });

    it('answers 409 when the new slug is taken, 400 for an empty patch', async () => {
      const a = await create(teacher, { title: 'Slug A' });
      const b = await create(teacher, { title: 'Slug B' });
      const res = await t.call('PATCH', `/api/courses/${b.id}`, { as: teacher, body: { slug: a.slug } });
      expect(res.status).toBe(409);
      expect((await t.call('PATCH', `/api/courses/${b.id}`, { as: teacher, body: {} })).status).toBe(400);
    });

    it('forbids students and TAs of the course (403), hides it from other tenants (404)', async () => {
      const course = await create(teacher, { title: 'Guarded' });
      const ta = await t.newUser();
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: student.user.id });
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: ta.user.id, role: 'ta' });
      for (const who of [student, ta]) {
        const res = await t.call('PATCH', `/api/courses/${course.id}`, { as: who, body: { title: 'Hijack' } });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('forbidden');
        expect((await t.call('POST', `/api/courses/${course.id}/publish`, { as: who })).status).toBe(403);
        expect((await t.call('DELETE', `/api/courses/${course.id}`, { as: who })).status).toBe(403);
      }
      expect((await t.call('PATCH', `/api/courses/${course.id}`, { as: other.admin, body: { title: 'x' } })).status).toBe(404);
      expect((await t.call('POST', `/api/courses/${course.id}/publish`, { as: other.admin })).status).toBe(404);
      expect((await t.call('DELETE', `/api/courses/${course.id}`, { as: other.admin })).status).toBe(404);
      // A published course is readable by any tenant member, but still not theirs to change.
      await t.call('POST', `/api/courses/${course.id}/publish`, { as: teacher });
      expect((await t.call('PATCH', `/api/courses/${course.id}`, { as: outsider, body: { title: 'x' } })).status).toBe(403);
    });

    it('lets an admin change any course of the tenant', async () => {
      const course = await create(teacher, { title: 'Admin edits' });
      expect((await t.call('PATCH', `/api/courses/${course.id}`, { as: t.admin, body: { title: 'Edited' } })).status).toBe(200);
      expect((await t.call('POST', `/api/courses/${course.id}/publish`, { as: t.admin })).status).toBe(200);
    });

    it('publishes a draft once; publishing again is 409', async () => {
      const course = await create(teacher, { title: 'Publish me' });
      const first = await t.call('POST', `/api/courses/${course.id}/publish`, { as: teacher });
      expect(first.status).toBe(200);
      expect(first.body.status).toBe('published');
      expect(first.body.published_at).toBe(t.clock.now().toISOString());
      const again = await t.call('POST', `/api/courses/${course.id}/publish`, { as: teacher });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');
      expect((await t.call('POST', '/api/courses/nope/publish', { as: teacher })).status).toBe(400);
    });

    it('answers 400 for a malformed id on PATCH and DELETE, and changes no course', async () => {
      const before = t.db.select().from(courses).all();
      const patch = await t.call('PATCH', '/api/courses/bad', { as: teacher, body: { title: 'Renamed' } });
      expectProblem(patch, 400, 'validation_failed');
      expect(patch.body.errors[0].path).toBe('id');
      const del = await t.call('DELETE', '/api/courses/bad', { as: t.admin });
      expectProblem(del, 400, 'validation_failed');
      expect(del.body.errors[0].path).toBe('id');
      expect(t.db.select().from(courses).all()).toEqual(before);
    });

    it('answers 401 with WWW-Authenticate without a credential, and changes nothing', async () => {
      const course = await create(teacher, { title: 'Anonymous target', slug: 'anonymous-target' });
      const before = t.db.select().from(courses).where(eq(courses.id, course.id)).get();
      const attempts: [string, string, unknown?][] = [
        ['GET', '/api/courses/slug/anonymous-target'],
        ['PATCH', `/api/courses/${course.id}`, { title: 'Hijacked' }],
        ['DELETE', `/api/courses/${course.id}`],
        ['POST', `/api/courses/${course.id}/publish`],
      ];
      for (const [method, path, body] of attempts) {
        for (const as of [undefined, 'not-a-credential']) {
          const res = await t.call(method, path, { as, body });
          expectUnauthorized(res, `${method} ${path} as ${as}`);
        }
      }
      expect(t.db.select().from(courses).where(eq(courses.id, course.id)).get()).toEqual(before);
      expect(before).toMatchObject({ title: 'Anonymous target', status: 'draft', deletedAt: null });
    });

    it('soft deletes: 204, hidden from lookups and lists, kept in the database, slug free again', async () => {
      const course = await create(teacher, { title: 'Delete me', slug: 'delete-me' });
      const res = await t.call('DELETE', `/api/courses/${course.id}`, { as: teacher });
      expect(res.status).toBe(204);
      expect((await t.call('GET', `/api/courses/${course.id}`, { as: teacher })).status).toBe(404);
      expect((await t.call('GET', '/api/courses/slug/delete-me', { as: t.admin })).status).toBe(404);
      expect((await t.call('PATCH', `/api/courses/${course.id}`, { as: teacher, body: { title: 'x' } })).status).toBe(404);
      expect((await t.call('DELETE', `/api/courses/${course.id}`, { as: teacher })).status).toBe(404);
      const list = await t.call('GET', '/api/courses?per_page=100', { as: t.admin });
      expect(list.body.data.some((c: any) => c.id === course.id)).toBe(false);
      const row = t.db.select().from(courses).where(eq(courses.id, course.id)).get();
      expect(row?.deletedAt).toBe(t.clock.now().toISOString());
      const reuse = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Again', slug: 'delete-me' } });
      expect(reuse.status).toBe(201);
    });
  });
});
