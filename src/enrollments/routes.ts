// Enrollments over HTTP, on the spec's paths: list, enrol (self or by an instructor), bulk-enrol,
// read by id or by course and user, complete, drop, progress. Who may do what is in policy.ts; an
// enrollment the caller may not see answers 404, as if it did not exist.
import type { z } from '@hono/zod-openapi';
import type { Actor } from '../auth/authenticator';
import { authorizeCourse } from '../courses/policy';
import { courseAccess } from '../courses/service';
import { membershipOf } from '../memberships/service';
import { type ApiTag, authedRoute, errorResponses, jsonBody, jsonContent, newRouter } from '../http/openapi';
import { pageOf, paginateJson } from '../http/pagination';
import type { Db } from '../../db/client';
import { authorizeEnrollment, type EnrollmentAccess } from './policy';
import { presentEnrollment } from './present';
import {
  bulkEnrollBody,
  bulkEnrollResult,
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
      summary: 'Enrol a user: yourself as a student in a published course, or anyone (instructors and admins)',
      description:
        'Without `user_id` the caller enrols themselves. A dropped enrollment is reactivated with the same id ' +
        '(200); a new one is a 201. An active or completed enrollment is a 409.',
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
      authorizeEnrollment(actor, { action: 'enroll', course, membership, userId, role });
      const { enrollment, created } = enroll(deps.db, deps.clock, course, userId, role, actor.userId);
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
  );
