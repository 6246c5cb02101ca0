// Who may do what with activities. Pure functions over the caller, the course and their
// enrollment in it (loaded with the activity by the service).
//
// Reading an activity follows the course: whoever may read the course may read its activities
// (else 404, as another tenant's would). Creating, changing and deleting: instructors of the
// course and tenant admins (403 for other readers). Acting as a learner (clicking, saving,
// skipping, asking for help, completing): only a student whose enrollment in the course is active;
// everyone else of the tenant gets 403, instructors and admins included (they are not learners),
// and a student whose enrollment was dropped or completed gets 409 (the enrollment, not the
// person, is what stands in the way).
import type { CourseStatus } from '../../db/schema';
import type { Actor } from '../auth/authenticator';
import { canReadCourse } from '../courses/policy';
import { conflict, forbidden, notFound } from '../http/errors';
import type { PermissionRules } from '../auth/access';
import { isCourseInstructor, type Membership } from '../memberships/policy';

export interface ActivityAccess {
  course: { id: string; status: CourseStatus };
  membership: Membership | undefined;
}

export const canManageActivities = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

/** A learner of the course: a student, enrolled and active. */
export const isActiveLearner = (membership: Membership | undefined): boolean =>
  membership !== undefined && membership.role === 'student' && membership.status === 'active';

/** A student of the course whose enrollment is over (dropped or completed): they had been a learner. */
const isFormerLearner = (membership: Membership | undefined): boolean =>
  membership !== undefined && membership.role === 'student' && membership.status !== 'active';

export const permissions: PermissionRules = {};

export type ActivityAction = 'read' | 'manage' | 'learn';

/** The one entry the routes call: 404 when the course is not visible, 403 or 409 as described above. */
export function authorizeActivity<A extends ActivityAccess>(actor: Actor, action: ActivityAction, access: A): A {
  const { course, membership } = access;
  if (!canReadCourse(actor, course, membership)) throw notFound('Activity');
  if (action === 'manage' && !canManageActivities(actor, membership)) throw forbidden('Only instructors of this course or admins can do this');
  if (action === 'learn' && !isActiveLearner(membership)) {
    if (isFormerLearner(membership)) throw conflict(`Your enrollment in this course is ${membership!.status}: its activities can no longer be worked on`);
    throw forbidden('Only learners enrolled in this course can do this');
  }
  return access;
}

/** Creating an activity in a module: the module's course decides, and a hidden course names the module. */
export function authorizeModuleActivities<A extends ActivityAccess>(actor: Actor, action: 'read' | 'manage', access: A): A {
  if (!canReadCourse(actor, access.course, access.membership)) throw notFound('Module');
  return authorizeActivity(actor, action, access);
}
