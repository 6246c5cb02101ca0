// Course-level standing comes from an enrollment. "Instructor in an offering/course" is an active
// enrollment with role `instructor`, or a tenant admin; courses, enrollments and the gradebook ask
// these functions.
import type { EnrollmentRole, EnrollmentStatus } from '../../db/schema';
import type { Actor } from '../auth/authenticator';
import { isTenantAdmin } from '../auth/access';

export interface Membership {
  role: EnrollmentRole;
  status: EnrollmentStatus;
}

const isActive = (m: Membership | undefined): m is Membership => m !== undefined && m.status === 'active';

/** Holds an enrollment that still counts: active or completed. */
export const isCourseMember = (membership: Membership | undefined): boolean =>
  membership !== undefined && membership.status !== 'dropped';

/** Instructor of the course: an active `instructor` enrollment, or a tenant admin. */
export const isCourseInstructor = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isTenantAdmin(actor) || (isActive(membership) && membership.role === 'instructor');

/** Teaching staff: instructors and TAs (active), or a tenant admin. */
export const isCourseStaff = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isTenantAdmin(actor) || (isActive(membership) && (membership.role === 'instructor' || membership.role === 'ta'));
