// A course's enrolment policy through the HTTP API: closed by default (self-enrolment refused with
// its code), open within dates and capacity, and by approval: members ask, instructors list,
// approve (the member is enrolled) or deny; each refusal a 403/409 with its code; the events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';

describe('enrolment policy', () => {
  let t: TestApp;
  let teacher: TestUser;

  beforeAll(async () => {
    t = await makeTestApp();
    teacher = await t.newUser({ name: 'Teacher' });
  });
  afterAll(() => t.close());

  async function course(enrollment?: Record<string, unknown>): Promise<string> {
    const res = await t.call('POST', '/api/courses', { as: teacher, body: { title: 'Policy course' } });
    expect(res.body.enrollment).toEqual({ self_enroll: 'closed', capacity: null, opens_at: null, closes_at: null });
    if (enrollment) {
      const patched = await t.call('PATCH', `/api/courses/${res.body.id}`, { as: teacher, body: { enrollment } });
      expect(patched.status, patched.text).toBe(200);
    }
    expect((await t.call('POST', `/api/courses/${res.body.id}/publish`, { as: teacher })).status).toBe(200);
    return res.body.id;
  }
  const selfEnrol = (courseId: string, as: TestUser) => t.call('POST', `/api/enrollments/course/${courseId}/enroll`, { as });

  it('is closed by default: a member cannot enrol themselves in a published course (403 self_enrollment_closed); the instructor still enrols them', async () => {
    const id = await course();
    const member = await t.newUser();
    expectProblem(await selfEnrol(id, member), 403, 'self_enrollment_closed');
    expect((await t.call('POST', `/api/enrollments/course/${id}/enroll`, { as: teacher, body: { user_id: member.user.id } })).status).toBe(201);
    expectProblem(await t.call('PATCH', `/api/courses/${id}`, { as: member, body: { enrollment: { self_enroll: 'open' } } }), 403, 'forbidden');
  });

  it('open: within its dates and capacity only (409 with the reason)', async () => {
    const now = t.clock.now().getTime();
    const opens = new Date(now + 3_600_000).toISOString();
    const closes = new Date(now + 7_200_000).toISOString();
    const id = await course({ self_enroll: 'open', capacity: 2, opens_at: opens, closes_at: closes });
    const [a, b, c] = [await t.newUser(), await t.newUser(), await t.newUser()];
    expectProblem(await selfEnrol(id, a), 409, 'enrollment_not_open_yet');
    t.clock.advance(3_600_000);
    expect((await selfEnrol(id, a)).status).toBe(201);
    expect((await selfEnrol(id, b)).status).toBe(201);
    expectProblem(await selfEnrol(id, c), 409, 'course_full');
    t.clock.advance(3_600_000);
    expectProblem(await selfEnrol(id, c), 409, 'enrollment_period_over');
    expectProblem(await t.call('PATCH', `/api/courses/${id}`, { as: teacher, body: { enrollment: { opens_at: closes, closes_at: opens } } }), 422, 'validation_failed');
    expectProblem(await t.call('PATCH', `/api/courses/${id}`, { as: teacher, body: { enrollment: { self_enroll: 'sometimes' } } }), 400, 'validation_failed');
    const cleared = await t.call('PATCH', `/api/courses/${id}`, { as: teacher, body: { enrollment: { capacity: null, closes_at: null } } });
    expect(cleared.body.enrollment).toMatchObject({ self_enroll: 'open', capacity: null, closes_at: null, opens_at: opens });
    expect((await selfEnrol(id, c)).status).toBe(201);
  });

  it('approval: members ask, instructors list, approve (enrolled) and deny; refusals carry their codes; events go to the feeds', async () => {
    const id = await course({ self_enroll: 'approval', capacity: 1 });
    const [ann, ben, outsider] = [await t.newUser({ name: 'Ann' }), await t.newUser({ name: 'Ben' }), await t.newUser()];
    expectProblem(await selfEnrol(id, ann), 403, 'enrollment_approval_required');
    const asked = await t.call('POST', `/api/courses/${id}/enrollment-requests`, { as: ann, body: { message: 'Please' } });
    expect(asked.status, asked.text).toBe(201);
    expect(asked.body).toMatchObject({ course_id: id, user_id: ann.user.id, status: 'pending', message: 'Please' });
    expect(asked.headers.get('location')).toBe(`/api/courses/${id}/enrollment-requests/${asked.body.id}`);
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests`, { as: ann }), 409, 'enrollment_request_pending');
    const benAsked = await t.call('POST', `/api/courses/${id}/enrollment-requests`, { as: ben, body: {} });
    expect(benAsked.status).toBe(201);

    // Instructors see every request; a member only their own; another member not this one.
    expect((await t.call('GET', `/api/courses/${id}/enrollment-requests`, { as: teacher })).body.pagination.total).toBe(2);
    expect((await t.call('GET', `/api/courses/${id}/enrollment-requests`, { as: ann })).body.data.map((r: { user_id: string }) => r.user_id)).toEqual([ann.user.id]);
    expectProblem(await t.call('GET', `/api/courses/${id}/enrollment-requests/${asked.body.id}`, { as: outsider }), 404, 'not_found');
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests/${asked.body.id}/approve`, { as: ann }), 403, 'forbidden');
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests/${asked.body.id}/approve`, { as: outsider }), 404, 'not_found');
    const feed = await t.call('GET', '/api/dashboard/feed', { as: teacher });
    expect(JSON.stringify(feed.body)).toContain('enrollment_request.created');

    const approved = await t.call('POST', `/api/courses/${id}/enrollment-requests/${asked.body.id}/approve`, { as: teacher });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: teacher.user.id });
    const enrolled = await t.call('GET', `/api/enrollments/course/${id}/user/${ann.user.id}`, { as: teacher });
    expect(enrolled.body).toMatchObject({ role: 'student', status: 'active' });
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests/${asked.body.id}/deny`, { as: teacher }), 409, 'enrollment_request_decided');
    // Full at one student: Ben cannot be approved, only denied.
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests/${benAsked.body.id}/approve`, { as: teacher }), 409, 'course_full');
    const denied = await t.call('POST', `/api/courses/${id}/enrollment-requests/${benAsked.body.id}/deny`, { as: teacher, body: { reason: 'Full this term' } });
    expect(denied.body).toMatchObject({ status: 'denied', reason: 'Full this term' });
    expect(JSON.stringify((await t.call('GET', '/api/dashboard/feed', { as: ben })).body)).toContain('enrollment_request.denied');
    expect((await t.call('GET', `/api/courses/${id}/enrollment-requests?status=pending`, { as: teacher })).body.pagination.total).toBe(0);

    // Requests only where the course enrols by approval.
    const open = await course({ self_enroll: 'open' });
    expectProblem(await t.call('POST', `/api/courses/${open}/enrollment-requests`, { as: outsider }), 403, 'enrollment_requests_closed');
    const other = await t.newTenant('policy-other');
    expectProblem(await t.call('POST', `/api/courses/${id}/enrollment-requests`, { as: other.admin }), 404, 'not_found');
  });
});
