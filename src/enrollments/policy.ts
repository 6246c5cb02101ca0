// Course-level rights come from an enrollment. "Instructor in an offering/course" is an active
// enrollment with role `instructor`, or a tenant admin; gradebook and courses ask this one function.
import type { Actor } from '../auth/authenticator';
import type { EnrollmentRole, EnrollmentStatus } from '../../db/schema';

export interface Membership {
  role: EnrollmentRole;
  status: EnrollmentStatus;
}

const isActive = (m: Membership | undefined): m is Membership => m !== undefined && m.status === 'active';

/** Instructor of the course: an active `instructor` enrollment, or a tenant admin. */
export const isCourseInstructor = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  actor.role === 'admin' || (isActive(membership) && membership.role === 'instructor');

/** Teaching staff: instructors and TAs (active), or a tenant admin. */
export const isCourseStaff = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  actor.role === 'admin' || (isActive(membership) && (membership.role === 'instructor' || membership.role === 'ta'));

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
export function selfEnrollmentRefusal(course: { status: 'draft' | 'published' }, role: EnrollmentRole): string | null {
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
