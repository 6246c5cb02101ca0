// Gradebook: assignments of an offering (resource links with grade metadata), grades and their
// history, summaries, the CSV spreadsheet and per-offering settings. An offering is a course.
// Every route first finds the offering in the caller's tenant (404, so other tenants' offerings
// never answer 403), then asks the policy: instructors of the offering and tenant admins manage
// the gradebook; a student reads only their own grades.
import { z } from '@hono/zod-openapi';
import type { Actor } from '../auth/authenticator';
import type { Db } from '../../db/client';
import { membershipOf } from '../memberships/service';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, validationHook } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { authorizeGradebook } from './policy';
import {
  presentAssignment,
  presentGrade,
  presentGradeChange,
  presentSettings,
  presentStudentGrades,
  presentSummary,
} from './present';
import {
  assignmentSchema,
  createAssignmentBody,
  gradeChangeSchema,
  gradeParams,
  gradeSchema,
  listGradesQuery,
  offeringParams,
  putGradeBody,
  putSettingsBody,
  settingsSchema,
  studentGradesSchema,
  studentParams,
  summarySchema,
  updateAssignmentBody,
} from './schemas';
import { createAssignment, deleteAssignment, getAssignment, listAssignments, updateAssignment, type AssignmentFields } from './assignments';
import { getGrade, gradeHistory, listGrades, recordGrade, studentGrades } from './grades';
import { getOffering, getStudent, type Offering } from './service';
import { getSettings, putSettings } from './settings';
import { loadGradebook, summarizeOffering } from './views';
import { CSV_CONTENT_TYPE, gradebookCsv } from './spreadsheet';

const tags: [ApiTag] = ['Gradebook'];

/** The caller's enrollment in the offering, as the policy asks for it (only when it needs it). */
const membershipIn = (db: Db, actor: Actor, offering: Offering) => () => membershipOf(db, offering.tenantId, offering.id, actor.userId);

/** What the caller does with the gradebook: see it and record grades (teaching staff, TAs too), or change it (instructors). */
type StaffAction = 'read' | 'grade' | 'manage';

function requireStaff(db: Db, actor: Actor, offering: Offering, notFoundAs: 'Course' | 'Assignment', action: StaffAction): void {
  authorizeGradebook(actor, { action, offering, notFoundAs, membership: membershipIn(db, actor, offering) });
}

/** The offering, if it exists in the caller's tenant (404) and the caller may do this there (403). */
function staffOffering(db: Db, actor: Actor, offeringId: string, action: StaffAction): Offering {
  const offering = getOffering(db, actor.tenantId, offeringId);
  requireStaff(db, actor, offering, 'Course', action);
  return offering;
}

function staffAssignment(db: Db, actor: Actor, id: string, action: StaffAction) {
  const found = getAssignment(db, actor.tenantId, id);
  requireStaff(db, actor, found.offering, 'Assignment', action);
  return found;
}

/** Only the fields the request names, in the service's terms; null clears a nullable one. */
function assignmentChanges(body: z.infer<typeof updateAssignmentBody>): Partial<AssignmentFields> {
  const m = body.grade_metadata ?? {};
  const changes: Partial<AssignmentFields> = {
    label: body.label,
    resourceLinkId: body.resource_link_id,
    tag: body.tag,
    resourceId: body.resource_id,
    activityId: body.activity_id,
    position: body.position,
    scoreMaximum: m.score_maximum,
    weight: m.weight,
    category: m.category,
    dueAt: m.due_at,
    gradingType: m.grading_type,
  };
  for (const key of Object.keys(changes) as (keyof AssignmentFields)[]) if (changes[key] === undefined) delete changes[key];
  return changes;
}

const instructorOnly = ' Instructors of the offering and tenant admins only (403 "Instructor access required").';
const staffOnly = " The offering's teaching staff (instructors and TAs) and tenant admins only (403 otherwise).";

const csvHeaders = (offering: Offering) => ({
  'Content-Type': CSV_CONTENT_TYPE,
  'Content-Disposition': `attachment; filename="gradebook-${offering.id}.csv"`,
  'Cache-Control': 'no-store',
});

export const gradebookRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/offerings/{offering_id}/assignments',
      operationId: 'getGradebookAssignments',
      tags,
      summary: 'Assignments (resource links) of an offering with their grade metadata',
      description: `Ordered by position, then id.${staffOnly} page defaults to 1, per_page to 100 (at most 100).`,
      request: { params: offeringParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(assignmentSchema), 'A page of assignments'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const offering = staffOffering(db, c.get('actor'), c.req.valid('param').offering_id, 'read');
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listAssignments(db, offering, q), presentAssignment), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/gradebook/offerings/{offering_id}/assignments',
      operationId: 'createGradebookAssignment',
      tags,
      summary: 'Create an assignment, optionally tied to an activity',
      description: `resource_link_id is unique within the offering (409). activity_id must name an activity of this offering (422).${instructorOnly}`,
      request: { params: offeringParams, ...jsonBody(createAssignmentBody) },
      responses: {
        201: jsonContent(assignmentSchema, 'The new assignment'),
        ...errorResponses(403, 404, 409, 422),
      },
    }),
    (c) => {
      const { db, clock } = c.get('deps');
      const actor = c.get('actor');
      const offering = staffOffering(db, actor, c.req.valid('param').offering_id, 'manage');
      const body = c.req.valid('json');
      const m = body.grade_metadata;
      const assignment = createAssignment(db, clock, offering, actor.userId, {
        label: body.label,
        resourceLinkId: body.resource_link_id,
        tag: body.tag ?? null,
        resourceId: body.resource_id ?? null,
        activityId: body.activity_id ?? null,
        position: body.position,
        scoreMaximum: m.score_maximum,
        weight: m.weight,
        category: m.category,
        dueAt: m.due_at ?? null,
        gradingType: m.grading_type,
      });
      c.header('Location', `/api/gradebook/assignments/${assignment.id}`);
      return c.json(presentAssignment(assignment), 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/assignments/{id}',
      operationId: 'getGradebookAssignment',
      tags,
      summary: 'One assignment',
      description: staffOnly.trim(),
      request: { params: idParams },
      responses: { 200: jsonContent(assignmentSchema, 'The assignment'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { assignment } = staffAssignment(c.get('deps').db, c.get('actor'), c.req.valid('param').id, 'read');
      return c.json(presentAssignment(assignment), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/gradebook/assignments/{id}',
      operationId: 'updateGradebookAssignment',
      tags,
      summary: 'Change an assignment',
      description:
        'grade_metadata fields may be given one by one. Lowering score_maximum below a recorded score, or making ' +
        `pass_fail an assignment with partial scores, is 409. activity_id must name an activity of the assignment's offering (422).${instructorOnly}`,
      request: { params: idParams, ...jsonBody(updateAssignmentBody) },
      responses: { 200: jsonContent(assignmentSchema, 'The assignment'), ...errorResponses(403, 404, 409, 422) },
    }),
    (c) => {
      const { db, clock } = c.get('deps');
      const { assignment, offering } = staffAssignment(db, c.get('actor'), c.req.valid('param').id, 'manage');
      const updated = updateAssignment(db, clock, offering, assignment, assignmentChanges(c.req.valid('json')));
      return c.json(presentAssignment(updated), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/gradebook/assignments/{id}',
      operationId: 'deleteGradebookAssignment',
      tags,
      summary: 'Delete an assignment with its grades and their history',
      description: instructorOnly.trim(),
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const { assignment } = staffAssignment(db, c.get('actor'), c.req.valid('param').id, 'manage');
      deleteAssignment(db, assignment);
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/gradebook/assignments/{id}/grades/{student_id}',
      operationId: 'recordGrade',
      tags,
      summary: "Record a student's grade (creates or replaces it)",
      description:
        'score must lie within 0..score_maximum (a pass_fail assignment takes 0 or score_maximum), and the student ' +
        'must be a student of the offering, active or completed; otherwise 422. Every change is kept in the grade history; a ' +
        `PUT that changes nothing records nothing. 201 when the grade is new, 200 when it replaced one.${staffOnly}`,
      request: { params: gradeParams, ...jsonBody(putGradeBody) },
      responses: {
        200: jsonContent(gradeSchema, 'The grade, updated'),
        201: jsonContent(gradeSchema, 'The grade, new'),
        ...errorResponses(403, 404, 422),
      },
    }),
    (c) => {
      const { db, clock } = c.get('deps');
      const actor = c.get('actor');
      const { id, student_id } = c.req.valid('param');
      const { assignment } = staffAssignment(db, actor, id, 'grade');
      const { grade, created } = recordGrade(db, clock, assignment, student_id, actor.userId, c.req.valid('json'));
      const body = presentGrade(grade, assignment.scoreMaximum);
      if (!created) return c.json(body, 200);
      c.header('Location', `/api/gradebook/assignments/${assignment.id}/grades/${student_id}`);
      return c.json(body, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/assignments/{id}/grades/{student_id}',
      operationId: 'getGrade',
      tags,
      summary: "One student's grade on one assignment (the student themself or the offering's teaching staff)",
      request: { params: gradeParams },
      responses: { 200: jsonContent(gradeSchema, 'The grade'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const actor = c.get('actor');
      const { id, student_id } = c.req.valid('param');
      const { assignment, offering } = getAssignment(db, actor.tenantId, id);
      authorizeGradebook(actor, { action: 'read_grade', studentId: student_id, offering, notFoundAs: 'Assignment', membership: membershipIn(db, actor, offering) });
      return c.json(presentGrade(getGrade(db, assignment, student_id), assignment.scoreMaximum), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/assignments/{id}/grades/{student_id}/history',
      operationId: 'getGradeHistory',
      tags,
      summary: "Every change of a student's grade on an assignment, newest first",
      description: `Who changed it, when, and the score and comment before and after.${staffOnly}`,
      request: { params: gradeParams, query: paginationQuery },
      responses: { 200: jsonContent(pageOf(gradeChangeSchema), 'A page of changes'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const { id, student_id } = c.req.valid('param');
      const { assignment, offering } = staffAssignment(db, c.get('actor'), id, 'read');
      getStudent(db, offering, student_id); // 404 for anyone never a student here, as the grade itself answers
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, gradeHistory(db, assignment, student_id, q), presentGradeChange), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/offerings/{offering_id}/grades',
      operationId: 'getGradebookGrades',
      tags,
      summary: 'Grades of an offering; ?format=csv for the whole gradebook as a spreadsheet',
      description:
        'JSON: grade rows by student then assignment, paginated, optionally filtered by assignment_id or student_id. ' +
        'CSV (page, per_page and filters do not apply): a header row (student_id, name, email, one column per ' +
        'assignment label in assignment order, weighted_percent, letter; a label already taken, ignoring case, gets ' +
        '" (2)", " (3)"…), then one row per student (active or completed; not dropped) by name; ' +
        'UTF-8 with BOM and CRLF line ends; cells starting with = + - @ TAB or CR are prefixed with a single quote.' +
        staffOnly,
      request: { params: offeringParams, query: listGradesQuery },
      responses: {
        200: {
          description: 'A page of grades, or the spreadsheet',
          content: {
            'application/json': { schema: pageOf(gradeSchema) },
            'text/csv': { schema: z.string() },
          },
        },
        ...errorResponses(403, 404),
      },
    }),
    (c) => {
      const db = c.get('deps').db;
      const offering = staffOffering(db, c.get('actor'), c.req.valid('param').offering_id, 'read');
      const q = c.req.valid('query');
      if (q.format === 'csv') return c.body(gradebookCsv(loadGradebook(db, offering)), 200, csvHeaders(offering));
      return c.json(pageOfRows(c, q, listGrades(db, offering, { assignmentId: q.assignment_id, studentId: q.student_id }, q), (r) => presentGrade(r.grade, r.scoreMaximum)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/offerings/{offering_id}/students/{student_id}/grades',
      operationId: 'getStudentGrades',
      tags,
      summary: 'Grades of one student in an offering, with their weighted percent and letter',
      description:
        'Every assignment of the offering in order, with the grade or null. The student themself or an instructor ' +
        'of the offering; anyone else 403. 404 when the user was never a student of the offering.',
      request: { params: studentParams },
      responses: { 200: jsonContent(studentGradesSchema, "The student's grades"), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const actor = c.get('actor');
      const { offering_id, student_id } = c.req.valid('param');
      const offering = getOffering(db, actor.tenantId, offering_id);
      // Refused before the student is looked up, so the answer does not reveal who is enrolled.
      authorizeGradebook(actor, { action: 'read_student_grades', studentId: student_id, offering, notFoundAs: 'Course', membership: membershipIn(db, actor, offering) });
      const student = getStudent(db, offering, student_id);
      return c.json(presentStudentGrades(offering, student, studentGrades(db, offering, student)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/offerings/{offering_id}/summary',
      operationId: 'getGradebookSummary',
      tags,
      summary: 'Summary of an offering: per assignment statistics, per student standing, class distribution',
      description:
        'Over the students, active or completed (not dropped). Per assignment: count, missing (students without a grade), mean, median, min, ' +
        'max and the population standard deviation (divides by n) of the raw scores. Per student: the weighted ' +
        'percent (each grade normalised by score_maximum; weighted by assignment weight within its category; ' +
        'categories weighted by the category_weights setting, a category absent from it weighing 0, or not weighted ' +
        'at all when none are set; missing grades left out of the denominator; rounded to 2 decimals) and the ' +
        `letter of that percent on the letter_scale setting. The distribution counts students per letter.${staffOnly}`,
      request: { params: offeringParams },
      responses: { 200: jsonContent(summarySchema, 'The summary'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const offering = staffOffering(db, c.get('actor'), c.req.valid('param').offering_id, 'read');
      return c.json(presentSummary(offering, summarizeOffering(db, offering)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/gradebook/offerings/{offering_id}/settings',
      operationId: 'getGradebookSettings',
      tags,
      summary: "The offering's category weights and letter scale (defaults until changed)",
      description: staffOnly.trim(),
      request: { params: offeringParams },
      responses: { 200: jsonContent(settingsSchema, 'The settings'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const db = c.get('deps').db;
      const offering = staffOffering(db, c.get('actor'), c.req.valid('param').offering_id, 'read');
      return c.json(presentSettings(offering, getSettings(db, offering)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'put',
      path: '/api/gradebook/offerings/{offering_id}/settings',
      operationId: 'updateGradebookSettings',
      tags,
      summary: "Replace the offering's category weights and letter scale",
      description:
        'Both parts are required, as a PUT replaces the whole settings: a body that leaves one out is a 422 naming it ' +
        '(send {} for no category weighting, or the default scale A 90, B 80, C 70, D 60, F 0). Weights must be ≥ 0 ' +
        'with one above 0; the scale must be sorted highest first without ties, within 0..100, end at 0 and not ' +
        `repeat a letter; otherwise 422.${instructorOnly}`,
      request: { params: offeringParams, ...jsonBody(putSettingsBody) },
      responses: { 200: jsonContent(settingsSchema, 'The settings'), ...errorResponses(403, 404, 422) },
    }),
    (c) => {
      const { db, clock } = c.get('deps');
      const actor = c.get('actor');
      const offering = staffOffering(db, actor, c.req.valid('param').offering_id, 'manage');
      const body = c.req.valid('json');
      const settings = putSettings(db, clock, offering, actor.userId, {
        categoryWeights: body.category_weights,
        letterScale: body.letter_scale,
      });
      return c.json(presentSettings(offering, settings), 200);
    },
    // A PUT replaces the settings whole: a part left out is refused, never reset to its default.
    validationHook({ missingIsUnprocessable: true }),
  );
