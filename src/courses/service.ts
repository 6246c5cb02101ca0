// Courses: the catalogue of a tenant. Create (the creator becomes its instructor), read by id or
// slug, list for a caller, update, publish, soft delete; and `courseAccess`, which loads a course
// with the caller's enrollment in it for the course policy to judge (other areas use it too).
import { and, asc, eq, exists, gt, inArray, isNull, lt, or, sql, type SQLWrapper } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { courses, enrollments, type CourseStatus, type SelfEnrollMode } from '../../db/schema';
import type { AccessChanges } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import type { Clock } from '../lib/clock';
import { membershipOf } from '../memberships/service';
import { conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, isUniqueViolation, sqlLimit } from '../lib/sql';
import { EMPTY_JSON_ARRAY, jsonArrayFrom, jsonObject, selectJsonArray } from '../lib/json-sql';
import { preparedFor } from '../lib/prepared';
import type { CourseAccess } from './policy';
import { courseJson } from './present';
import type { CourseRow, ListedCourse } from './types';

export type { CourseRow, ListedCourse };

const MAX_GENERATED_SLUG_LENGTH = 80;

/** Latin letters that Unicode decomposition does not reduce to ASCII. */
const transliterations: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i' };

/** Title → slug: lowercase ASCII letters and digits joined by single hyphens ("Ça va?" → "ca-va"). */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[ßæœøđðłþı]/g, (ch) => transliterations[ch] ?? ch)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_GENERATED_SLUG_LENGTH)
    .replace(/-+$/, '');
  return slug || 'course';
}

/** `base` if free among the tenant's live courses, else the first free `base-2`, `base-3`, … */
export function freeSlug(tx: Db, tenantId: string, base: string): string {
  // Every `base-…` sorts between `base-` and `base.` ('.' follows '-'): one index range read.
  const taken = new Set(
    tx
      .select({ slug: courses.slug })
      .from(courses)
      .where(
        and(
          eq(courses.tenantId, tenantId),
          isNull(courses.deletedAt),
          or(eq(courses.slug, base), and(gt(courses.slug, `${base}-`), lt(courses.slug, `${base}.`))),
        ),
      )
      .all()
      .map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

const slugTaken = (slug: string) => conflict(`Another course of this tenant already has the slug "${slug}"`);

export interface NewCourse {
  tenantId: string;
  createdBy: string;
  title: string;
  slug?: string;
  description?: string | null;
}

/** The course and its creator's instructor enrollment, in one transaction. */
export function createCourse(db: Db, clock: Clock, input: NewCourse): CourseRow {
  const now = clock.now().toISOString();
  try {
    // IMMEDIATE: the free-slug read and the insert happen under the write lock, so two creates
    // with the same title cannot pick the same slug.
    return inTransaction(
      db,
      (tx) => {
        const slug = input.slug ?? freeSlug(tx, input.tenantId, slugify(input.title));
        const course = tx
          .insert(courses)
          .values({
            id: newId(),
            tenantId: input.tenantId,
            title: input.title,
            slug,
            description: input.description ?? null,
            status: 'draft',
            createdBy: input.createdBy,
            createdAt: now,
            updatedAt: now,
          })
          .returning()
          .get();
        tx.insert(enrollments)
          .values({
            id: newId(),
            tenantId: input.tenantId,
            courseId: course.id,
            userId: input.createdBy,
            role: 'instructor',
            status: 'active',
            enrolledAt: now,
            updatedAt: now,
          })
          .run();
        return course;
      },
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(input.slug ?? slugify(input.title));
    throw err;
  }
}

/** A live (not deleted) course of the tenant, or 404. */
export function getCourse(db: Db, tenantId: string, id: string): CourseRow {
  const row = db
    .select()
    .from(courses)
    .where(and(eq(courses.id, id), eq(courses.tenantId, tenantId), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Course');
  return row;
}

export function getCourseBySlug(db: Db, tenantId: string, slug: string): CourseRow {
  const row = db
    .select()
    .from(courses)
    .where(and(eq(courses.tenantId, tenantId), eq(courses.slug, slug), isNull(courses.deletedAt)))
    .get();
  if (!row) throw notFound('Course');
  return row;
}

/** A loaded course with the caller's enrollment in it, for `authorizeCourse` to judge. */
export const courseAccessOf = (db: Db, actor: Actor, course: CourseRow): CourseAccess<CourseRow> => ({
  course,
  membership: membershipOf(db, actor.tenantId, course.id, actor.userId),
});

/** A live course of the caller's tenant (404 otherwise) with the caller's enrollment in it. */
export const courseAccess = (db: Db, actor: Actor, courseId: string): CourseAccess<CourseRow> =>
  courseAccessOf(db, actor, getCourse(db, actor.tenantId, courseId));

export interface CourseListViewer {
  userId: string;
  /** Admins list every course of the tenant; others the courses they hold an enrollment in. */
  all: boolean;
  /** Only these courses (an API key's `course_ids`, courses policy's courseListLimit); null: no such limit. */
  only: readonly string[] | null;
}

/**
 * Courses of the caller: enrolled or teaching (not dropped), or all of the tenant for admins. The
 * page comes as SQLite-written JSON (presentCourse's shape), in title order.
 */
export function listCourses(
  db: Db,
  tenantId: string,
  viewer: CourseListViewer,
  filter: { status?: CourseStatus },
  page: PageQuery,
): { dataJson: string; total: number } {
  const { limit, offset } = pageBounds(page);
  const byStatus = filter.status !== undefined;
  const params = { tenantId, userId: viewer.userId, status: filter.status, limit, offset };
  if (viewer.only !== null) {
    // A key limited to a few courses: those of them the caller lists, found by id (few rows).
    if (viewer.only.length === 0) return { dataJson: EMPTY_JSON_ARRAY, total: 0 };
    const member = db
      .select({ one: sql`1` })
      .from(enrollments)
      .where(and(eq(enrollments.userId, viewer.userId), eq(enrollments.courseId, courses.id), inArray(enrollments.status, ['active', 'completed'])));
    const ordered = db
      .select({ rowid: sql<number>`${courses}.rowid` })
      .from(courses)
      .where(and(eq(courses.tenantId, tenantId), isNull(courses.deletedAt), inArray(courses.id, [...viewer.only]), byStatus ? eq(courses.status, filter.status!) : undefined, viewer.all ? undefined : exists(member)))
      .orderBy(asc(courses.title), asc(courses.id))
      .all()
      .map((r) => r.rowid);
    const pageRowIds = ordered.slice(offset, offset + limit);
    const statements = courseListStatements(db, byStatus).member;
    const dataJson = pageRowIds.length > 0 ? jsonArrayFrom(statements.page.get({ rowids: JSON.stringify(pageRowIds) })) : EMPTY_JSON_ARRAY;
    return { dataJson, total: ordered.length };
  }
  if (viewer.all) {
    const statements = courseListStatements(db, byStatus).all;
    return { dataJson: jsonArrayFrom(statements.page.get(params)), total: statements.count.get(params)?.n ?? 0 };
  }
  const statements = courseListStatements(db, byStatus).member;
  const ordered = statements.ordered.values(params);
  const pageRowIds = ordered.slice(offset, offset + limit).map(([rowid]) => rowid);
  const dataJson = pageRowIds.length > 0 ? jsonArrayFrom(statements.page.get({ rowids: JSON.stringify(pageRowIds) })) : EMPTY_JSON_ARRAY;
  return { dataJson, total: ordered.length };
}

/** The course list's statements, prepared once per database and status filter. */
function courseListStatements(db: Db, byStatus: boolean) {
  return preparedFor(db, `courses:list:${byStatus}`, () => {
    const p = sql.placeholder;
    const live = and(eq(courses.tenantId, p('tenantId')), isNull(courses.deletedAt), byStatus ? eq(courses.status, p('status')) : undefined);
    const inTitleOrder = [asc(courses.title), asc(courses.id)];
    const pageJson = (pageRowIds: SQLWrapper) =>
      selectJsonArray(
        db,
        db
          .select({ json: jsonObject(courseJson).as('json') })
          .from(courses)
          .where(inArray(sql`${courses}.rowid`, pageRowIds))
          .orderBy(...inTitleOrder),
      ).prepare();
    return {
      // The tenant's courses: the page is chosen on the covering index (title, id) and only its
      // rows are read in full.
      all: {
        page: pageJson(db.select({ rowid: sql<number>`${courses}.rowid` }).from(courses).where(live).orderBy(...inTitleOrder).limit(sqlLimit(p('limit'))).offset(sqlLimit(p('offset')))),
        count: db.select({ n: countAll }).from(courses).where(live).prepare(),
      },
      // A member's courses: all of them as rowids in title order, in one pass over their
      // enrollments (the total is how many there are), then only the page's rows in full; a count
      // and a page query walked the same join twice. CROSS JOIN keeps SQLite driving from the
      // caller's enrollments (user_id, status index): the cost follows how many courses they are
      // in, not how many the tenant has.
      member: {
        ordered: db
          .select({ rowid: sql<number>`${courses}.rowid` })
          .from(enrollments)
          .crossJoin(courses)
          .where(and(eq(enrollments.userId, p('userId')), inArray(enrollments.status, ['active', 'completed']), eq(courses.id, enrollments.courseId), live))
          .orderBy(...inTitleOrder)
          .prepare(),
        page: pageJson(sql`(select value from json_each(${p('rowids')}))`),
      },
    };
  });
}

export interface CourseChanges {
  title?: string;
  slug?: string;
  description?: string | null;
  /** The enrolment policy's fields to change (null clears capacity or a date). */
  enrollment?: { self_enroll?: SelfEnrollMode; capacity?: number | null; opens_at?: string | null; closes_at?: string | null };
}

/** The enrolment policy as it will be once `changes` apply; 422 when it closes before it opens. */
function enrollmentPolicyAfter(course: CourseRow, changes: NonNullable<CourseChanges['enrollment']>) {
  const iso = (at: string | null | undefined, kept: string | null) => (at === undefined ? kept : at === null ? null : new Date(at).toISOString());
  const next = {
    selfEnroll: changes.self_enroll ?? course.selfEnroll,
    enrollmentCapacity: changes.capacity === undefined ? course.enrollmentCapacity : changes.capacity,
    enrollmentOpensAt: iso(changes.opens_at, course.enrollmentOpensAt),
    enrollmentClosesAt: iso(changes.closes_at, course.enrollmentClosesAt),
  };
  if (next.enrollmentOpensAt !== null && next.enrollmentClosesAt !== null && Date.parse(next.enrollmentClosesAt) <= Date.parse(next.enrollmentOpensAt)) {
    throw unprocessable('enrollment.closes_at must be after enrollment.opens_at', [{ path: 'enrollment.closes_at', message: 'must be after opens_at' }]);
  }
  return next;
}

export function updateCourse(db: Db, clock: Clock, course: CourseRow, changes: CourseChanges): CourseRow {
  const enrollment = changes.enrollment ? enrollmentPolicyAfter(course, changes.enrollment) : {};
  try {
    return db
      .update(courses)
      .set({
        ...(changes.title !== undefined ? { title: changes.title } : {}),
        ...(changes.slug !== undefined ? { slug: changes.slug } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...enrollment,
        updatedAt: clock.now().toISOString(),
      })
      .where(and(eq(courses.id, course.id), eq(courses.tenantId, course.tenantId)))
      .returning()
      .get()!;
  } catch (err) {
    if (isUniqueViolation(err) && changes.slug !== undefined) throw slugTaken(changes.slug);
    throw err;
  }
}

/** `draft` → `published`; the condition is in the update, so of two racing publishes one gets 409. */
export function publishCourse(db: Db, clock: Clock, course: CourseRow): CourseRow {
  const now = clock.now().toISOString();
  const row = db
    .update(courses)
    .set({ status: 'published', publishedAt: now, updatedAt: now })
    .where(and(eq(courses.id, course.id), eq(courses.tenantId, course.tenantId), eq(courses.status, 'draft')))
    .returning()
    .get();
  if (!row) throw conflict('The course is already published');
  return row;
}

/** Soft delete: the course and everything in it stay in the database, hidden from every list and lookup. */
/** Everyone's access to the course ends with it; live connections re-check. */
export function softDeleteCourse(db: Db, clock: Clock, access: AccessChanges, course: CourseRow): void {
  const now = clock.now().toISOString();
  db.update(courses)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(eq(courses.id, course.id), eq(courses.tenantId, course.tenantId)))
    .run();
  access.narrowed();
}
