// Enrollments: who is in which course, with which role and status.
import { and, eq, isNull } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { courses, enrollments } from '../../db/schema';
import type { Membership } from './policy';

/** The caller's enrollment in a course (any status), or undefined. */
export function membershipOf(db: DbOrTx, tenantId: string, courseId: string, userId: string): Membership | undefined {
  return db
    .select({ role: enrollments.role, status: enrollments.status })
    .from(enrollments)
    .where(and(eq(enrollments.tenantId, tenantId), eq(enrollments.courseId, courseId), eq(enrollments.userId, userId)))
    .get();
}

/** Courses (not deleted) in which the user holds an active enrollment, with the role held. */
export function activeCourseRoles(db: DbOrTx, tenantId: string, userId: string) {
  return db
    .select({ courseId: enrollments.courseId, role: enrollments.role })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(
      and(
        eq(enrollments.tenantId, tenantId),
        eq(enrollments.userId, userId),
        eq(enrollments.status, 'active'),
        isNull(courses.deletedAt),
      ),
    )
    .all();
}
