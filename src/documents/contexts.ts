// Where a document belongs: links to courses, modules and activities the caller may add documents
// to, and the contexts a caller may choose from. Modules and activities are read from their tables
// here (not through their areas, which would make a folder cycle); a link whose module or activity
// is deleted stays as a row but joins nothing, so it drops out of every view.
import { and, asc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import { type Db } from '../../db/client';
import {
  activities,
  courseModules,
  courses,
  documentContexts,
  type DocumentContextType,
  type EnrollmentRole,
} from '../../db/schema';
import type { Clock } from '../lib/clock';
import { activeCourseRoles, membershipOf } from '../memberships/service';
import { notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { countAll } from '../lib/sql';
import { canAddToCourse, canUseEveryCourse } from './policy';
import { courseListLimit, keyReachesCourse } from '../courses/policy';
import type { ContextRef, DocumentActor, DocumentRow } from './types';

export type { ContextRef };

export interface ContextTarget {
  type: DocumentContextType;
  id: string;
  courseId: string;
  title: string;
}

/** The course a caller may add documents to (the policy's rule, with their enrollment read only when needed). */
const mayAddToCourse = (db: Db, actor: DocumentActor, courseId: string): boolean =>
  keyReachesCourse(actor, courseId) && (canUseEveryCourse(actor) || canAddToCourse(actor, membershipOf(db, actor.tenantId, courseId, actor.userId)));

const notLinkable = (ref: ContextRef) =>
  unprocessable(`context_id does not name a ${ref.type} you can add documents to`, [
    { path: 'context_id', message: `no such ${ref.type} among your contexts` },
  ]);

/**
 * Checks a context a document is to be linked to: it exists in the caller's tenant and belongs to a
 * course the caller may add documents to (otherwise 422, saying no more than that).
 */
export function resolveContext(db: Db, actor: DocumentActor, ref: ContextRef): ContextTarget {
  if (ref.type === 'course') {
    const course = db
      .select({ id: courses.id, title: courses.title })
      .from(courses)
      .where(and(eq(courses.id, ref.id), eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt)))
      .get();
    if (!course || !mayAddToCourse(db, actor, course.id)) throw notLinkable(ref);
    return { type: 'course', id: course.id, courseId: course.id, title: course.title };
  }
  const item = courseItemOf(db, ref.type, actor.tenantId, ref.id);
  if (!item || !mayAddToCourse(db, actor, item.courseId)) throw notLinkable(ref);
  return { type: ref.type, id: item.id, courseId: item.courseId, title: item.title };
}

/** A module or an activity of a live course of the tenant. */
function courseItemOf(db: Db, type: 'module' | 'activity', tenantId: string, id: string) {
  const table = type === 'module' ? courseModules : activities;
  return db
    .select({ id: table.id, courseId: table.courseId, title: table.title })
    .from(table)
    .innerJoin(courses, eq(courses.id, table.courseId))
    .where(and(eq(table.id, id), eq(table.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
}

export interface AvailableContext {
  type: 'personal' | 'course';
  id: string | null;
  title: string;
  courseRole: EnrollmentRole | null;
}

/**
 * Where the caller may put documents: their personal space, then the courses they teach or are
 * enrolled in (active), by title. Tenant admins, instructors of every course, may use any course.
 */
export function availableContexts(db: Db, actor: DocumentActor): AvailableContext[] {
  const roles = new Map(activeCourseRoles(db, actor.tenantId, actor.userId).map((r) => [r.courseId, r.role]));
  const reach = courseListLimit(actor);
  const conditions = [eq(courses.tenantId, actor.tenantId), isNull(courses.deletedAt)];
  if (reach !== null) conditions.push(inArray(courses.id, [...reach]));
  if (!canUseEveryCourse(actor)) {
    if (roles.size === 0) return [personalContext];
    conditions.push(inArray(courses.id, [...roles.keys()]));
  }
  const rows = db
    .select({ id: courses.id, title: courses.title })
    .from(courses)
    .where(and(...conditions))
    .orderBy(asc(courses.title), asc(courses.id))
    .all();
  return [personalContext, ...rows.map((c) => ({ type: 'course' as const, id: c.id, title: c.title, courseRole: roles.get(c.id) ?? null }))];
}

const personalContext: AvailableContext = { type: 'personal', id: null, title: 'Personal', courseRole: null };

export interface LinkedContext {
  type: DocumentContextType;
  id: string;
  title: string;
  courseId: string;
  createdBy: string | null;
  createdAt: string;
}

/** A document's links whose target still exists (a deleted course, module or activity drops out of sight). */
// A link joins the row its type names; the ones whose target is gone join nothing. Every query
// over links left-joins all three and keeps `linkTargetExists`.
export const linkedCourse = and(eq(documentContexts.contextType, 'course'), eq(courses.id, documentContexts.contextId), isNull(courses.deletedAt));
export const linkedModule = and(eq(documentContexts.contextType, 'module'), eq(courseModules.id, documentContexts.contextId));
export const linkedActivity = and(eq(documentContexts.contextType, 'activity'), eq(activities.id, documentContexts.contextId));
export const linkTargetExists = or(isNotNull(courses.id), isNotNull(courseModules.id), isNotNull(activities.id));
/** The course a live link belongs to, whatever its type. */
export const courseOfLink = sql<string>`coalesce(${courses.id}, ${courseModules.courseId}, ${activities.courseId})`;

/** The ids of the documents with a live link matching `where` (as a subquery for lists filtered by context). */
export function documentsLinked(db: Db, where: SQL | undefined) {
  return db
    .select({ id: documentContexts.documentId })
    .from(documentContexts)
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .leftJoin(activities, linkedActivity)
    .where(and(where, linkTargetExists));
}

/** A document's links with the titles of what they point at; `where` narrows them. */
function linkedContexts(db: Db, where: SQL | undefined) {
  return db
    .select({
      type: documentContexts.contextType,
      id: documentContexts.contextId,
      courseTitle: courses.title,
      moduleTitle: courseModules.title,
      activityTitle: activities.title,
      courseId: courseOfLink,
      createdBy: documentContexts.createdBy,
      createdAt: documentContexts.createdAt,
    })
    .from(documentContexts)
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .leftJoin(activities, linkedActivity)
    .where(and(where, linkTargetExists));
}

function toLinkedContext(r: ReturnType<ReturnType<typeof linkedContexts>['all']>[number]): LinkedContext {
  return {
    type: r.type,
    id: r.id,
    title: (r.type === 'course' ? r.courseTitle : r.type === 'module' ? r.moduleTitle : r.activityTitle) ?? '',
    courseId: r.courseId,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
  };
}

/** A document's links; `reach` (an API key's course_ids, courses policy's courseListLimit) leaves out other courses' links. */
export function listDocumentContexts(db: Db, doc: DocumentRow, page: PageQuery, reach: readonly string[] | null = null): { rows: LinkedContext[]; total: number } {
  const { limit, offset } = sqlPageBounds(page);
  const reached = reach === null ? undefined : inArray(courseOfLink, [...reach]);
  const where = and(eq(documentContexts.documentId, doc.id), linkTargetExists, reached);
  const rows = linkedContexts(db, and(eq(documentContexts.documentId, doc.id), reached))
    .orderBy(asc(documentContexts.createdAt), asc(documentContexts.contextId))
    .limit(limit)
    .offset(offset)
    .all();
  const total =
    db
      .select({ n: countAll })
      .from(documentContexts)
      .leftJoin(courses, linkedCourse)
      .leftJoin(courseModules, linkedModule)
      .leftJoin(activities, linkedActivity)
      .where(where)
      .get()?.n ?? 0;
  return { rows: rows.map(toLinkedContext), total };
}

/** One link of the document, or 404. */
export function getDocumentContext(db: Db, doc: DocumentRow, type: DocumentContextType, id: string, reach: readonly string[] | null = null): LinkedContext {
  const row = linkedContexts(
    db,
    and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, type), eq(documentContexts.contextId, id)),
  ).get();
  if (!row || (reach !== null && !reach.includes(row.courseId))) throw notFound('Link');
  return toLinkedContext(row);
}

/** Links a document to a checked context; linking twice is harmless. Returns whether it was new. */
export function linkContext(db: Db, clock: Clock, actor: DocumentActor, doc: DocumentRow, target: ContextTarget): LinkedContext & { created: boolean } {
  const createdAt = clock.now().toISOString();
  const result = db
    .insert(documentContexts)
    .values({ documentId: doc.id, tenantId: doc.tenantId, contextType: target.type, contextId: target.id, createdBy: actor.userId, createdAt })
    .onConflictDoNothing()
    .run();
  const row = db
    .select()
    .from(documentContexts)
    .where(and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, target.type), eq(documentContexts.contextId, target.id)))
    .get()!;
  return {
    type: target.type,
    id: target.id,
    title: target.title,
    courseId: target.courseId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    created: result.changes > 0,
  };
}

export function unlinkContext(db: Db, doc: DocumentRow, ref: ContextRef): void {
  const result = db
    .delete(documentContexts)
    .where(and(eq(documentContexts.documentId, doc.id), eq(documentContexts.contextType, ref.type), eq(documentContexts.contextId, ref.id)))
    .run();
  if (result.changes === 0) throw notFound('Context link');
}
