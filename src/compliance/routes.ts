// Compliance seat time over HTTP: a learner's sessions (start, heartbeat, end, the active one),
// block status, and for instructors the course report (JSON or CSV) and the course's sessions.
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { courseAccess } from '../courses/service';
import { notFound, unprocessable } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, jsonBody, jsonContent, newRouter } from '../http/openapi';
import { pageOf, pageOfRows, paginate } from '../http/pagination';
import { membershipOf, isStudentOf } from '../memberships/service';
import { findNode } from '../sequencing/edges';
import { authorizeCompliance, authorizeSessionListing } from './policy';
import { presentFigures, presentSession } from './present';
import {
  blockParams,
  blockStatusQuery,
  blockStatusSchema,
  courseParams,
  listSessionsQuery,
  reportQuery,
  reportSchema,
  sessionParams,
  sessionSchema,
  startedSessionSchema,
  startSessionBody,
} from './schemas';
import { activeSession, blockStatus, courseBlock, courseReport, endSession, heartbeat, listSessions, startSession } from './service';
import { complianceCsv, CSV_CONTENT_TYPE } from './spreadsheet';
import { z } from '@hono/zod-openapi';

const tags: [ApiTag] = ['Compliance'];

const RULES =
  'Time comes from the server clock only: a session is credited with each interval between consecutive signs of the learner ' +
  '(start, heartbeats, end) no longer than the idle timeout (COMPLIANCE_IDLE_TIMEOUT_SECONDS, default 300). A session with no ' +
  'heartbeat for longer than that has ended by itself at its last heartbeat.';

/** The learner whose figures are asked for (the caller, or `user_id` for instructors); someone not a student of the course is 404. */
function learnerOf(c: Context<AppEnv>, courseId: string, userId: string | undefined): string {
  const { db } = c.var.deps;
  const actor = c.var.actor;
  const learnerId = userId ?? actor.userId;
  authorizeCompliance(actor, { kind: 'learner', learnerId }, courseAccess(db, actor, courseId));
  if (learnerId !== actor.userId && !isStudentOf(db, actor.tenantId, courseId, learnerId)) throw notFound('Learner in this course');
  return learnerId;
}

const reportCsvHeaders = (courseId: string) => ({
  'Content-Type': CSV_CONTENT_TYPE,
  'Content-Disposition': `attachment; filename="compliance-${courseId}.csv"`,
  'Cache-Control': 'no-store',
});

export const complianceRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/compliance/sessions',
      operationId: 'startSeatSession',
      tags,
      summary: 'Start a seat-time session on a module or activity; the caller\'s open session, if any, ends',
      description:
        `${RULES} Students actively enrolled in the course only (403 for anyone else, instructors included; 409 when the enrollment ` +
        'is dropped or completed). A block that is not a module or activity of the course is 422; a locked one (prerequisites not ' +
        'met, course not published) is 409 saying why. The previous session is credited up to now and ends as `switched`. ' +
        '`Location` is the caller\'s active session.',
      request: jsonBody(startSessionBody),
      responses: { 201: jsonContent(startedSessionSchema, 'The new session, and the one it ended'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock, config } = c.var.deps;
      const actor = c.var.actor;
      const body = c.req.valid('json');
      const { course } = authorizeCompliance(actor, { kind: 'keep' }, courseAccess(db, actor, body.course_id));
      const block = courseBlock(db, actor.tenantId, course.id, body.block_id);
      const { session, previous } = startSession(db, clock, config.complianceIdleTimeoutSeconds, actor, block);
      c.header('Location', '/api/compliance/sessions/active');
      return c.json({ ...presentSession(session), previous_session: previous ? presentSession(previous) : null }, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/compliance/sessions/{id}/heartbeat',
      operationId: 'heartbeatSeatSession',
      tags,
      summary: 'Keep a seat-time session alive, crediting the time since the last heartbeat',
      description:
        `${RULES} A heartbeat after a longer gap finds the session ended (409) and credits nothing. Someone else's session is 404; ` +
        'an ended one 409; when the enrollment is no longer active the session ends and the answer is 409.',
      request: { params: sessionParams },
      responses: { 200: jsonContent(sessionSchema, 'The session'), ...errorResponses(404, 409) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      return c.json(presentSession(heartbeat(db, clock, c.var.actor, c.req.valid('param').id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/compliance/sessions/{id}/end',
      operationId: 'endSeatSession',
      tags,
      summary: 'End a seat-time session, crediting the time since its last heartbeat (within the idle timeout)',
      description: `${RULES} Someone else's session is 404; one that has already ended (or ended by itself) is 409.`,
      request: { params: sessionParams },
      responses: { 200: jsonContent(sessionSchema, 'The ended session'), ...errorResponses(404, 409) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      return c.json(presentSession(endSession(db, clock, c.var.actor, c.req.valid('param').id)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/compliance/sessions/active',
      operationId: 'getActiveSeatSession',
      tags,
      summary: "The caller's open seat-time session; 404 when there is none",
      description: `${RULES} A session found timed out is recorded as ended, and the answer is 404.`,
      responses: { 200: jsonContent(sessionSchema, 'The open session'), ...errorResponses(404) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const session = activeSession(db, clock, c.var.actor);
      if (!session) throw notFound('Active seat-time session');
      return c.json(presentSession(session), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/compliance/blocks/{block_id}/status',
      operationId: 'getSeatTimeStatus',
      tags,
      summary: "A learner's seat time on a module or activity against its requirement",
      description:
        'Requirements are set on activities (`min_seat_seconds`; none means 0). For a module: required is the sum of its ' +
        "activities' requirements, credited is all time credited in the module (on it and on its activities), remaining is the sum " +
        "of what each activity still lacks (time on one does not make up for another's shortfall). Compliant: nothing remains. " +
        "For the caller (a student of the course), or `user_id` (a student of the course) for the course's teaching staff (instructors, TAs) and admins (403 otherwise).",
      request: { params: blockParams, query: blockStatusQuery },
      responses: { 200: jsonContent(blockStatusSchema, 'The status'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { db } = c.var.deps;
      const block = findNode(db, c.var.actor.tenantId, c.req.valid('param').block_id);
      if (!block) throw notFound('Module or activity');
      const learnerId = learnerOf(c, block.courseId, c.req.valid('query').user_id);
      const status = blockStatus(db, { tenantId: c.var.actor.tenantId, userId: learnerId }, block);
      return c.json({ block_id: block.id, block_type: block.type, course_id: block.courseId, user_id: learnerId, ...presentFigures(status) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/compliance/courses/{course_id}/report',
      operationId: 'getCourseComplianceReport',
      tags,
      summary: 'The course compliance report: every learner against every seat-time requirement; ?format=csv for a spreadsheet',
      description:
        'Blocks: the activities with `min_seat_seconds`, in course order. Learners of record: students whose enrollment is active or ' +
        'completed, by name. JSON: a page of learners, each with credited against required per block and totals, and the course-level ' +
        'figures (`compliant`: every learner meets every requirement). CSV (page and per_page do not apply): a header row (user_id, name, ' +
        'email, enrollment_status, one column of credited seconds per block, required_seconds, credited_seconds, remaining_seconds, ' +
        'compliant), then one row per learner; UTF-8 with BOM and CRLF line ends; cells starting with = + - @ TAB or CR are prefixed ' +
        "with a single quote so that no spreadsheet reads them as formulas. The course's teaching staff (instructors, TAs) and admins only (403).",
      request: { params: courseParams, query: reportQuery },
      responses: {
        200: {
          description: 'A page of the report, or the spreadsheet',
          content: { 'application/json': { schema: reportSchema }, 'text/csv': { schema: z.string() } },
        },
        ...errorResponses(403, 404),
      },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const { course } = authorizeCompliance(actor, { kind: 'audit' }, courseAccess(db, actor, c.req.valid('param').course_id));
      const q = c.req.valid('query');
      if (q.format === 'csv') return c.body(complianceCsv(courseReport(db, actor.tenantId, course.id)), 200, reportCsvHeaders(course.id));
      const report = courseReport(db, actor.tenantId, course.id, q);
      const page = paginate(
        c,
        q,
        report.rows.map((r) => ({
          user_id: r.learner.userId,
          name: r.learner.name,
          email: r.learner.email,
          enrollment_status: r.learner.enrollmentStatus,
          blocks: r.blocks.map((cell, i) => ({ block_id: report.blocks[i]!.activityId, ...presentFigures(cell) })),
          totals: presentFigures(r.totals),
          compliant: r.totals.compliant,
        })),
        report.total,
      );
      return c.json(
        {
          course_id: course.id,
          generated_at: clock.now().toISOString(),
          blocks: report.blocks.map((b) => ({ block_id: b.activityId, block_type: 'activity' as const, module_id: b.moduleId, title: b.title, required_seconds: b.requiredSeconds })),
          learners: report.learners,
          compliant_learners: report.compliantLearners,
          compliant: report.compliant,
          ...page,
        },
        200,
      );
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/compliance/courses/{course_id}/sessions',
      operationId: 'listCourseSeatSessions',
      tags,
      summary: "The course's seat-time sessions, newest first (instructors), or a learner's own",
      description:
        "The course's teaching staff (instructors, TAs) and admins see every learner's sessions, filtered by `user_id`, `block_id` and when they started " +
        '(`from` inclusive, `to` exclusive). A student of the course sees their own (no `user_id`, or their own; another learner\'s is 403). ' +
        'Sessions found timed out are recorded as ended first. `from` after `to` is 422.',
      request: { params: courseParams, query: listSessionsQuery },
      responses: { 200: jsonContent(pageOf(sessionSchema), 'A page of sessions'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const { db, clock } = c.var.deps;
      const actor = c.var.actor;
      const courseId = c.req.valid('param').course_id;
      const q = c.req.valid('query');
      const access = courseAccess(db, actor, courseId);
      const userId = authorizeSessionListing(actor, access, q.user_id);
      const fromMs = q.from === undefined ? undefined : Date.parse(q.from);
      const toMs = q.to === undefined ? undefined : Date.parse(q.to);
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
        throw unprocessable('from must not be after to', [{ path: 'from', message: 'must not be after to' }]);
      const page = listSessions(db, clock, access.course.id, { userId, blockId: q.block_id, fromMs, toMs }, q);
      return c.json(pageOfRows(c, q, page, presentSession), 200);
    },
  );
