// Enrollments over HTTP, on the spec's paths: list, enrol (self or by an instructor), bulk-enrol,
// read by id or by course and user, complete, drop, progress. Who may do what is in policy.ts; an
// enrollment the caller may not see answers 404, as if it did not exist.
import type { z } from '@hono/zod-openapi';
import type { Actor } from '../auth/authenticator';
import { authorizeCourse } from '../courses/policy';
import { courseAccess } from '../courses/service';
import { membershipOf } from '../memberships/service';
import { type ApiTag, authedRoute, errorResponses, jsonBody, jsonContent, newRouter } from '../http/openapi';
import { pageOf, pageOfRows, paginateJson } from '../http/pagination';
import type { Db } from '../../db/client';
import { authorizeEnrollment, authorizeEnrollmentRequestRead, enrollmentRequestListing, type EnrollmentAccess } from './policy';
import { presentEnrollment, presentEnrollmentRequest } from './present';
import { approveEnrollmentRequest, createEnrollmentRequest, denyEnrollmentRequest, getEnrollmentRequest, listEnrollmentRequests } from './requests';
import {
  bulkEnrollBody,
  bulkEnrollResult,
  createEnrollmentRequestBody,
  denyEnrollmentRequestBody,
  enrollmentRequestSchema,
  listEnrollmentRequestsQuery,
  requestCourseParams,
  requestParams,
  courseParams,
  courseUserParams,
  enrollBody,
  enrollmentParams,
  enrollmentSchema,
  listEnrollmentsQuery,
  progressSchema,
} from './schemas';
import {
  bulkEnroll,
  completeEnrollment,
  dropEnrollment,
  enroll,
  enrollmentProgress,
  getCourseEnrollment,
  getEnrollment,
  listEnrollments,
} from './service';

const tags: [ApiTag] = ['Enrollments'];

/** The enrollment, once the caller is allowed `action` on it (404 when they may not see it). */
function authorizedEnrollment(db: Db, actor: Actor, enrollmentId: string, action: Extract<EnrollmentAccess['action'], 'view' | 'complete' | 'drop'>) {
  const enrollment = getEnrollment(db, actor.tenantId, enrollmentId);
  authorizeEnrollment(actor, { action, enrollment, membership: membershipOf(db, actor.tenantId, enrollment.courseId, actor.userId) });
  return enrollment;
}

export const enrollmentsRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/enrollments',
      operationId: 'listEnrollments',
      tags,
      summary: 'Enrollments the caller may see: their own, those of the courses they teach (instructor or TA); admins all',
      request: { query: listEnrollmentsQuery },
      responses: { 200: jsonContent(pageOf(enrollmentSchema), 'A page of enrollments, in enrolment order') },
    }),
    (c) => {
      const q = c.req.valid('query');
      const { dataJson, total } = listEnrollments(
        c.var.deps.db,
        c.var.actor,
        { courseId: q.course_id, userId: q.user_id, status: q.status, role: q.role },
        q,
      );
      return paginateJson<z.infer<typeof enrollmentSchema>>(c, q, dataJson, total);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/enrollments/course/{course_id}/enroll',
      operationId: 'enrollInCourse',
      tags,
      summary: 'Enrol a user: yourself as a student where the course takes self-enrolment, or anyone (instructors and admins)',
      description:
        'Without `user_id` the caller enrols themselves, as a student, only into a published course whose `enrollment.self_enroll` ' +
        'is `open`: 403 `self_enrollment_closed` (closed, the default) or `enrollment_approval_required` (approval: ask with ' +
        'POST /api/courses/{id}/enrollment-requests); 409 `enrollment_not_open_yet` before `opens_at`, `enrollment_period_over` from ' +
        '`closes_at`, `course_full` when `capacity` students (active or completed) are enrolled. Instructors and admins enrol anyone, ' +
        'whatever the policy and capacity. A dropped enrollment is reactivated with the same id (200); a new one is a 201. An active or ' +
        'completed enrollment is a 409.',
      request: {
        params: courseParams,
        body: { required: false, content: { 'application/json': { schema: enrollBody } } },
      },
      responses: {
        200: jsonContent(enrollmentSchema, 'A dropped enrollment, reactivated'),
        201: jsonContent(enrollmentSchema, 'The new enrollment'),
        ...errorResponses(403, 404, 409, 422),
      },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const body = c.req.valid('json');
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(deps.db, actor, c.req.valid('param').course_id));
      const userId = body.user_id ?? actor.userId;
      const role = body.role ?? 'student';
      const how = authorizeEnrollment(actor, { action: 'enroll', course, membership, userId, role, now: deps.clock.now() });
      const capacity = how === 'self_service' ? course.enrollmentCapacity : null;
      const { enrollment, created } = enroll(deps.db, deps.clock, course, userId, role, actor.userId, capacity);
      if (!created) return c.json(presentEnrollment(enrollment), 200);
      c.header('Location', `/api/enrollments/${enrollment.id}`);
      return c.json(presentEnrollment(enrollment), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/enrollments/course/{course_id}/bulk-enroll',
      operationId: 'bulkEnrollInCourse',
      tags,
      summary: 'Enrol many users in one transaction (instructors and admins)',
      description:
        'Each id is enrolled (dropped enrollments are reactivated) or skipped with a reason: `unknown_user` ' +
        '(no such user in the tenant), `deleted_user`, `already_enrolled` (active or completed). An id named twice counts once.',
      request: { params: courseParams, ...jsonBody(bulkEnrollBody) },
      responses: { 200: jsonContent(bulkEnrollResult, 'Who was enrolled and who was skipped'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const { course } = authorizeCourse(actor, 'manage', courseAccess(deps.db, actor, c.req.valid('param').course_id));
      const body = c.req.valid('json');
      const result = bulkEnroll(deps.db, deps.clock, course, body.user_ids, body.role ?? 'student', actor.userId);
      return c.json({ enrolled: result.enrolled.map(presentEnrollment), skipped: result.skipped }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/enrollments/course/{course_id}/user/{user_id}',
      operationId: 'getCourseUserEnrollment',
      tags,
      summary: "A user's enrollment in a course (yourself, or anyone's for the course's staff)",
      request: { params: courseUserParams },
      responses: { 200: jsonContent(enrollmentSchema, 'The enrollment'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      const { course_id, user_id } = c.req.valid('param');
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(db, actor, course_id));
      authorizeEnrollment(actor, { action: 'look_up', userId: user_id, membership });
      return c.json(presentEnrollment(getCourseEnrollment(db, actor.tenantId, course.id, user_id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/enrollments/{enrollment_id}',
      operationId: 'getEnrollment',
      tags,
      summary: 'One enrollment',
      request: { params: enrollmentParams },
      responses: { 200: jsonContent(enrollmentSchema, 'The enrollment'), ...errorResponses(404) },
    }),
    (c) => {
      const enrollment = authorizedEnrollment(c.var.deps.db, c.var.actor, c.req.valid('param').enrollment_id, 'view');
      return c.json(presentEnrollment(enrollment), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/enrollments/{enrollment_id}/complete',
      operationId: 'completeEnrollment',
      tags,
      summary: 'Complete an enrollment (instructors and admins): active → completed, else 409',
      request: { params: enrollmentParams },
      responses: { 200: jsonContent(enrollmentSchema, 'The completed enrollment'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const enrollment = authorizedEnrollment(deps.db, actor, c.req.valid('param').enrollment_id, 'complete');
      const completed = completeEnrollment(deps.db, deps.clock, deps.auth, actor.userId, enrollment);
      return c.json(presentEnrollment(completed), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/enrollments/{enrollment_id}/drop',
      operationId: 'dropEnrollment',
      tags,
      summary: 'Drop an enrollment (instructors, admins, or its own user): active → dropped, else 409',
      request: { params: enrollmentParams },
      responses: { 200: jsonContent(enrollmentSchema, 'The dropped enrollment'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const enrollment = authorizedEnrollment(deps.db, actor, c.req.valid('param').enrollment_id, 'drop');
      const dropped = dropEnrollment(deps.db, deps.clock, deps.auth, actor.userId, enrollment);
      return c.json(presentEnrollment(dropped), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/enrollments/{enrollment_id}/progress',
      operationId: 'getEnrollmentProgress',
      tags,
      summary: "A learner's progress in the course: completed required activities, overall and per module",
      request: { params: enrollmentParams },
      responses: { 200: jsonContent(progressSchema, 'Progress'), ...errorResponses(404) },
    }),
    (c) => {
      const db = c.var.deps.db;
      const enrollment = authorizedEnrollment(db, c.var.actor, c.req.valid('param').enrollment_id, 'view');
      return c.json(enrollmentProgress(db, enrollment), 200);
    },
  )
  // ------------------------------------------------------------ enrolment requests (approval)
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/enrollment-requests',
      operationId: 'listEnrollmentRequests',
      tags,
      summary: "Requests to join the course: every one to its instructors and admins, a member's own to them",
      description: 'Oldest first, filtered by `status`. A course the caller may not read is 404.',
      request: { params: requestCourseParams, query: listEnrollmentRequestsQuery },
      responses: { 200: jsonContent(pageOf(enrollmentRequestSchema), 'A page of requests'), ...errorResponses(404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      const q = c.req.valid('query');
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(db, actor, c.req.valid('param').id));
      const userId = enrollmentRequestListing(actor, membership) === 'all' ? undefined : actor.userId;
      return c.json(pageOfRows(c, q, listEnrollmentRequests(db, course, { status: q.status, userId }, q), presentEnrollmentRequest), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/enrollment-requests',
      operationId: 'createEnrollmentRequest',
      tags,
      summary: 'Ask to join a course that enrols by approval (`enrollment.self_enroll: approval`)',
      description:
        'The caller asks for themself, as a student. 403 `enrollment_requests_closed` where the course is open (enrol instead) or ' +
        'closed; 409 `enrollment_not_open_yet` / `enrollment_period_over` outside its dates, `course_full` at capacity, ' +
        '`enrollment_request_pending` when a request of theirs waits already, `conflict` when they are in the course. The ' +
        "course's instructors find it in their feed (`enrollment_request.created`).",
      request: { params: requestCourseParams, body: { required: false, content: { 'application/json': { schema: createEnrollmentRequestBody } } } },
      responses: { 201: jsonContent(enrollmentRequestSchema, 'The request, pending'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const body = c.req.valid('json') ?? {};
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(deps.db, actor, c.req.valid('param').id));
      authorizeEnrollment(actor, { action: 'request', course, membership, now: deps.clock.now() });
      const row = createEnrollmentRequest(deps.db, deps.clock, course, actor.userId, body.message?.trim() || null);
      c.header('Location', `/api/courses/${course.id}/enrollment-requests/${row.id}`);
      return c.json(presentEnrollmentRequest(row), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/courses/{id}/enrollment-requests/{request_id}',
      operationId: 'getEnrollmentRequest',
      tags,
      summary: 'One request: to the member who made it and to the course\'s instructors and admins (404 to anyone else)',
      request: { params: requestParams },
      responses: { 200: jsonContent(enrollmentRequestSchema, 'The request'), ...errorResponses(404) },
    }),
    (c) => {
      const actor = c.var.actor;
      const db = c.var.deps.db;
      const params = c.req.valid('param');
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(db, actor, params.id));
      const row = getEnrollmentRequest(db, course, params.request_id);
      authorizeEnrollmentRequestRead(actor, row, membership);
      return c.json(presentEnrollmentRequest(row), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/enrollment-requests/{request_id}/approve',
      operationId: 'approveEnrollmentRequest',
      tags,
      summary: 'Approve a request (instructors and admins): the member is enrolled as a student',
      description:
        '409 `enrollment_request_decided` for a request approved or denied already, `course_full` when the course is at capacity, ' +
        '`conflict` when the member is in the course already. Records `enrollment_request.approved` and `enrollment.created`.',
      request: { params: requestParams },
      responses: { 200: jsonContent(enrollmentRequestSchema, 'The request, approved'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const params = c.req.valid('param');
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(deps.db, actor, params.id));
      const row = getEnrollmentRequest(deps.db, course, params.request_id);
      authorizeEnrollmentRequestRead(actor, row, membership);
      authorizeEnrollment(actor, { action: 'decide_requests', membership });
      return c.json(presentEnrollmentRequest(approveEnrollmentRequest(deps.db, deps.clock, course, row, actor.userId)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/courses/{id}/enrollment-requests/{request_id}/deny',
      operationId: 'denyEnrollmentRequest',
      tags,
      summary: 'Deny a request (instructors and admins), with an optional reason told to the member',
      description: '409 `enrollment_request_decided` for a request approved or denied already. Records `enrollment_request.denied`.',
      request: { params: requestParams, body: { required: false, content: { 'application/json': { schema: denyEnrollmentRequestBody } } } },
      responses: { 200: jsonContent(enrollmentRequestSchema, 'The request, denied'), ...errorResponses(403, 404, 409) },
    }),
    (c) => {
      const actor = c.var.actor;
      const deps = c.var.deps;
      const params = c.req.valid('param');
      const body = c.req.valid('json') ?? {};
      const { course, membership } = authorizeCourse(actor, 'read', courseAccess(deps.db, actor, params.id));
      const row = getEnrollmentRequest(deps.db, course, params.request_id);
      authorizeEnrollmentRequestRead(actor, row, membership);
      authorizeEnrollment(actor, { action: 'decide_requests', membership });
      return c.json(presentEnrollmentRequest(denyEnrollmentRequest(deps.db, deps.clock, course, row, actor.userId, body.reason?.trim() || null)), 200);
    },
  );
