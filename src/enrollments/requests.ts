// Enrolment requests: under a course's `approval` policy a member asks to join; an instructor
// approves (which enrols them as a student, within the course's capacity) or denies. One pending
// request per member and course; decided ones stay as the record. Each step is one transaction
// with its event (enrollment_request.created / approved / denied), as enrolments record theirs.
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { enrollmentRequests, enrollments, type EnrollmentRequestStatus } from '../../db/schema';
import { appendEvent } from '../events/log';
import { AppError, conflict, notFound } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { isUniqueViolation, selectPage } from '../lib/sql';
import { enrollIn, seatsTaken } from './service';

export type EnrollmentRequestRow = typeof enrollmentRequests.$inferSelect;

type CourseRef = { id: string; tenantId: string };

/** The course's active instructors: whose feeds a new request goes to. */
function instructorsOf(tx: Db, course: CourseRef): string[] {
  return tx
    .select({ userId: enrollments.userId })
    .from(enrollments)
    .where(and(eq(enrollments.tenantId, course.tenantId), eq(enrollments.courseId, course.id), eq(enrollments.role, 'instructor'), eq(enrollments.status, 'active')))
    .all()
    .map((r) => r.userId);
}

const pendingConflict = () => new AppError('enrollment_request_pending', 'You have already asked to join this course; an instructor will decide');

/**
 * The member asks to join (the route has checked the course's policy and dates). 409 when they
 * are already in the course (active or completed), already have a pending request, or the course
 * is full.
 */
export function createEnrollmentRequest(
  db: Db,
  clock: Clock,
  course: CourseRef & { enrollmentCapacity: number | null },
  userId: string,
  message: string | null,
): EnrollmentRequestRow {
  const now = clock.now().toISOString();
  try {
    return inTransaction(db, (tx) => {
      const enrolled = tx
        .select({ status: enrollments.status })
        .from(enrollments)
        .where(and(eq(enrollments.courseId, course.id), eq(enrollments.userId, userId)))
        .get();
      if (enrolled?.status === 'active') throw conflict('You are already enrolled in this course');
      if (enrolled?.status === 'completed') throw conflict('You have already completed this course');
      const pending = tx
        .select({ id: enrollmentRequests.id })
        .from(enrollmentRequests)
        .where(and(eq(enrollmentRequests.courseId, course.id), eq(enrollmentRequests.userId, userId), eq(enrollmentRequests.status, 'pending')))
        .get();
      if (pending) throw pendingConflict();
      if (course.enrollmentCapacity !== null && seatsTaken(tx, course.id) >= course.enrollmentCapacity) {
        throw new AppError('course_full', `This course is full: it takes at most ${course.enrollmentCapacity} students`);
      }
      const row = tx
        .insert(enrollmentRequests)
        .values({ id: newId(), tenantId: course.tenantId, courseId: course.id, userId, status: 'pending', message, createdAt: now })
        .returning()
        .get();
      appendEvent(tx, clock, {
        tenantId: course.tenantId,
        type: 'enrollment_request.created',
        actorId: userId,
        subject: { type: 'enrollment_request', id: row.id },
        courseId: course.id,
        data: { request_id: row.id, course_id: course.id, user_id: userId, message },
        recipients: instructorsOf(tx, course),
      });
      return row;
    });
  } catch (err) {
    // Two requests racing past the check: the partial unique index keeps one.
    if (isUniqueViolation(err)) throw pendingConflict();
    throw err;
  }
}

/** One request of the course (404 when there is none in the caller's tenant). */
export function getEnrollmentRequest(db: Db, course: CourseRef, requestId: string): EnrollmentRequestRow {
  const row = db
    .select()
    .from(enrollmentRequests)
    .where(and(eq(enrollmentRequests.id, requestId), eq(enrollmentRequests.courseId, course.id), eq(enrollmentRequests.tenantId, course.tenantId)))
    .get();
  if (!row) throw notFound('Enrollment request');
  return row;
}

/** The course's requests, oldest first; only `userId`'s when given (a member sees their own). */
export function listEnrollmentRequests(db: Db, course: CourseRef, filter: { status?: EnrollmentRequestStatus; userId?: string }, page: PageQuery) {
  const conditions: (SQL | undefined)[] = [
    eq(enrollmentRequests.tenantId, course.tenantId),
    eq(enrollmentRequests.courseId, course.id),
    filter.status ? eq(enrollmentRequests.status, filter.status) : undefined,
    filter.userId ? eq(enrollmentRequests.userId, filter.userId) : undefined,
  ];
  return selectPage(db, enrollmentRequests, and(...conditions), [asc(enrollmentRequests.createdAt), asc(enrollmentRequests.id)], pageBounds(page));
}

/** Marks a pending request decided; 409 when it was decided already (by this call's race too). */
function decide(tx: Db, request: EnrollmentRequestRow, status: Exclude<EnrollmentRequestStatus, 'pending'>, deciderId: string, now: string, reason: string | null) {
  const row = tx
    .update(enrollmentRequests)
    .set({ status, decidedAt: now, decidedBy: deciderId, reason })
    .where(and(eq(enrollmentRequests.id, request.id), eq(enrollmentRequests.status, 'pending')))
    .returning()
    .get();
  if (!row) throw new AppError('enrollment_request_decided', `This request was already ${request.status}`);
  return row;
}

/**
 * Approves: the member is enrolled as a student (a dropped enrollment of theirs comes back), within
 * the course's capacity (409 `course_full`), in the transaction that marks the request approved.
 */
export function approveEnrollmentRequest(
  db: Db,
  clock: Clock,
  course: CourseRef & { enrollmentCapacity: number | null },
  request: EnrollmentRequestRow,
  deciderId: string,
): EnrollmentRequestRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const row = decide(tx, request, 'approved', deciderId, now, null);
    const { id: enrollmentId } = enrollIn(tx, clock, course, request.userId, 'student', deciderId, course.enrollmentCapacity);
    appendEvent(tx, clock, {
      tenantId: course.tenantId,
      type: 'enrollment_request.approved',
      actorId: deciderId,
      subject: { type: 'enrollment_request', id: row.id },
      courseId: course.id,
      data: { request_id: row.id, course_id: course.id, user_id: row.userId, enrollment_id: enrollmentId },
      recipients: [row.userId],
    });
    return row;
  });
}

export function denyEnrollmentRequest(db: Db, clock: Clock, course: CourseRef, request: EnrollmentRequestRow, deciderId: string, reason: string | null): EnrollmentRequestRow {
  const now = clock.now().toISOString();
  return inTransaction(db, (tx) => {
    const row = decide(tx, request, 'denied', deciderId, now, reason);
    appendEvent(tx, clock, {
      tenantId: course.tenantId,
      type: 'enrollment_request.denied',
      actorId: deciderId,
      subject: { type: 'enrollment_request', id: row.id },
      courseId: course.id,
      data: { request_id: row.id, course_id: course.id, user_id: row.userId, reason },
      recipients: [row.userId],
    });
    return row;
  });
}
