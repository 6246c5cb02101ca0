import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { courses, enrollments, users } from '../db/schema';
import { newId } from '../src/lib/ids';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertEnrollment } from './helpers/courses';

describe('enrollments', () => {
  let t: TestApp;
  let teacher: TestUser;
  let other: { tenantId: string; admin: TestUser };

  beforeAll(async () => {
    t = await makeTestApp();
    teacher = await t.newUser({ name: 'Teacher' });
    other = await t.newTenant('enrol-other');
  });
  afterAll(() => t.close());

  /** A course of the teacher's, published and open to self-enrolment unless said otherwise (test/enrollment-policy.test.ts tests the policy). */
  async function newCourse(opts: { publish?: boolean } = {}): Promise<string> {
    const res = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Enrolment course' } });
    expect(res.status).toBe(201);
    const open = await t.call('PATCH', `/api/courses/${res.body.id}`, { as: teacher, body: { enrollment: { self_enroll: 'open' } } });
    expect(open.status, open.text).toBe(200);
    if (opts.publish ?? true) expect((await t.call('POST', `/api/courses/${res.body.id}/publish`, { as: teacher })).status).toBe(200);
    return res.body.id;
  }
  const enrol = (courseId: string, as: TestUser, body?: Record<string, unknown>) =>
    t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { as, body });

  /** Users inserted directly: fast setup for large classes. */
  function insertUsers(count: number, tenantId = t.defaultTenantId): string[] {
    const now = new Date().toISOString();
    const rows = Array.from({ length: count }, (_, i) => ({
      id: newId(),
      tenantId,
      email: `bulk-${newId()}-${i}@example.com`,
      name: `Bulk ${i}`,
      createdAt: now,
      updatedAt: now,
    }));
    for (let i = 0; i < rows.length; i += 500) t.db.insert(users).values(rows.slice(i, i + 500)).run();
    return rows.map((r) => r.id);
  }

  describe('enrol', () => {
    it('lets a member enrol themselves as a student in a published course open to it (201, Location)', async () => {
      const courseId = await newCourse();
      const learner = await t.newUser({ name: 'Learner' });
      const res = await enrol(courseId, learner);
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/api/enrollments/${res.body.id}`);
      expect(res.body).toMatchObject({
        course_id: courseId,
        user_id: learner.user.id,
        role: 'student',
        status: 'active',
        completed_at: null,
        dropped_at: null,
        user: { id: learner.user.id, name: 'Learner', email: learner.user.email },
      });
      const again = await enrol(courseId, learner, {});
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');
    });

    it('refuses self-enrolment in a draft (404 to outsiders), with a staff role (403), or on behalf of others (403)', async () => {
      const draft = await newCourse({ publish: false });
      const learner = await t.newUser();
      expect((await enrol(draft, learner)).status).toBe(404);
      const published = await newCourse();
      const asTa = await enrol(published, learner, { role: 'ta' });
      expect(asTa.status).toBe(403);
      expect(asTa.body.code).toBe('forbidden');
      const friend = await t.newUser();
      expect((await enrol(published, learner, { user_id: friend.user.id })).status).toBe(403);
      // A student of the course is still not allowed to enrol others.
      expect((await enrol(published, learner)).status).toBe(201);
      expect((await enrol(published, learner, { user_id: friend.user.id })).status).toBe(403);
    });

    it('lets instructors and admins enrol others with any role, even into a draft', async () => {
      const draft = await newCourse({ publish: false });
      const ta = await t.newUser();
      const res = await enrol(draft, teacher, { user_id: ta.user.id, role: 'ta' });
      expect(res.status).toBe(201);
      expect(res.body.role).toBe('ta');
      const coTeacher = await t.newUser();
      const byAdmin = await enrol(draft, t.admin, { user_id: coTeacher.user.id, role: 'instructor' });
      expect(byAdmin.status).toBe(201);
      // The new instructor may now change the course.
      expect((await t.call('PATCH', `/api/courses/${draft}`, { as: coTeacher, body: { title: 'Co-taught' } })).status).toBe(200);
      // A TA is staff but not an instructor: no enrolling others.
      const someone = await t.newUser();
      expect((await enrol(draft, ta, { user_id: someone.user.id })).status).toBe(403);
    });

    it('answers 404 for unknown or other-tenant users and courses, 422 for a deleted user, 400 for bad input', async () => {
      const courseId = await newCourse();
      expect((await enrol(courseId, teacher, { user_id: MISSING_ID })).status).toBe(404);
      expect((await enrol(courseId, teacher, { user_id: other.admin.user.id })).status).toBe(404);
      expect((await enrol(courseId, other.admin)).status).toBe(404);
      expect((await enrol(MISSING_ID, teacher)).status).toBe(404);
      const gone = await t.newUser();
      t.db.update(users).set({ deletedAt: new Date().toISOString() }).where(eq(users.id, gone.user.id)).run();
      const deleted = await enrol(courseId, teacher, { user_id: gone.user.id });
      expect(deleted.status).toBe(422);
      expect(deleted.body.errors[0].path).toBe('user_id');
      expect((await enrol(courseId, teacher, { user_id: 'nope' })).status).toBe(400);
      expect((await enrol(courseId, teacher, { role: 'owner' })).status).toBe(400);
      expect((await t.call('POST', '/api/enrollments/course/nope/enroll', { as: teacher })).status).toBe(400);
      expect((await t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { body: {} })).status).toBe(401);
    });
  });

  describe('lifecycle', () => {
    it('drops, reactivates with the same id, completes; illegal moves are 409', async () => {
      const courseId = await newCourse();
      const learner = await t.newUser();
      const created = (await enrol(courseId, teacher, { user_id: learner.user.id })).body;

      t.clock.advance(60_000);
      const dropped = await t.call('POST', `/api/enrollments/${created.id}/drop`, { as: teacher });
      expect(dropped.status).toBe(200);
      expect(dropped.body).toMatchObject({ status: 'dropped', dropped_at: t.clock.now().toISOString() });
      expect((await t.call('POST', `/api/enrollments/${created.id}/drop`, { as: teacher })).status).toBe(409);
      const completeDropped = await t.call('POST', `/api/enrollments/${created.id}/complete`, { as: teacher });
      expect(completeDropped.status).toBe(409);
      expect(completeDropped.body.detail).toContain('dropped');

      const back = await enrol(courseId, teacher, { user_id: learner.user.id, role: 'ta' });
      expect(back.status).toBe(200);
      expect(back.body).toMatchObject({ id: created.id, status: 'active', role: 'ta', dropped_at: null });
      expect(t.db.select().from(enrollments).where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, learner.user.id))).all()).toHaveLength(1);

      t.clock.advance(60_000);
      const completed = await t.call('POST', `/api/enrollments/${created.id}/complete`, { as: teacher });
      expect(completed.status).toBe(200);
      expect(completed.body).toMatchObject({ status: 'completed', completed_at: t.clock.now().toISOString() });
      expect((await t.call('POST', `/api/enrollments/${created.id}/complete`, { as: teacher })).status).toBe(409);
      expect((await t.call('POST', `/api/enrollments/${created.id}/drop`, { as: teacher })).status).toBe(409);
      expect((await enrol(courseId, teacher, { user_id: learner.user.id })).status).toBe(409);
    });

    it('lets a student drop their own enrollment but not complete it, nor touch anyone else’s', async () => {
      const courseId = await newCourse();
      const learner = await t.newUser();
      const peer = await t.newUser();
      const mine = (await enrol(courseId, learner)).body;
      const theirs = (await enrol(courseId, peer)).body;
      const complete = await t.call('POST', `/api/enrollments/${mine.id}/complete`, { as: learner });
      expect(complete.status).toBe(403);
      expect(complete.body.code).toBe('forbidden');
      expect((await t.call('POST', `/api/enrollments/${theirs.id}/drop`, { as: learner })).status).toBe(404);
      expect((await t.call('POST', `/api/enrollments/${mine.id}/drop`, { as: learner })).body.status).toBe('dropped');
      // Dropped: the self-enrolment path brings it back.
      expect((await enrol(courseId, learner)).body.id).toBe(mine.id);
    });

    it('keeps the last active instructor (409) and revokes cached access when an instructor is dropped', async () => {
      const courseId = await newCourse();
      const own = (await t.call('GET', `/api/enrollments/course/${courseId}/user/${teacher.user.id}`, { as: teacher })).body;
      const last = await t.call('POST', `/api/enrollments/${own.id}/drop`, { as: teacher });
      expect(last.status).toBe(409);
      expect((await t.call('POST', `/api/enrollments/${own.id}/complete`, { as: t.admin })).status).toBe(409);

      const co = await t.newUser();
      const coEnrollment = (await enrol(courseId, teacher, { user_id: co.user.id, role: 'instructor' })).body;
      const revoke = vi.spyOn(t.deps.auth, 'narrowed');
      try {
        const res = await t.call('POST', `/api/enrollments/${coEnrollment.id}/drop`, { as: teacher });
        expect(res.status).toBe(200);
        expect(revoke).toHaveBeenCalled();
      } finally {
        revoke.mockRestore();
      }
      expect((await t.call('PATCH', `/api/courses/${courseId}`, { as: co, body: { title: 'no longer' } })).status).toBe(403);
    });

    it('answers 400 for malformed ids, 404 across tenants and for unknown ids, 401 without credential', async () => {
      const courseId = await newCourse();
      const learner = await t.newUser();
      const e = (await enrol(courseId, learner)).body;
      for (const action of ['complete', 'drop']) {
        expect((await t.call('POST', `/api/enrollments/nope/${action}`, { as: teacher })).status).toBe(400);
        expect((await t.call('POST', `/api/enrollments/${MISSING_ID}/${action}`, { as: teacher })).status).toBe(404);
        expect((await t.call('POST', `/api/enrollments/${e.id}/${action}`, { as: other.admin })).status).toBe(404);
        expect((await t.call('POST', `/api/enrollments/${e.id}/${action}`)).status).toBe(401);
      }
    });
  });

  describe('read', () => {
    let courseId: string;
    let learner: TestUser;
    let peer: TestUser;
    let ta: TestUser;
    let mine: any;

    beforeAll(async () => {
      courseId = await newCourse();
      learner = await t.newUser();
      peer = await t.newUser();
      ta = await t.newUser();
      mine = (await enrol(courseId, learner)).body;
      await enrol(courseId, peer);
      await enrol(courseId, teacher, { user_id: ta.user.id, role: 'ta' });
    });

    it('shows an enrollment to its user, the course staff and admins; 404 to anyone else', async () => {
      for (const who of [learner, teacher, ta, t.admin]) {
        const res = await t.call('GET', `/api/enrollments/${mine.id}`, { as: who });
        expect(res.status).toBe(200);
        expect(res.body.id).toBe(mine.id);
      }
      expect((await t.call('GET', `/api/enrollments/${mine.id}`, { as: peer })).status).toBe(404);
      expect((await t.call('GET', `/api/enrollments/${mine.id}`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', '/api/enrollments/nope', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', `/api/enrollments/${MISSING_ID}`, { as: teacher })).status).toBe(404);
      expect((await t.call('GET', `/api/enrollments/${mine.id}`)).status).toBe(401);
    });

    it('looks up by course and user: self, or anyone for staff (403 for a student asking about a peer)', async () => {
      const path = (u: string) => `/api/enrollments/course/${courseId}/user/${u}`;
      expect((await t.call('GET', path(learner.user.id), { as: learner })).body.id).toBe(mine.id);
      expect((await t.call('GET', path(learner.user.id), { as: ta })).body.id).toBe(mine.id);
      expect((await t.call('GET', path(learner.user.id), { as: peer })).status).toBe(403);
      const stranger = await t.newUser();
      expect((await t.call('GET', path(stranger.user.id), { as: teacher })).status).toBe(404);
      expect((await t.call('GET', path(learner.user.id), { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', `/api/enrollments/course/${courseId}/user/nope`, { as: teacher })).status).toBe(400);
      expect((await t.call('GET', path(learner.user.id))).status).toBe(401);
    });

    it('answers 404 for an unknown course in the lookup by course and user', async () => {
      for (const [who, userId] of [[learner, learner.user.id], [teacher, learner.user.id], [t.admin, learner.user.id]] as const) {
        const res = await t.call('GET', `/api/enrollments/course/${MISSING_ID}/user/${userId}`, { as: who });
        expectProblem(res, 404, 'not_found');
      }
    });

    it('reports progress as 0 of 0 with every module at 0 until activities exist', async () => {
      const m1 = (await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: 'One' } })).body;
      const m2 = (await t.call('POST', `/api/courses/${courseId}/modules`, { as: teacher, body: { title: 'Two' } })).body;
      const res = await t.call('GET', `/api/enrollments/${mine.id}/progress`, { as: learner });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        enrollment_id: mine.id,
        percent: 0,
        completed: 0,
        total_required: 0,
        xp: 0,
        last_activity_at: null,
        modules: [
          { module_id: m1.id, percent: 0 },
          { module_id: m2.id, percent: 0 },
        ],
      });
      expect((await t.call('GET', `/api/enrollments/${mine.id}/progress`, { as: teacher })).status).toBe(200);
      expect((await t.call('GET', `/api/enrollments/${mine.id}/progress`, { as: peer })).status).toBe(404);
      expect((await t.call('GET', `/api/enrollments/${mine.id}/progress`, { as: other.admin })).status).toBe(404);
      expect((await t.call('GET', '/api/enrollments/nope/progress', { as: learner })).status).toBe(400);
      expect((await t.call('GET', `/api/enrollments/${mine.id}/progress`)).status).toBe(401);
    });
  });

  describe('list', () => {
    let courseA: string;
    let courseB: string;
    let learner: TestUser;
    let ta: TestUser;

    beforeAll(async () => {
      courseA = await newCourse();
      courseB = await newCourse();
      learner = await t.newUser();
      ta = await t.newUser();
      await enrol(courseA, learner);
      await enrol(courseB, learner);
      await enrol(courseA, teacher, { user_id: ta.user.id, role: 'ta' });
      for (let i = 0; i < 3; i++) {
        t.clock.advance(1000);
        await enrol(courseA, await t.newUser());
      }
    });

    it('shows a student only their own enrollments, whatever the filters', async () => {
      const all = await t.call('GET', '/api/enrollments', { as: learner });
      expect(all.status).toBe(200);
      expect(all.body.data.map((e: any) => e.course_id).sort()).toEqual([courseA, courseB].sort());
      expect(all.body.data.every((e: any) => e.user_id === learner.user.id)).toBe(true);
      const inA = await t.call('GET', `/api/enrollments?course_id=${courseA}`, { as: learner });
      expect(inA.body.data).toHaveLength(1);
      expect(inA.body.pagination.total).toBe(1);
      const peers = await t.call('GET', `/api/enrollments?user_id=${ta.user.id}`, { as: learner });
      expect(peers.body.data).toEqual([]);
    });

    it("shows instructors and TAs their course's roster in enrolment order, with filters and pages", async () => {
      for (const who of [teacher, ta]) {
        const res = await t.call('GET', `/api/enrollments?course_id=${courseA}`, { as: who });
        expect(res.body.pagination.total).toBe(6);
        const times = res.body.data.map((e: any) => e.enrolled_at);
        expect([...times].sort()).toEqual(times);
      }
      // A roster row is the same representation as the single read.
      const roster = await t.call('GET', `/api/enrollments?course_id=${courseA}`, { as: teacher });
      for (const row of roster.body.data) {
        expect(row).toEqual((await t.call('GET', `/api/enrollments/${row.id}`, { as: teacher })).body);
      }
      const students = await t.call('GET', `/api/enrollments?course_id=${courseA}&role=student`, { as: ta });
      expect(students.body.pagination.total).toBe(4);
      const page = await t.call('GET', `/api/enrollments?course_id=${courseA}&per_page=4&page=2`, { as: teacher });
      expect(page.body.data).toHaveLength(2);
      expect(page.body.pagination).toEqual({ page: 2, per_page: 4, total: 6, total_pages: 2 });
      expect(page.headers.get('link')).toContain('rel="first"');
      const oneUser = await t.call('GET', `/api/enrollments?course_id=${courseA}&user_id=${learner.user.id}`, { as: teacher });
      expect(oneUser.body.data.map((e: any) => e.user_id)).toEqual([learner.user.id]);

      // Without a course filter: the TA sees their own and course A's, not course B's other members.
      const taView = await t.call('GET', '/api/enrollments?per_page=100', { as: ta });
      expect(taView.body.data.every((e: any) => e.course_id === courseA)).toBe(true);
      expect(taView.body.pagination.total).toBe(6);
    });

    it('pages through a small roster with the same rows in the same order at every page size', async () => {
      const full: string[] = (await t.call('GET', `/api/enrollments?course_id=${courseA}`, { as: teacher })).body.data.map((e: any) => e.id);
      expect(full).toHaveLength(6);
      // Every page size, every page, and one past the end.
      for (const perPage of [1, 2, 4, 5, 6]) {
        const totalPages = Math.ceil(full.length / perPage);
        const seen: string[] = [];
        for (let page = 1; page <= totalPages + 1; page++) {
          const res = await t.call('GET', `/api/enrollments?course_id=${courseA}&per_page=${perPage}&page=${page}`, { as: teacher });
          expect(res.status).toBe(200);
          expect(res.body.pagination).toEqual({ page, per_page: perPage, total: 6, total_pages: totalPages });
          if (page > totalPages) expect(res.body.data).toEqual([]);
          seen.push(...res.body.data.map((e: any) => e.id));
        }
        expect(seen).toEqual(full);
      }
      // Filtered rosters (counted rather than read from the counts) page the same way.
      const students: string[] = (await t.call('GET', `/api/enrollments?course_id=${courseA}&role=student`, { as: teacher })).body.data.map((e: any) => e.id);
      const lastPage = await t.call('GET', `/api/enrollments?course_id=${courseA}&role=student&per_page=3&page=2`, { as: teacher });
      expect(lastPage.body.data.map((e: any) => e.id)).toEqual(students.slice(3));
    });

    it('pages deep into a large roster from remembered positions, and sees every change to it', async () => {
      const courseId = await newCourse();
      const people = insertUsers(330);
      // Direct inserts in one millisecond or a few: many equal enrolled_at, ordered by id.
      for (const userId of people) insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId });
      const expected = (status?: string) =>
        t.db
          .select({ id: enrollments.id, status: enrollments.status, enrolledAt: enrollments.enrolledAt })
          .from(enrollments)
          .where(eq(enrollments.courseId, courseId))
          .all()
          .filter((r) => !status || r.status === status)
          .sort((x, y) => (x.enrolledAt < y.enrolledAt ? -1 : x.enrolledAt > y.enrolledAt ? 1 : x.id < y.id ? -1 : 1))
          .map((r) => r.id);
      const pageOf = async (page: number, perPage: number, query = '') => {
        const res = await t.call('GET', `/api/enrollments?course_id=${courseId}&per_page=${perPage}&page=${page}${query}`, { as: teacher });
        expect(res.status).toBe(200);
        return res.body.data.map((e: any) => e.id) as string[];
      };
      const walk = async (perPage: number, query = '') => {
        const seen: string[] = [];
        for (let page = 1; ; page++) {
          const ids = await pageOf(page, perPage, query);
          if (ids.length === 0) return seen;
          seen.push(...ids);
        }
      };
      // Forwards at sizes that start on, and between, the remembered positions (every 100th).
      for (const perPage of [100, 7, 33]) expect(await walk(perPage)).toEqual(expected());
      // A deep page first, with nothing remembered yet for this size's neighbours.
      expect(await pageOf(3, 100, '&status=active')).toEqual(expected('active').slice(200, 300));
      expect(await pageOf(46, 7)).toEqual(expected().slice(315, 322));

      // Each change reaches the pages after it, whoever writes it.
      const checkDeepPages = async () => {
        for (const [page, perPage] of [[2, 100], [3, 100], [4, 100], [30, 10]] as const) {
          expect(await pageOf(page, perPage)).toEqual(expected().slice((page - 1) * perPage, page * perPage));
          expect(await pageOf(page, perPage, '&status=active')).toEqual(expected('active').slice((page - 1) * perPage, page * perPage));
        }
      };
      const ids = expected();
      // Dropped through the API: leaves the active list, stays in the whole roster.
      expect((await t.call('POST', `/api/enrollments/${ids[150]}/drop`, { as: teacher })).status).toBe(200);
      await checkDeepPages();
      // Moved to the front by a direct write (its role and status unchanged).
      t.db.update(enrollments).set({ enrolledAt: '2000-01-01T00:00:00.000Z' }).where(eq(enrollments.id, ids[250]!)).run();
      expect(expected()[0]).toBe(ids[250]);
      await checkDeepPages();
      // Deleted directly, and a new enrollment through the API.
      t.db.delete(enrollments).where(eq(enrollments.id, ids[120]!)).run();
      expect((await enrol(courseId, teacher, { user_id: insertUsers(1)[0] })).status).toBe(201);
      await checkDeepPages();
      expect(await walk(100)).toEqual(expected());
    });

    it('lists without a course filter in the same representation as the single read', async () => {
      const res = await t.call('GET', '/api/enrollments', { as: ta });
      expect(res.body.data.length).toBeGreaterThan(0);
      for (const row of res.body.data) {
        expect(row).toEqual((await t.call('GET', `/api/enrollments/${row.id}`, { as: ta })).body);
      }
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('filters by status', async () => {
      const quitter = await t.newUser();
      const e = (await enrol(courseA, quitter)).body;
      await t.call('POST', `/api/enrollments/${e.id}/drop`, { as: quitter });
      const dropped = await t.call('GET', `/api/enrollments?course_id=${courseA}&status=dropped`, { as: teacher });
      expect(dropped.body.data.map((x: any) => x.id)).toEqual([e.id]);
      const active = await t.call('GET', `/api/enrollments?course_id=${courseA}&status=active`, { as: teacher });
      expect(active.body.data.some((x: any) => x.id === e.id)).toBe(false);
    });

    it('shows admins every enrollment of the tenant and nothing of another tenant', async () => {
      const res = await t.call('GET', `/api/enrollments?user_id=${learner.user.id}`, { as: t.admin });
      expect(res.body.pagination.total).toBe(2);
      const cross = await t.call('GET', `/api/enrollments?course_id=${courseA}`, { as: other.admin });
      expect(cross.status).toBe(200);
      expect(cross.body.data).toEqual([]);
      const theirs = await t.call('GET', '/api/enrollments', { as: other.admin });
      expect(theirs.body.data.every((e: any) => e.course_id !== courseA && e.course_id !== courseB)).toBe(true);
    });

    it('hides enrollments of deleted courses', async () => {
      const gone = await newCourse();
      const e = (await enrol(gone, learner)).body;
      expect((await t.call('DELETE', `/api/courses/${gone}`, { as: teacher })).status).toBe(204);
      const res = await t.call('GET', '/api/enrollments', { as: learner });
      expect(res.body.data.some((x: any) => x.id === e.id)).toBe(false);
      expect((await t.call('GET', `/api/enrollments/${e.id}`, { as: learner })).status).toBe(404);
    });

    it('keeps roster totals right through enrol, drop, reactivate, complete, bulk and direct writes', async () => {
      const courseId = await newCourse();
      const [a, b, c] = insertUsers(3);
      const ea = (await enrol(courseId, teacher, { user_id: a })).body;
      await t.call('POST', `/api/enrollments/course/${courseId}/bulk-enroll`, { as: teacher, body: { user_ids: [b, c], role: 'ta' } });
      await t.call('POST', `/api/enrollments/${ea.id}/drop`, { as: teacher });
      await enrol(courseId, teacher, { user_id: a, role: 'ta' });
      await t.call('POST', `/api/enrollments/${ea.id}/complete`, { as: teacher });
      const direct = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: insertUsers(1)[0]! });
      t.db.delete(enrollments).where(eq(enrollments.id, direct.id)).run();
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: insertUsers(1)[0]! });

      const rows = t.db.select().from(enrollments).where(eq(enrollments.courseId, courseId)).all();
      const total = async (query: string) =>
        (await t.call('GET', `/api/enrollments?course_id=${courseId}${query}`, { as: teacher })).body.pagination.total;
      expect(await total('')).toBe(rows.length);
      for (const status of ['active', 'completed', 'dropped'] as const) {
        expect(await total(`&status=${status}`)).toBe(rows.filter((r) => r.status === status).length);
        for (const role of ['instructor', 'ta', 'student'] as const) {
          expect(await total(`&status=${status}&role=${role}`)).toBe(rows.filter((r) => r.status === status && r.role === role).length);
        }
      }
      expect(await total('&role=ta')).toBe(3);
      expect(await total('&status=completed')).toBe(1);
    });

    /** Every enrollment id the caller sees for `query`, walking the pages; and the reported total. */
    async function listAll(as: TestUser, query = '') {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const res = await t.call('GET', `/api/enrollments?${query ? `${query}&` : ''}per_page=100&page=${page}`, { as });
        expect(res.status, res.text).toBe(200);
        if (res.body.data.length === 0) return { ids: seen, total: res.body.pagination.total as number };
        seen.push(...res.body.data.map((e: any) => e.id));
      }
    }
    /** The tenant's enrollments in live courses, in enrolment order, from the database. */
    const tenantEnrollments = (where?: (r: typeof enrollments.$inferSelect) => boolean) =>
      t.db
        .select({ e: enrollments })
        .from(enrollments)
        .innerJoin(courses, eq(courses.id, enrollments.courseId))
        .where(and(eq(enrollments.tenantId, t.defaultTenantId), isNull(courses.deletedAt)))
        .all()
        .map((r) => r.e)
        .filter((r) => !where || where(r))
        .sort((x, y) => (x.enrolledAt < y.enrolledAt ? -1 : x.enrolledAt > y.enrolledAt ? 1 : x.id < y.id ? -1 : 1))
        .map((r) => r.id);

    it('gives an admin the roster of a course the admin is not enrolled in', async () => {
      const courseId = await newCourse();
      const [a, b] = [await t.newUser(), await t.newUser()];
      await enrol(courseId, a);
      t.clock.advance(1000);
      await enrol(courseId, b);
      expect(t.db.select().from(enrollments).where(and(eq(enrollments.courseId, courseId), eq(enrollments.userId, t.admin.user.id))).all()).toEqual([]);

      const res = await t.call('GET', `/api/enrollments?course_id=${courseId}`, { as: t.admin });
      expect(res.status).toBe(200);
      expect(res.body.data.map((e: any) => e.user_id)).toEqual([teacher.user.id, a.user.id, b.user.id]);
      expect(res.body.data.map((e: any) => e.role)).toEqual(['instructor', 'student', 'student']);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 3, total_pages: 1 });
      expect(res.body).toEqual((await t.call('GET', `/api/enrollments?course_id=${courseId}`, { as: teacher })).body);
    });

    it('shows an admin without filters every enrollment of the tenant, other users’ included', async () => {
      const courseId = await newCourse();
      const someone = await t.newUser();
      const theirs = (await enrol(courseId, someone)).body;
      const all = await listAll(t.admin);
      expect(all.ids).toEqual(tenantEnrollments());
      expect(all.total).toBe(all.ids.length);
      expect(all.ids).toContain(theirs.id);
      const ownerIds = new Set(t.db.select({ userId: enrollments.userId }).from(enrollments).where(inArray(enrollments.id, all.ids)).all().map((r) => r.userId));
      expect(ownerIds.has(t.admin.user.id)).toBe(false);
      expect(ownerIds.has(someone.user.id)).toBe(true);
    });

    it('filters by status without a course: a student their own, staff their courses’, an admin the tenant’s', async () => {
      const taught = await newCourse();
      const elsewhere = await newCourse();
      const helper = await t.newUser();
      const [dropper, stayer, finisher] = [await t.newUser(), await t.newUser(), await t.newUser()];
      const helperEnrollment = (await enrol(taught, teacher, { user_id: helper.user.id, role: 'ta' })).body;
      const dropped = (await enrol(taught, dropper)).body;
      const active = (await enrol(taught, stayer)).body;
      const completed = (await enrol(taught, finisher)).body;
      const droppedElsewhere = (await enrol(elsewhere, dropper)).body;
      expect((await t.call('POST', `/api/enrollments/${dropped.id}/drop`, { as: dropper })).status).toBe(200);
      expect((await t.call('POST', `/api/enrollments/${droppedElsewhere.id}/drop`, { as: dropper })).status).toBe(200);
      expect((await t.call('POST', `/api/enrollments/${completed.id}/complete`, { as: teacher })).status).toBe(200);
      const instructorOfTaught = (await t.call('GET', `/api/enrollments/course/${taught}/user/${teacher.user.id}`, { as: teacher })).body;

      // The TA of `taught` only: its enrollments of that status, nothing of `elsewhere`.
      expect((await listAll(helper, 'status=dropped')).ids).toEqual([dropped.id]);
      expect((await listAll(helper, 'status=completed')).ids).toEqual([completed.id]);
      expect((await listAll(helper, 'status=active')).ids).toEqual([instructorOfTaught.id, helperEnrollment.id, active.id]);
      // A student: their own of that status, in both courses.
      expect((await listAll(dropper, 'status=dropped')).ids).toEqual([dropped.id, droppedElsewhere.id]);
      expect((await listAll(dropper, 'status=active')).ids).toEqual([]);
      expect((await listAll(stayer, 'status=dropped')).ids).toEqual([]);
      // An admin: every enrollment of that status in the tenant.
      for (const status of ['active', 'completed', 'dropped'] as const) {
        const res = await listAll(t.admin, `status=${status}`);
        expect(res.ids).toEqual(tenantEnrollments((r) => r.status === status));
        expect(res.total).toBe(res.ids.length);
      }
      const adminDropped = (await listAll(t.admin, 'status=dropped')).ids;
      expect(adminDropped).toEqual(expect.arrayContaining([dropped.id, droppedElsewhere.id]));
    });

    it('shows an instructor only their own enrollment in a course they do not teach, never its roster', async () => {
      const otherTeacher = await t.newUser();
      const own = (await t.call('POST', '/api/courses', { as: otherTeacher, body: { title: 'Not taught by teacher' } })).body;
      expect((await t.call('POST', `/api/courses/${own.id}/publish`, { as: otherTeacher })).status).toBe(200);
      expect((await t.call('PATCH', `/api/courses/${own.id}`, { as: otherTeacher, body: { enrollment: { self_enroll: 'open' } } })).status).toBe(200);
      const draft = (await t.call('POST', '/api/courses', { as: otherTeacher, body: { title: 'Draft not taught' } })).body;
      const members = [await t.newUser(), await t.newUser()];
      for (const m of members) {
        await enrol(own.id, m);
        await enrol(draft.id, otherTeacher, { user_id: m.user.id });
      }
      // `teacher` teaches other courses, but holds nothing in these two.
      for (const courseId of [own.id, draft.id]) {
        for (const query of ['', '&status=active', '&role=student', `&user_id=${members[0]!.user.id}`, `&user_id=${otherTeacher.user.id}`]) {
          const res = await t.call('GET', `/api/enrollments?course_id=${courseId}${query}`, { as: teacher });
          expect(res.status).toBe(200);
          expect(res.body.data).toEqual([]);
          expect(res.body.pagination.total).toBe(0);
        }
      }
      // Enrolled as a student in `own`: exactly their own row, whatever the filters.
      const mine = (await enrol(own.id, teacher)).body;
      for (const query of ['', '&role=student', '&status=active', `&user_id=${teacher.user.id}`]) {
        const res = await t.call('GET', `/api/enrollments?course_id=${own.id}${query}`, { as: teacher });
        expect(res.body.data.map((e: any) => e.id)).toEqual([mine.id]);
        expect(res.body.pagination.total).toBe(1);
      }
      for (const query of ['&role=instructor', '&status=dropped', `&user_id=${members[1]!.user.id}`]) {
        const res = await t.call('GET', `/api/enrollments?course_id=${own.id}${query}`, { as: teacher });
        expect(res.body.data).toEqual([]);
        expect(res.body.pagination.total).toBe(0);
      }
      // The course's own instructor sees the whole roster.
      expect((await t.call('GET', `/api/enrollments?course_id=${own.id}`, { as: otherTeacher })).body.pagination.total).toBe(4);
    });

    it('lets an instructor or TA look up a user across courses only where they teach', async () => {
      const lead = await t.newUser();
      const assistant = await t.newUser();
      const otherLead = await t.newUser();
      const pupil = await t.newUser();
      const taught = (await t.call('POST', '/api/courses', { as: lead, body: { title: 'Taught by lead' } })).body;
      const foreign = (await t.call('POST', '/api/courses', { as: otherLead, body: { title: 'Taught by other lead' } })).body;
      expect((await t.call('POST', `/api/courses/${taught.id}/publish`, { as: lead })).status).toBe(200);
      expect((await t.call('POST', `/api/courses/${foreign.id}/publish`, { as: otherLead })).status).toBe(200);
      for (const [id, as] of [[taught.id, lead], [foreign.id, otherLead]] as const) {
        expect((await t.call('PATCH', `/api/courses/${id}`, { as, body: { enrollment: { self_enroll: 'open' } } })).status).toBe(200);
      }
      const assistantInTaught = (await enrol(taught.id, lead, { user_id: assistant.user.id, role: 'ta' })).body;
      // The TA is a mere student of the other course: that teaches them nothing about its roster.
      const assistantInForeign = (await enrol(foreign.id, assistant)).body;
      const pupilInTaught = (await enrol(taught.id, pupil)).body;
      const pupilInForeign = (await enrol(foreign.id, pupil)).body;
      const leadInTaught = (await t.call('GET', `/api/enrollments/course/${taught.id}/user/${lead.user.id}`, { as: lead })).body;

      for (const staff of [lead, assistant]) {
        const res = await t.call('GET', `/api/enrollments?user_id=${pupil.user.id}`, { as: staff });
        expect(res.status).toBe(200);
        expect(res.body.data.map((e: any) => e.id)).toEqual([pupilInTaught.id]);
        expect(res.body.pagination.total).toBe(1);
        const theirLead = await t.call('GET', `/api/enrollments?user_id=${otherLead.user.id}`, { as: staff });
        expect(theirLead.body.data).toEqual([]);
        expect(theirLead.body.pagination.total).toBe(0);
      }
      expect((await listAll(assistant, `user_id=${lead.user.id}`)).ids).toEqual([leadInTaught.id]);
      expect((await listAll(lead, `user_id=${assistant.user.id}`)).ids).toEqual([assistantInTaught.id]);
      // Their own enrollments stay theirs to see, wherever they are.
      expect((await listAll(assistant, `user_id=${assistant.user.id}`)).ids).toEqual([assistantInTaught.id, assistantInForeign.id]);
      // The other course's instructor sees the pupil there, not in `taught`.
      expect((await listAll(otherLead, `user_id=${pupil.user.id}`)).ids).toEqual([pupilInForeign.id]);
      expect((await listAll(otherLead, `user_id=${assistant.user.id}`)).ids).toEqual([assistantInForeign.id]);

      // A dropped TA teaches nothing any more.
      expect((await t.call('POST', `/api/enrollments/${assistantInTaught.id}/drop`, { as: lead })).status).toBe(200);
      expect((await listAll(assistant, `user_id=${pupil.user.id}`)).ids).toEqual([]);
      expect((await listAll(assistant, `user_id=${lead.user.id}`)).ids).toEqual([]);
    });

    it('rejects malformed filters (400) and no credential (401)', async () => {
      expect((await t.call('GET', '/api/enrollments?course_id=nope', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', '/api/enrollments?status=paused', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', '/api/enrollments?per_page=500', { as: teacher })).status).toBe(400);
      expect((await t.call('GET', '/api/enrollments')).status).toBe(401);
    });
  });

  describe('bulk-enroll', () => {
    const bulk = (courseId: string, as: TestUser, body: unknown) =>
      t.call('POST', `/api/enrollments/course/${courseId}/bulk-enroll`, { as, body });

    it('enrols 1,000 users in one call', async () => {
      const courseId = await newCourse({ publish: false });
      const ids = insertUsers(1000);
      const res = await bulk(courseId, teacher, { user_ids: ids });
      expect(res.status).toBe(200);
      expect(res.body.skipped).toEqual([]);
      expect(res.body.enrolled).toHaveLength(1000);
      expect(res.body.enrolled.map((e: any) => e.user_id)).toEqual(ids);
      expect(res.body.enrolled[0]).toMatchObject({ course_id: courseId, role: 'student', status: 'active', user: { name: 'Bulk 0' } });
      const rows = t.db.select().from(enrollments).where(eq(enrollments.courseId, courseId)).all();
      expect(rows).toHaveLength(1001);
      const roster = await t.call('GET', `/api/enrollments?course_id=${courseId}&role=student&per_page=1`, { as: teacher });
      expect(roster.body.pagination.total).toBe(1000);
    });

    it('skips unknown, deleted and already enrolled users with reasons, reactivates dropped ones, counts duplicates once', async () => {
      const courseId = await newCourse();
      const [fresh, active, droppedUser, deletedUser] = insertUsers(4);
      const foreign = insertUsers(1, other.tenantId)[0]!;
      insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: active! });
      const dropped = insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId, userId: droppedUser! });
      t.db.update(enrollments).set({ status: 'dropped', droppedAt: new Date().toISOString() }).where(eq(enrollments.id, dropped.id)).run();
      t.db.update(users).set({ deletedAt: new Date().toISOString() }).where(eq(users.id, deletedUser!)).run();

      const res = await bulk(courseId, teacher, { user_ids: [fresh, active, MISSING_ID, droppedUser, deletedUser, foreign, fresh], role: 'ta' });
      expect(res.status).toBe(200);
      expect(res.body.enrolled.map((e: any) => [e.user_id, e.role, e.status])).toEqual([
        [fresh, 'ta', 'active'],
        [droppedUser, 'ta', 'active'],
      ]);
      expect(res.body.enrolled[1].id).toBe(dropped.id);
      expect(res.body.skipped).toEqual([
        { user_id: active, reason: 'already_enrolled' },
        { user_id: MISSING_ID, reason: 'unknown_user' },
        { user_id: deletedUser, reason: 'deleted_user' },
        { user_id: foreign, reason: 'unknown_user' },
      ]);
    });

    it('is refused to students and TAs (403) and other tenants (404); bad bodies are 400', async () => {
      const courseId = await newCourse();
      const learner = await t.newUser();
      const ta = await t.newUser();
      await enrol(courseId, learner);
      await enrol(courseId, teacher, { user_id: ta.user.id, role: 'ta' });
      const ids = insertUsers(2);
      expect((await bulk(courseId, learner, { user_ids: ids })).status).toBe(403);
      expect((await bulk(courseId, ta, { user_ids: ids })).status).toBe(403);
      expect((await bulk(courseId, other.admin, { user_ids: ids })).status).toBe(404);
      expect((await bulk(courseId, teacher, { user_ids: [] })).status).toBe(400);
      expect((await bulk(courseId, teacher, { user_ids: ['nope'] })).status).toBe(400);
      expect((await bulk(courseId, teacher, { user_ids: ids, role: 'owner' })).status).toBe(400);
      expect((await t.call('POST', `/api/enrollments/course/nope/bulk-enroll`, { as: teacher, body: { user_ids: ids } })).status).toBe(400);
      expect((await t.call('POST', `/api/enrollments/course/${courseId}/bulk-enroll`, { body: { user_ids: ids } })).status).toBe(401);
      expect(t.db.select().from(enrollments).where(eq(enrollments.courseId, courseId)).all()).toHaveLength(3);
    });

    it('answers 404 for an unknown course and enrols no one', async () => {
      const ids = insertUsers(2);
      for (const who of [teacher, t.admin]) {
        const res = await bulk(MISSING_ID, who, { user_ids: ids });
        expectProblem(res, 404, 'not_found');
      }
      expect(t.db.select().from(enrollments).where(eq(enrollments.courseId, MISSING_ID)).all()).toEqual([]);
      expect(t.db.select().from(enrollments).where(inArray(enrollments.userId, ids)).all()).toEqual([]);
    });

    it('lets an admin bulk-enrol into any course of the tenant', async () => {
      const courseId = await newCourse({ publish: false });
      const ids = insertUsers(3);
      const res = await bulk(courseId, t.admin, { user_ids: ids, role: 'instructor' });
      expect(res.body.enrolled.map((e: any) => e.role)).toEqual(['instructor', 'instructor', 'instructor']);
    });
  });
});
