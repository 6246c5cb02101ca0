// Who may see, make and end enrollments. Course-level standing (instructor, staff) is the
// memberships module's; the course itself is authorized first by the course policy.
import type { CourseStatus, EnrollmentRole } from '../../db/schema';
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, isCourseStaff, type Membership } from '../memberships/policy';

export { isCourseInstructor, isCourseStaff, type Membership };

// Enrollments. An enrollment is visible to its own user, to the course's staff and to admins;
// to anyone else it does not exist (404), so that a single read never reveals what the list hides.

/** Sees this enrollment (and its progress): its user, the course's instructors and TAs, admins. */
export const canViewEnrollment = (
  actor: Pick<Actor, 'role' | 'userId'>,
  enrollment: { userId: string },
  callerMembership: Membership | undefined,
): boolean => actor.userId === enrollment.userId || isCourseStaff(actor, callerMembership);

/** Sees every enrollment of the course: its instructors and TAs, admins. */
export const canListCourseEnrollments = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseStaff(actor, callerMembership);

/** Enrols other people, with any role, even into a draft: instructors of the course, admins. */
export const canEnrollOthers = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseInstructor(actor, callerMembership);

/** Why a caller may not enrol themselves (null: they may). Only as a student, only into a published course. */
export function selfEnrollmentRefusal(course: { status: CourseStatus }, role: EnrollmentRole): string | null {
  if (role !== 'student') return 'You can only enrol yourself as a student';
  if (course.status !== 'published') return 'This course is not open for enrolment until it is published';
  return null;
}

/** Marks an enrollment completed: instructors of the course, admins. */
export const canCompleteEnrollment = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseInstructor(actor, callerMembership);

/** Drops an enrollment: instructors of the course, admins, and its own user (leaving the course). */
export const canDropEnrollment = (
  actor: Pick<Actor, 'role' | 'userId'>,
  enrollment: { userId: string },
  callerMembership: Membership | undefined,
): boolean => actor.userId === enrollment.userId || isCourseInstructor(actor, callerMembership);

/** Sees and manages every enrollment of the tenant: admins. */
export const canManageAllEnrollments = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'enrollments:manage_all': canManageAllEnrollments };

type Enrollment = { userId: string; courseId: string };

export type EnrollmentAccess =
  /** A read of one enrollment by id, or of its progress. */
  | { action: 'view'; enrollment: Enrollment; membership: Membership | undefined }
  /** A read of a user's enrollment in a course the caller may read. */
  | { action: 'look_up'; userId: string; membership: Membership | undefined }
  | { action: 'enroll'; course: { status: CourseStatus }; membership: Membership | undefined; userId: string; role: EnrollmentRole }
  | { action: 'complete' | 'drop'; enrollment: Enrollment; membership: Membership | undefined };

/**
 * The one entry the routes call; `membership` is the caller's enrollment in the course. An
 * enrollment the caller may not see is a 404, as if it did not exist; one they see but may not
 * change, a 403.
 */
export function authorizeEnrollment(actor: Actor, access: EnrollmentAccess): void {
  switch (access.action) {
    case 'look_up':
      if (access.userId !== actor.userId && !isCourseStaff(actor, access.membership)) {
        throw forbidden("Only the course's instructors and TAs can look up other people's enrollments");
      }
      return;
    case 'enroll':
      if (canEnrollOthers(actor, access.membership)) return;
      if (access.userId !== actor.userId) throw forbidden('Only instructors of this course or admins can enrol other people');
      {
        const refusal = selfEnrollmentRefusal(access.course, access.role);
        if (refusal) throw forbidden(refusal);
      }
      return;
    default:
      if (!canViewEnrollment(actor, access.enrollment, access.membership)) throw notFound('Enrollment');
      if (access.action === 'complete' && !canCompleteEnrollment(actor, access.membership)) {
        throw forbidden('Only instructors of this course or admins can complete enrollments');
      }
      if (access.action === 'drop' && !canDropEnrollment(actor, access.enrollment, access.membership)) {
        throw forbidden('Only instructors of this course, admins or the enrolled user can drop an enrollment');
      }
  }
}
