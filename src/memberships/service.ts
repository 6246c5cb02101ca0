// Course membership: who holds which enrollment in which live course. Every area that asks "is
// this user in that course, and as what" reads it here (courses, enrollments, the gradebook, users,
// documents); the enrollments area writes the rows. A deleted course counts for nothing. Who the
// students of record of a course are (and a learner's courses of record) is answered here too,
// for the gradebook, compliance, analytics and competencies.
import { and, asc, eq, inArray, isNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { courses, enrollments, users, type EnrollmentRole } from '../../db/schema';
import { preparedFor, rowsNamed } from '../lib/prepared';
import { sqlLimit } from '../lib/sql';
import type { Membership } from './policy';

export type { Membership };

/** Enrollments in live courses of the tenant, under `where`: the one join every question here asks. */
function liveEnrollments(db: Db, tenantId: string, where: SQL | undefined) {
  return db
    .select({ courseId: enrollments.courseId, role: enrollments.role })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(and(eq(enrollments.tenantId, tenantId), isNull(courses.deletedAt), where));
}

/** The caller's enrollment in a course (any status), or undefined. */
export function membershipOf(db: Db, tenantId: string, courseId: string, userId: string): Membership | undefined {
  // Asked by nearly every course-scoped request: prepared once per database.
  const query = preparedFor(db, 'memberships:of', () =>
    db
      .select({ role: enrollments.role, status: enrollments.status })
      .from(enrollments)
      .where(and(eq(enrollments.tenantId, sql.placeholder('tenantId')), eq(enrollments.courseId, sql.placeholder('courseId')), eq(enrollments.userId, sql.placeholder('userId'))))
      .prepare(),
  );
  return query.get({ tenantId, courseId, userId });
}

/** Courses (not deleted) in which the user holds an active enrollment, with the role held. */
export function activeCourseRoles(db: Db, tenantId: string, userId: string) {
  const where = and(eq(enrollments.userId, userId), eq(enrollments.status, 'active'));
  return liveEnrollments(db, tenantId, where).all();
}

/**
 * Live courses in which the user holds an active enrollment as `role` (students: their activities
 * and dashboard; instructors: the courses they teach); only `courseId` when given.
 */
export function activeCourseIdsAs(db: Db, tenantId: string, userId: string, role: EnrollmentRole, courseId?: string): string[] {
  const where = and(
    eq(enrollments.userId, userId),
    eq(enrollments.status, 'active'),
    eq(enrollments.role, role),
    courseId === undefined ? undefined : eq(enrollments.courseId, courseId),
  );
  return liveEnrollments(db, tenantId, where)
    .all()
    .map((r) => r.courseId);
}

/**
 * A learner of the course, as the routes that read another user's figures (`user_id`) take it:
 * someone holding a student enrollment in it (any status); anyone else is not found there.
 */
export function isStudentOf(db: Db, tenantId: string, courseId: string, userId: string): boolean {
  return membershipOf(db, tenantId, courseId, userId)?.role === 'student';
}

/** The user, when they hold a student enrollment in the course (any status), with their name and email. */
export function studentOf(db: Db, tenantId: string, courseId: string, userId: string): { id: string; name: string; email: string } | undefined {
  return db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(enrollments)
    .innerJoin(users, eq(users.id, enrollments.userId))
    .where(and(eq(enrollments.tenantId, tenantId), eq(enrollments.courseId, courseId), eq(enrollments.role, 'student'), eq(enrollments.userId, userId)))
    .get();
}

/** Live courses in which the user is an active student, with the enrollment, and the course's title and slug. */
export function activeStudentCourses(db: Db, tenantId: string, userId: string): { enrollmentId: string; courseId: string; title: string; slug: string }[] {
  return db
    .select({ enrollmentId: enrollments.id, courseId: courses.id, title: courses.title, slug: courses.slug })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(and(eq(enrollments.tenantId, tenantId), isNull(courses.deletedAt), eq(enrollments.userId, userId), eq(enrollments.status, 'active'), eq(enrollments.role, 'student')))
    .all();
}

// ---------------------------------------------------------------- students of record

/**
 * The statuses of a student of record: enrolled as a student, active or completed (a course's
 * final grades and figures are often read after its students are marked completed); a dropped
 * student is not one.
 */
const STUDENT_OF_RECORD_STATUSES = ['active', 'completed'] as const;

/** Enrollments of students of record (see STUDENT_OF_RECORD_STATUSES), as a condition on `enrollments`. */
export const studentOfRecord: SQL = and(eq(enrollments.role, 'student'), inArray(enrollments.status, [...STUDENT_OF_RECORD_STATUSES]))!;

export interface StudentOfRecord {
  userId: string;
  name: string;
  email: string;
  enrollmentStatus: (typeof STUDENT_OF_RECORD_STATUSES)[number];
  enrolledAt: string;
}

const studentOfRecordColumns = {
  userId: users.id,
  name: users.name,
  email: users.email,
  enrollmentStatus: enrollments.status,
  enrolledAt: enrollments.enrolledAt,
};

/** The enrollments of a course's students of record, the course and tenant as placeholders: the condition of both reads below. */
const ofRecordInCourse = (): SQL => and(eq(enrollments.tenantId, sql.placeholder('tenantId')), eq(enrollments.courseId, sql.placeholder('courseId')), studentOfRecord)!;

/**
 * The course's students of record, by name (ASCII case ignored), then id: the learners of the
 * gradebook, the compliance report and the course analytics. One prepared statement per database,
 * its rows named without drizzle's per-field mapping (large classes).
 */
export function studentsOfRecord(db: Db, tenantId: string, courseId: string): StudentOfRecord[] {
  const statement = preparedFor(db, 'memberships:students-of-record', () =>
    db
      .select(studentOfRecordColumns)
      .from(enrollments)
      .innerJoin(users, eq(users.id, enrollments.userId))
      .where(ofRecordInCourse())
      .orderBy(sql`${users.name} collate nocase`, asc(users.id))
      .prepare(),
  );
  return rowsNamed<StudentOfRecord>(studentOfRecordColumns, statement.values({ tenantId, courseId }) as unknown[][]);
}

/**
 * The user ids of the course's students of record (the same people as studentsOfRecord: every
 * enrollment has its user, a foreign key), in no particular order, without reading or sorting
 * their names: competency mastery only counts them.
 */
export function studentIdsOfRecord(db: Db, tenantId: string, courseId: string): string[] {
  const statement = preparedFor(db, 'memberships:student-ids-of-record', () =>
    db.select({ userId: enrollments.userId }).from(enrollments).where(ofRecordInCourse()).prepare(),
  );
  return (statement.values({ tenantId, courseId }) as [string][]).map((r) => r[0]);
}

/** Live courses of which the user is a student of record (their own analytics and competency progress); only `courseId` when given. */
export function courseIdsOfRecord(db: Db, tenantId: string, userId: string, courseId?: string): string[] {
  const where = and(eq(enrollments.userId, userId), studentOfRecord, courseId === undefined ? undefined : eq(enrollments.courseId, courseId));
  return liveEnrollments(db, tenantId, where)
    .all()
    .map((r) => r.courseId);
}

/** Whether the user is a student of record of the course (see STUDENT_OF_RECORD_STATUSES): the only people who can be graded. */
export function isStudentOfRecord(db: Db, tenantId: string, courseId: string, userId: string): boolean {
  const membership = membershipOf(db, tenantId, courseId, userId);
  return membership?.role === 'student' && (STUDENT_OF_RECORD_STATUSES as readonly string[]).includes(membership.status);
}

/** True when both users hold an enrollment (any role, not dropped) in a common live course. */
export function shareACourse(db: Db, tenantId: string, a: string, b: string): boolean {
  const withB = sql`exists (select 1 from ${enrollments} e2 where e2.course_id = ${enrollments.courseId} and e2.user_id = ${b} and e2.status <> 'dropped')`;
  const where = and(eq(enrollments.userId, a), ne(enrollments.status, 'dropped'), withB);
  return liveEnrollments(db, tenantId, where).limit(sqlLimit(1)).get() !== undefined;
}

/**
 * True when the user is an active instructor of at least one live course. A TA is not an
 * instructor here, as in the API's definition.
 */
export function teachesAnyCourse(db: Db, tenantId: string, userId: string): boolean {
  const where = and(eq(enrollments.userId, userId), eq(enrollments.status, 'active'), eq(enrollments.role, 'instructor'));
  return liveEnrollments(db, tenantId, where).limit(sqlLimit(1)).get() !== undefined;
}
