// Enrollments: who is in which course, with which role and status. Enrol one (self or by an
// instructor; a dropped enrollment comes back to life with the same id) or many in one
// transaction, list with the caller's visibility applied in the query, complete, drop, progress.
import { and, asc, eq, getTableColumns, inArray, isNull, ne, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { inTransaction, type Db } from '../../db/client';
import { courseEnrollmentCounts, courses, enrollments, users, type EnrollmentRole, type EnrollmentStatus } from '../../db/schema';
import type { AccessChanges } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import type { Clock } from '../lib/clock';
import { EMPTY_JSON_ARRAY, jsonArrayFrom, jsonObject, selectJsonArray } from '../lib/json-sql';
import { preparedFor } from '../lib/prepared';
import { learnerCourseState } from '../sequencing/state';
import { AppError, conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, sqlLimit } from '../lib/sql';
import { activeCourseRoles } from '../memberships/service';
import { appendEvent, appendEvents, type NewEvent } from '../events/log';
import { canListCourseEnrollments, canManageAllEnrollments, courseListLimit, isCourseStaff, keyReachesCourse, type Membership } from './policy';
import { enrollmentJson } from './present';
import { ROSTER_START, RosterAnchors } from './roster-anchors';
import type { EnrollmentRow, EnrollmentView, RosterRow } from './types';

export type { EnrollmentRow, EnrollmentView, RosterRow };

// SQLite allows 32,766 bound values per statement; 500 ids (or rows of 10 columns) stay far below.
const CHUNK = 500;
const chunks = <T>(items: T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
};

/** Flat columns: the row is the view as it is, with no per-row reshaping. */
const viewColumns = { ...getTableColumns(enrollments), userName: users.name, userEmail: users.email };

/** Enrollments of live courses joined to their users, under `where`. */
function selectViews(db: Db, where: SQL | undefined) {
  return db
    .select(viewColumns)
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .innerJoin(users, eq(users.id, enrollments.userId))
    .where(and(isNull(courses.deletedAt), where));
}

/** An enrollment in a live course of the tenant, or 404. */
export function getEnrollment(db: Db, tenantId: string, id: string): EnrollmentView {
  const row = selectViews(db, and(eq(enrollments.id, id), eq(enrollments.tenantId, tenantId))).get();
  if (!row) throw notFound('Enrollment');
  return row;
}

/** The user's enrollment in a live course of the tenant (any status), or 404. */
export function getCourseEnrollment(db: Db, tenantId: string, courseId: string, userId: string): EnrollmentView {
  const row = selectViews(
    db,
    and(eq(enrollments.tenantId, tenantId), eq(enrollments.courseId, courseId), eq(enrollments.userId, userId)),
  ).get();
  if (!row) throw notFound('Enrollment');
  return row;
}

/** A live course of the caller's tenant with the caller's enrollment in it, in one read. */
function courseWithMembership(db: Db, actor: Actor, courseId: string): { id: string; membership: Membership | undefined } | undefined {
  const statement = preparedFor(db, 'enrollments:course-with-membership', () =>
    db
      .select({ id: courses.id, role: enrollments.role, status: enrollments.status })
      .from(courses)
      .leftJoin(enrollments, and(eq(enrollments.courseId, courses.id), eq(enrollments.userId, sql.placeholder('userId'))))
      .where(and(eq(courses.id, sql.placeholder('courseId')), eq(courses.tenantId, sql.placeholder('tenantId')), isNull(courses.deletedAt)))
      .prepare(),
  );
  const row = statement.get({ courseId, tenantId: actor.tenantId, userId: actor.userId });
  if (!row) return undefined;
  return { id: row.id, membership: row.role && row.status ? { role: row.role, status: row.status } : undefined };
}

/** The enrollments whose rowids `pageRowIds` selects, as one SQLite-written JSON array, in enrolment order. */
function enrollmentPageJson(db: Db, pageRowIds: SQLWrapper) {
  return selectJsonArray(
    db,
    db
      .select({ json: jsonObject(enrollmentJson).as('json') })
      .from(enrollments)
      .innerJoin(users, eq(users.id, enrollments.userId))
      .where(inArray(sql`${enrollments}.rowid`, pageRowIds))
      .orderBy(asc(enrollments.enrolledAt), asc(enrollments.id)),
  );
}

/**
 * A course's roster, prepared per combination of filters: the count (with the list's change
 * counter), the key of an entry some way after a key, and the page from a key. The page is chosen
 * on the (course_id, enrolled_at, id) index alone and only its rows are joined to users, so a
 * deep page does not join every row it skips; it starts from the nearest remembered anchor
 * (./roster-anchors.ts), so it skips fewer than a hundred index entries wherever it is.
 */
function rosterStatements(db: Db, has: { own: boolean; user: boolean; status: boolean; role: boolean }) {
  const key = `enrollments:roster:${Number(has.own)}${Number(has.user)}${Number(has.status)}${Number(has.role)}`;
  return preparedFor(db, key, () => {
    const p = sql.placeholder;
    const page = alias(enrollments, 'roster_page');
    const where = and(
      eq(page.courseId, p('courseId')),
      has.own ? eq(page.userId, p('self')) : undefined,
      has.user ? eq(page.userId, p('userId')) : undefined,
      has.status ? eq(page.status, p('status')) : undefined,
      has.role ? eq(page.role, p('role')) : undefined,
      // A row-value comparison SQLite answers with a range of the index.
      sql`(${page.enrolledAt}, ${page.id}) >= (${p('fromAt')}, ${p('fromId')})`,
    );
    const inOrder = [asc(page.enrolledAt), asc(page.id)];
    // Row ids, not enrollment ids: the outer read then goes straight to each row, with no
    // lookup through the primary-key index (a third of the page's cost at 100 rows).
    const pageRowIds = db
      .select({ rowid: sql<number>`${page}.rowid` })
      .from(page)
      .where(where)
      .orderBy(...inOrder)
      .limit(sqlLimit(p('limit')))
      .offset(sqlLimit(p('skip')));
    return {
      page: enrollmentPageJson(db, pageRowIds).prepare(),
      keyAt: db
        .select({ enrolledAt: page.enrolledAt, id: page.id })
        .from(page)
        .where(where)
        .orderBy(...inOrder)
        .limit(sqlLimit(1))
        .offset(sqlLimit(p('skip')))
        .prepare(),
      // Without a user filter the total (and the list's change counter) comes from the
      // trigger-kept counts: at most nine rows.
      count:
        has.own || has.user
          ? db.select({ n: countAll, changes: sql<number>`0` }).from(page).where(where).prepare()
          : db
              .select({
                n: sql<number>`coalesce(sum(${courseEnrollmentCounts.n}), 0)`.mapWith(Number),
                changes: sql<number>`coalesce(sum(${courseEnrollmentCounts.changes}), 0)`.mapWith(Number),
              })
              .from(courseEnrollmentCounts)
              .where(
                and(
                  eq(courseEnrollmentCounts.courseId, p('courseId')),
                  has.status ? eq(courseEnrollmentCounts.status, p('status')) : undefined,
                  has.role ? eq(courseEnrollmentCounts.role, p('role')) : undefined,
                ),
              )
              .prepare(),
    };
  });
}

export interface EnrollmentFilter {
  courseId?: string;
  userId?: string;
  status?: EnrollmentStatus;
  role?: EnrollmentRole;
}

/**
 * Enrollments the caller may see, filtered, in enrolment order. Visibility is part of the query:
 * admins see the tenant's; others their own and those of the courses they teach (instructor or TA).
 */
export function listEnrollments(db: Db, actor: Actor, filter: EnrollmentFilter, page: PageQuery): { dataJson: string; total: number } {
  const { limit, offset } = pageBounds(page);
  if (filter.courseId) {
    const course = keyReachesCourse(actor, filter.courseId) ? courseWithMembership(db, actor, filter.courseId) : undefined;
    if (!course) return { dataJson: EMPTY_JSON_ARRAY, total: 0 };
    const own = !canListCourseEnrollments(actor, course.membership);
    const statements = rosterStatements(db, { own, user: !!filter.userId, status: !!filter.status, role: !!filter.role });
    const params = { courseId: course.id, self: actor.userId, userId: filter.userId, status: filter.status, role: filter.role };
    const { n: total, changes } = statements.count.get({ ...params, fromAt: ROSTER_START[0], fromId: ROSTER_START[1] }) ?? { n: 0, changes: 0 };
    if (offset >= total) return { dataJson: EMPTY_JSON_ARRAY, total };
    // A caller's own enrollment (or one user's) is at most one row: nothing to skip.
    const { from, skip } =
      own || filter.userId
        ? { from: ROSTER_START, skip: offset }
        : preparedFor(db, 'enrollments:roster-anchors', () => new RosterAnchors()).seekPoint(
            `${course.id} ${filter.status ?? '*'} ${filter.role ?? '*'}`,
            changes,
            offset,
            (at, entries) => {
              const row = statements.keyAt.get({ ...params, fromAt: at[0], fromId: at[1], skip: entries });
              return row && [row.enrolledAt, row.id];
            },
          );
    const dataJson = jsonArrayFrom(statements.page.get({ ...params, fromAt: from[0], fromId: from[1], limit, skip }));
    return { dataJson, total };
  }

  const filters = [
    filter.userId ? eq(enrollments.userId, filter.userId) : undefined,
    filter.status ? eq(enrollments.status, filter.status) : undefined,
    filter.role ? eq(enrollments.role, filter.role) : undefined,
  ];
  let visible: SQL | undefined;
  if (!canManageAllEnrollments(actor)) {
    const taught = activeCourseRoles(db, actor.tenantId, actor.userId)
      .filter((r) => isCourseStaff({ role: actor.role }, { role: r.role, status: 'active' }))
      .map((r) => r.courseId);
    visible = taught.length ? or(eq(enrollments.userId, actor.userId), inArray(enrollments.courseId, taught)) : eq(enrollments.userId, actor.userId);
  }
  const reach = courseListLimit(actor);
  const reached = reach === null ? undefined : inArray(enrollments.courseId, [...reach]);
  const where = and(isNull(courses.deletedAt), eq(enrollments.tenantId, actor.tenantId), visible, reached, ...filters);
  const bounds = sqlPageBounds(page);
  const pageRowIds = db
    .select({ rowid: sql<number>`${enrollments}.rowid` })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(where)
    .orderBy(asc(enrollments.enrolledAt), asc(enrollments.id))
    .limit(bounds.limit)
    .offset(bounds.offset);
  const dataJson = jsonArrayFrom(enrollmentPageJson(db, pageRowIds).get());
  const total = db.select({ n: countAll }).from(enrollments).innerJoin(courses, eq(courses.id, enrollments.courseId)).where(where).get()?.n ?? 0;
  return { dataJson, total };
}

export interface EnrollResult {
  enrollment: EnrollmentView;
  /** false when a dropped enrollment was reactivated (same id). */
  created: boolean;
}

export type EnrollmentEventType = 'enrollment.created' | 'enrollment.completed' | 'enrollment.dropped';
type EnrollmentFacts = { id: string; tenantId: string; courseId: string; userId: string; role: EnrollmentRole };

/** The event of an enrollment's change; the enrolled user sees it in their feed (roster imports record theirs with it too). */
export function enrollmentEvent(type: EnrollmentEventType, actorId: string | null, e: EnrollmentFacts): NewEvent<EnrollmentEventType> {
  return {
    tenantId: e.tenantId,
    type,
    actorId,
    subject: { type: 'enrollment', id: e.id },
    courseId: e.courseId,
    data: { enrollment_id: e.id, course_id: e.courseId, user_id: e.userId, role: e.role },
    recipients: [e.userId],
  };
}

/** Records it in the transaction of the change. */
function recordEnrollmentEvent(tx: Db, clock: Clock, type: EnrollmentEventType, actorId: string | null, e: EnrollmentFacts): void {
  appendEvent(tx, clock, enrollmentEvent(type, actorId, e));
}

/**
 * Enrols a user of the course's tenant. A dropped enrollment is reactivated (same id, new role);
 * an active or completed one is a 409. The caller's right to do this is checked by the route.
 * `actorId` is who did it, for the event it records. With `capacity` (self-enrolment and approved
 * requests), a student is enrolled only while the course has fewer students (active or completed)
 * than that: 409 `course_full` otherwise, checked in the transaction that enrols.
 */
export function enroll(
  db: Db,
  clock: Clock,
  course: { id: string; tenantId: string },
  userId: string,
  role: EnrollmentRole,
  actorId: string | null,
  capacity: number | null = null,
): EnrollResult {
  const { id, created } = inTransaction(db, (tx) => enrollIn(tx, clock, course, userId, role, actorId, capacity));
  return { enrollment: getEnrollment(db, course.tenantId, id), created };
}

/** Students of record and active ones (not dropped) of the course: the seats its capacity counts. */
export function seatsTaken(tx: Db, courseId: string): number {
  const row = tx
    .select({ n: sql<number>`coalesce(sum(${courseEnrollmentCounts.n}), 0)` })
    .from(courseEnrollmentCounts)
    .where(and(eq(courseEnrollmentCounts.courseId, courseId), eq(courseEnrollmentCounts.role, 'student'), ne(courseEnrollmentCounts.status, 'dropped')))
    .get();
  return Number(row?.n ?? 0);
}

/** enroll's work, inside the caller's (immediate) transaction: approving a request enrols with it. */
export function enrollIn(
  tx: Db,
  clock: Clock,
  course: { id: string; tenantId: string },
  userId: string,
  role: EnrollmentRole,
  actorId: string | null,
  capacity: number | null = null,
): { id: string; created: boolean } {
  const now = clock.now().toISOString();
  const user = tx
    .select({ id: users.id, deletedAt: users.deletedAt })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.tenantId, course.tenantId)))
    .get();
  if (!user) throw notFound('User');
  if (user.deletedAt) throw unprocessable('A deleted user cannot be enrolled', [{ path: 'user_id', message: 'the user is deleted' }]);
  const existing = tx
    .select({ id: enrollments.id, status: enrollments.status })
    .from(enrollments)
    .where(and(eq(enrollments.courseId, course.id), eq(enrollments.userId, userId)))
    .get();
  if (existing?.status === 'active') throw conflict('The user is already enrolled in this course');
  if (existing?.status === 'completed') throw conflict('The user has already completed this course');
  if (capacity !== null && role === 'student' && seatsTaken(tx, course.id) >= capacity) {
    throw new AppError('course_full', `This course is full: it takes at most ${capacity} students`);
  }
  if (existing) {
    tx.update(enrollments)
      .set({ status: 'active', role, droppedAt: null, completedAt: null, updatedAt: now })
      .where(eq(enrollments.id, existing.id))
      .run();
    recordEnrollmentEvent(tx, clock, 'enrollment.created', actorId, { id: existing.id, tenantId: course.tenantId, courseId: course.id, userId, role });
    return { id: existing.id, created: false };
  }
  const inserted = newId();
  tx.insert(enrollments)
    .values({ id: inserted, tenantId: course.tenantId, courseId: course.id, userId, role, status: 'active', enrolledAt: now, updatedAt: now })
    .run();
  recordEnrollmentEvent(tx, clock, 'enrollment.created', actorId, { id: inserted, tenantId: course.tenantId, courseId: course.id, userId, role });
  return { id: inserted, created: true };
}

export type SkipReason = 'unknown_user' | 'already_enrolled' | 'deleted_user';

export interface BulkEnrollResult {
  enrolled: EnrollmentView[];
  skipped: { user_id: string; reason: SkipReason }[];
}

/**
 * Enrols many users in one transaction with set-based reads (a query per 500 ids, not per user).
 * Unknown, deleted and already enrolled users are skipped with a reason; dropped ones are
 * reactivated; an id named twice counts once. `enrolled` follows the order of `userIds`.
 */
export function bulkEnroll(
  db: Db,
  clock: Clock,
  course: { id: string; tenantId: string },
  userIds: string[],
  role: EnrollmentRole,
  actorId: string | null,
): BulkEnrollResult {
  const now = clock.now().toISOString();
  const wanted = [...new Set(userIds)];
  const { enrolledIds, skipped } = inTransaction(db, (tx) => {
    const found = new Map<string, { deletedAt: string | null }>();
    const existing = new Map<string, { id: string; status: EnrollmentStatus }>();
    for (const ids of chunks(wanted)) {
      for (const u of tx
        .select({ id: users.id, deletedAt: users.deletedAt })
        .from(users)
        .where(and(eq(users.tenantId, course.tenantId), inArray(users.id, ids)))
        .all()) {
        found.set(u.id, u);
      }
      for (const e of tx
        .select({ id: enrollments.id, userId: enrollments.userId, status: enrollments.status })
        .from(enrollments)
        .where(and(eq(enrollments.courseId, course.id), inArray(enrollments.userId, ids)))
        .all()) {
        existing.set(e.userId, e);
      }
    }

    const skipped: BulkEnrollResult['skipped'] = [];
    const enrolledIds: string[] = [];
    const enrolledUsers: { id: string; userId: string }[] = [];
    const inserts: (typeof enrollments.$inferInsert)[] = [];
    const reactivate: string[] = [];
    for (const userId of wanted) {
      const user = found.get(userId);
      const current = existing.get(userId);
      if (!user) skipped.push({ user_id: userId, reason: 'unknown_user' });
      else if (user.deletedAt) skipped.push({ user_id: userId, reason: 'deleted_user' });
      else if (current && current.status !== 'dropped') skipped.push({ user_id: userId, reason: 'already_enrolled' });
      else if (current) {
        reactivate.push(current.id);
        enrolledIds.push(current.id);
        enrolledUsers.push({ id: current.id, userId });
      } else {
        const id = newId();
        inserts.push({ id, tenantId: course.tenantId, courseId: course.id, userId, role, status: 'active', enrolledAt: now, updatedAt: now });
        enrolledIds.push(id);
        enrolledUsers.push({ id, userId });
      }
    }
    for (const rows of chunks(inserts)) tx.insert(enrollments).values(rows).run();
    for (const ids of chunks(reactivate)) {
      tx.update(enrollments)
        .set({ status: 'active', role, droppedAt: null, completedAt: null, updatedAt: now })
        .where(inArray(enrollments.id, ids))
        .run();
    }
    appendEvents(
      tx,
      clock,
      enrolledUsers.map((e) => enrollmentEvent('enrollment.created', actorId, { ...e, tenantId: course.tenantId, courseId: course.id, role })),
    );
    return { enrolledIds, skipped };
  });

  const byId = new Map<string, EnrollmentView>();
  for (const ids of chunks(enrolledIds)) {
    for (const row of selectViews(db, inArray(enrollments.id, ids)).all()) byId.set(row.id, row);
  }
  return { enrolled: enrolledIds.map((id) => byId.get(id)!), skipped };
}

/**
 * Moves an active enrollment to `completed` or `dropped` (anything else is a 409) and records
 * when. A course keeps at least one active instructor: ending the last one's enrollment is a 409.
 */
function endEnrollment(db: Db, clock: Clock, actorId: string | null, enrollment: EnrollmentView, to: 'completed' | 'dropped'): EnrollmentView {
  const now = clock.now().toISOString();
  inTransaction(db, (tx) => {
    const current = tx
      .select({ status: enrollments.status, role: enrollments.role })
      .from(enrollments)
      .where(eq(enrollments.id, enrollment.id))
      .get();
    if (!current) throw notFound('Enrollment');
    const verb = to === 'completed' ? 'completed' : 'dropped';
    if (current.status !== 'active') throw conflict(`Only an active enrollment can be ${verb}; this one is ${current.status}`);
    if (current.role === 'instructor') {
      const others = tx
        .select({ n: countAll })
        .from(enrollments)
        .where(
          and(
            eq(enrollments.courseId, enrollment.courseId),
            eq(enrollments.status, 'active'),
            eq(enrollments.role, 'instructor'),
            ne(enrollments.id, enrollment.id),
          ),
        )
        .get()?.n;
      if (!others) throw conflict(`The course's last active instructor cannot be ${verb}; enrol another instructor first`);
    }
    tx.update(enrollments)
      .set({ status: to, updatedAt: now, ...(to === 'completed' ? { completedAt: now } : { droppedAt: now }) })
      .where(and(eq(enrollments.id, enrollment.id), eq(enrollments.status, 'active')))
      .run();
    recordEnrollmentEvent(tx, clock, to === 'completed' ? 'enrollment.completed' : 'enrollment.dropped', actorId, { ...enrollment, role: current.role });
  });
  return getEnrollment(db, enrollment.tenantId, enrollment.id);
}

/** Completing an instructor's or TA's enrollment ends their teaching rights in the course. */
export function completeEnrollment(db: Db, clock: Clock, access: AccessChanges, actorId: string | null, enrollment: EnrollmentView): EnrollmentView {
  const completed = endEnrollment(db, clock, actorId, enrollment, 'completed');
  if (enrollment.role !== 'student') access.narrowed();
  return completed;
}

/** A dropped member loses the course whatever their role. */
export function dropEnrollment(db: Db, clock: Clock, access: AccessChanges, actorId: string | null, enrollment: EnrollmentView): EnrollmentView {
  const dropped = endEnrollment(db, clock, actorId, enrollment, 'dropped');
  access.narrowed();
  return dropped;
}

export interface EnrollmentProgress {
  enrollment_id: string;
  percent: number;
  completed: number;
  total_required: number;
  xp: number;
  last_activity_at: string | null;
  modules: { module_id: string; percent: number }[];
}

/**
 * Progress of a learner in the course, from the course-state engine: the share of the course's
 * required activities they have completed, overall and per module (0 when nothing is required),
 * the experience points earned in it and when they last touched one of its activities.
 */
export function enrollmentProgress(db: Db, enrollment: EnrollmentView): EnrollmentProgress {
  const state = learnerCourseState(db, { tenantId: enrollment.tenantId, courseId: enrollment.courseId, userId: enrollment.userId });
  return {
    enrollment_id: enrollment.id,
    percent: state?.percent ?? 0,
    completed: state?.completedRequired ?? 0,
    total_required: state?.totalRequired ?? 0,
    xp: state?.xpEarned ?? 0,
    last_activity_at: state?.lastActivityAt ?? null,
    modules: (state?.modules ?? []).map((m) => ({ module_id: m.moduleId, percent: m.percent })),
  };
}
