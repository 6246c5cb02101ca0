// What tools call with their service tokens: AGS 2.0 line items (gradebook assignments), scores
// and results, and NRPS 2.0 memberships. A token reaches only courses of its tool's tenant where
// the tool is used (an `lti` activity of it): another course is 404, as is any of another tenant.
// A tool sees the line items of its own activities and those it created.
import { and, asc, eq, exists, inArray, isNull, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { courses, enrollments, gradebookAssignments, gradebookGrades, ltiLineItems, ltiLinks, ltiScores, users } from '../../db/schema';
import type { Deps } from '../context';
import { createAssignment, deleteAssignment, getAssignment, updateAssignment, type AssignmentRow } from '../gradebook/assignments';
import { recordGrade } from '../gradebook/grades';
import type { Offering } from '../gradebook/service';
import { AppError, notFound, unprocessable } from '../http/errors';
import { yieldForIo } from '../lib/event-loop';
import { preparedFor } from '../lib/prepared';
import { isStudentOfRecord } from '../memberships/service';
import { courseRoleOfFilter, lisRoles, nameParts } from './claims';
import type { ToolRow } from './tools';
import type { PlatformUrls } from './urls';

export interface ServiceCaller {
  tool: ToolRow;
  scopes: string[];
}

/** 403 with the Bearer challenge when the token holds none of `needed`. */
export function requireScope(caller: ServiceCaller, ...needed: string[]): void {
  if (!needed.some((s) => caller.scopes.includes(s))) {
    throw new AppError('forbidden', `This token lacks the scope: ${needed.join(' or ')}`, { headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed.join(' ')}"` } });
  }
}

/** The course, when it is of the tool's tenant, live, and uses the tool; 404 otherwise. */
export function serviceCourse(db: Db, caller: ServiceCaller, courseId: string) {
  // Every service call asks this and lineItemOf: prepared once per database (bench/lti.ts, RESULTS.md).
  const query = preparedFor(db, 'lti:service-course', () =>
    db
      .select()
      .from(courses)
      .where(
        and(
          eq(courses.id, sql.placeholder('courseId')),
          eq(courses.tenantId, sql.placeholder('tenantId')),
          isNull(courses.deletedAt),
          exists(db.select({ one: sql`1` }).from(ltiLinks).where(and(eq(ltiLinks.courseId, courses.id), eq(ltiLinks.toolId, sql.placeholder('toolId'))))),
        ),
      )
      .prepare(),
  );
  const course = query.get({ courseId, tenantId: caller.tool.tenantId, toolId: caller.tool.id });
  if (!course) throw notFound('Course');
  const offering: Offering = { id: course.id, tenantId: course.tenantId, slug: course.slug, status: course.status };
  return { course, offering };
}

/** The line items (assignments) of the course the tool may see. */
const visibleTo = (toolId: string | Placeholder): SQL =>
  or(
    inArray(gradebookAssignments.activityId, sql`(select ${ltiLinks.activityId} from ${ltiLinks} where ${ltiLinks.toolId} = ${toolId})`),
    inArray(gradebookAssignments.id, sql`(select ${ltiLineItems.assignmentId} from ${ltiLineItems} where ${ltiLineItems.toolId} = ${toolId})`),
  )!;

export function presentLineItem(urls: PlatformUrls, row: AssignmentRow, resourceLinkId: string | null) {
  return {
    id: urls.lineItem(row.courseId, row.id),
    scoreMaximum: row.scoreMaximum,
    label: row.label,
    ...(resourceLinkId ? { resourceLinkId } : {}),
    ...(row.resourceId ? { resourceId: row.resourceId } : {}),
    ...(row.tag ? { tag: row.tag } : {}),
    ...(row.dueAt ? { endDateTime: row.dueAt } : {}),
  };
}

export function listLineItems(db: Db, caller: ServiceCaller, courseId: string, filter: { resourceLinkId?: string; resourceId?: string; tag?: string }, limit: number, offset: number) {
  const where = and(
    eq(gradebookAssignments.courseId, courseId),
    eq(gradebookAssignments.tenantId, caller.tool.tenantId),
    visibleTo(caller.tool.id),
    filter.resourceId !== undefined ? eq(gradebookAssignments.resourceId, filter.resourceId) : undefined,
    filter.tag !== undefined ? eq(gradebookAssignments.tag, filter.tag) : undefined,
    filter.resourceLinkId !== undefined ? eq(ltiLinks.resourceLinkId, filter.resourceLinkId) : undefined,
  );
  const rows = db
    .select({ assignment: gradebookAssignments, resourceLinkId: ltiLinks.resourceLinkId })
    .from(gradebookAssignments)
    .leftJoin(ltiLinks, eq(ltiLinks.activityId, gradebookAssignments.activityId))
    .where(where)
    .orderBy(asc(gradebookAssignments.position), asc(gradebookAssignments.id))
    .limit(limit + 1)
    .offset(offset)
    .all();
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

export function lineItemOf(db: Db, caller: ServiceCaller, courseId: string, id: string): { assignment: AssignmentRow; resourceLinkId: string | null } {
  const query = preparedFor(db, 'lti:line-item', () =>
    db
      .select({ assignment: gradebookAssignments, resourceLinkId: ltiLinks.resourceLinkId })
      .from(gradebookAssignments)
      .leftJoin(ltiLinks, eq(ltiLinks.activityId, gradebookAssignments.activityId))
      .where(
        and(
          eq(gradebookAssignments.id, sql.placeholder('id')),
          eq(gradebookAssignments.courseId, sql.placeholder('courseId')),
          eq(gradebookAssignments.tenantId, sql.placeholder('tenantId')),
          visibleTo(sql.placeholder('toolId')),
        ),
      )
      .prepare(),
  );
  const row = query.get({ id, courseId, tenantId: caller.tool.tenantId, toolId: caller.tool.id });
  if (!row) throw notFound('Line item');
  return row;
}

export interface LineItemInput {
  scoreMaximum: number;
  label: string;
  resourceId?: string | null;
  tag?: string | null;
  resourceLinkId?: string | null;
  endDateTime?: string | null;
}

function activityOfLink(db: Db, caller: ServiceCaller, courseId: string, resourceLinkId: string): string {
  const link = db
    .select({ activityId: ltiLinks.activityId })
    .from(ltiLinks)
    .where(and(eq(ltiLinks.resourceLinkId, resourceLinkId), eq(ltiLinks.courseId, courseId), eq(ltiLinks.toolId, caller.tool.id)))
    .get();
  if (!link) throw unprocessable('resourceLinkId is not a resource link of this tool in this course', [{ path: 'resourceLinkId', message: 'unknown resource link' }]);
  return link.activityId;
}

function ownerOf(caller: ServiceCaller): string {
  if (!caller.tool.ownerId) throw new AppError('conflict', 'This tool has no admin to record its grades in the name of: enable it again');
  return caller.tool.ownerId;
}

export function createLineItem(deps: Deps, caller: ServiceCaller, offering: Offering, input: LineItemInput): AssignmentRow {
  const activityId = input.resourceLinkId ? activityOfLink(deps.db, caller, offering.id, input.resourceLinkId) : null;
  return inTransaction(deps.db, (tx) => {
    const row = createAssignment(tx, deps.clock, offering, ownerOf(caller), {
      label: input.label,
      tag: input.tag ?? null,
      resourceId: input.resourceId ?? null,
      activityId,
      scoreMaximum: input.scoreMaximum,
      weight: 1,
      category: 'LTI',
      dueAt: input.endDateTime ? new Date(input.endDateTime).toISOString() : null,
      gradingType: 'points',
    });
    tx.insert(ltiLineItems).values({ assignmentId: row.id, toolId: caller.tool.id, tenantId: offering.tenantId }).run();
    return row;
  });
}

export function updateLineItem(deps: Deps, caller: ServiceCaller, offering: Offering, assignment: AssignmentRow, input: LineItemInput): AssignmentRow {
  const activityId = input.resourceLinkId ? activityOfLink(deps.db, caller, offering.id, input.resourceLinkId) : assignment.activityId;
  return updateAssignment(deps.db, deps.clock, offering, assignment, {
    label: input.label,
    scoreMaximum: input.scoreMaximum,
    ...(input.resourceId !== undefined ? { resourceId: input.resourceId } : {}),
    ...(input.tag !== undefined ? { tag: input.tag } : {}),
    ...(input.endDateTime !== undefined ? { dueAt: input.endDateTime ? new Date(input.endDateTime).toISOString() : null } : {}),
    activityId,
  });
}

export function removeLineItem(db: Db, tenantId: string, assignment: AssignmentRow): void {
  deleteAssignment(db, getAssignment(db, tenantId, assignment.id).assignment);
}

export interface ScoreInput {
  userId: string;
  scoreGiven?: number;
  scoreMaximum?: number;
  activityProgress: string;
  gradingProgress: string;
  timestamp: string;
  comment?: string;
}

/** recordScore's statements, prepared once per database (200 scores/s beside the REST API: bench/lti.ts). */
function scoreStatements(db: Db) {
  const p = sql.placeholder;
  return preparedFor(db, 'lti:score', () => ({
    assignment: db
      .select()
      .from(gradebookAssignments)
      .where(and(eq(gradebookAssignments.id, p('id')), eq(gradebookAssignments.tenantId, p('tenantId'))))
      .prepare(),
    kept: db.select().from(ltiScores).where(and(eq(ltiScores.assignmentId, p('assignmentId')), eq(ltiScores.userId, p('userId')))).prepare(),
    upsert: db
      .insert(ltiScores)
      .values({
        tenantId: p('tenantId'),
        assignmentId: p('assignmentId'),
        userId: p('userId'),
        scoreGiven: p('scoreGiven'),
        scoreMaximum: p('scoreMaximum'),
        activityProgress: p('activityProgress'),
        gradingProgress: p('gradingProgress'),
        comment: p('comment'),
        timestamp: p('timestamp'),
        updatedAt: p('updatedAt'),
      })
      .onConflictDoUpdate({
        target: [ltiScores.assignmentId, ltiScores.userId],
        set: {
          scoreGiven: sql`excluded.score_given`,
          scoreMaximum: sql`excluded.score_maximum`,
          activityProgress: sql`excluded.activity_progress`,
          gradingProgress: sql`excluded.grading_progress`,
          comment: sql`excluded.comment`,
          timestamp: sql`excluded.timestamp`,
          updatedAt: sql`excluded.updated_at`,
        },
      })
      .prepare(),
  }));
}

/**
 * Keeps the score (an older `timestamp` than the one kept is ignored), and records a grade when
 * `gradingProgress` is `FullyGraded`: `scoreGiven / scoreMaximum` of the assignment's maximum,
 * through the gradebook (history, event, webhooks), in the name of the tool's admin.
 */
export async function recordScore(deps: Deps, caller: ServiceCaller, assignment: AssignmentRow, input: ScoreInput): Promise<'recorded' | 'ignored'> {
  const { db, clock } = deps;
  const graded = input.gradingProgress === 'FullyGraded' && input.scoreGiven !== undefined;
  if (graded && input.scoreGiven! > input.scoreMaximum!) {
    throw unprocessable('scoreGiven exceeds scoreMaximum', [{ path: 'scoreGiven', message: 'must not exceed scoreMaximum' }]);
  }
  const gradedBy = graded ? ownerOf(caller) : null;
  const timestamp = new Date(input.timestamp).toISOString();
  // The request's reading (its token, course, line item, body) and its write in two turns of the
  // event loop: a request that came in meanwhile waits for one of them, not for both (bench/lti.ts).
  await yieldForIo();
  return inTransaction(db, (tx) => {
    const statements = scoreStatements(db);
    // The line item as it is now: during the yield it may have been changed or deleted.
    const current = statements.assignment.get({ id: assignment.id, tenantId: assignment.tenantId });
    if (!current) throw notFound('Line item');
    if (!isStudentOfRecord(db, current.tenantId, current.courseId, input.userId)) {
      throw unprocessable('userId is not a student of this course', [{ path: 'userId', message: 'not a student of this course' }]);
    }
    const kept = statements.kept.get({ assignmentId: current.id, userId: input.userId });
    if (kept && Date.parse(kept.timestamp) > Date.parse(timestamp)) return 'ignored';
    const values = {
      scoreGiven: input.scoreGiven ?? null,
      scoreMaximum: input.scoreMaximum ?? null,
      activityProgress: input.activityProgress,
      gradingProgress: input.gradingProgress,
      comment: input.comment ?? null,
      timestamp,
      updatedAt: clock.now().toISOString(),
    };
    statements.upsert.run({ ...values, assignmentId: current.id, userId: input.userId, tenantId: current.tenantId });
    if (graded) {
      // Of the line item's own maximum, to 4 decimals; rounding never takes it past that maximum.
      const score = Math.min(current.scoreMaximum, Math.round((input.scoreGiven! / input.scoreMaximum!) * current.scoreMaximum * 10_000) / 10_000);
      recordGrade(tx, clock, current, input.userId, gradedBy!, { score, comment: input.comment ?? null });
    }
    return 'recorded';
  });
}

export function listResults(db: Db, assignment: AssignmentRow, userId: string | undefined, limit: number, offset: number) {
  const rows = db
    .select({ grade: gradebookGrades })
    .from(gradebookGrades)
    .where(and(eq(gradebookGrades.assignmentId, assignment.id), userId ? eq(gradebookGrades.studentId, userId) : undefined))
    .orderBy(asc(gradebookGrades.studentId))
    .limit(limit + 1)
    .offset(offset)
    .all();
  return { rows: rows.slice(0, limit).map((r) => r.grade), more: rows.length > limit };
}

/** NRPS members of the course: enrollments with LIS roles and status; names and emails as the tool may see them. */
export function listMembers(db: Db, caller: ServiceCaller, courseId: string, role: string | undefined, limit: number, offset: number) {
  const courseRole = role === undefined ? undefined : courseRoleOfFilter(role);
  if (role !== undefined && courseRole === null) return { members: [], more: false };
  const rows = db
    .select({ userId: users.id, name: users.name, email: users.email, deletedAt: users.deletedAt, tenantRole: users.role, role: enrollments.role, status: enrollments.status })
    .from(enrollments)
    .innerJoin(users, eq(users.id, enrollments.userId))
    .where(and(eq(enrollments.courseId, courseId), eq(enrollments.tenantId, caller.tool.tenantId), courseRole ? eq(enrollments.role, courseRole) : undefined))
    .orderBy(asc(enrollments.userId))
    .limit(limit + 1)
    .offset(offset)
    .all();
  const members = rows.slice(0, limit).map((r) => ({
    status: r.deletedAt ? 'Deleted' : r.status === 'active' ? 'Active' : 'Inactive',
    user_id: r.userId,
    roles: lisRoles(r.role, false),
    ...(caller.tool.shareName ? { name: r.name, ...nameParts(r.name) } : {}),
    ...(caller.tool.shareEmail ? { email: r.email } : {}),
  }));
  return { members, more: rows.length > limit };
}
