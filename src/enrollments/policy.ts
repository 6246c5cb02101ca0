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
