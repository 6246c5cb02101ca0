// Who sees which performance summary. Pure functions over the caller and, with a course, the
// course and their enrollment in it (a course they may not read is 404, as another tenant's):
// - without a course: the caller's own figures; another user's (`user_id`) for tenant admins only;
// - with a course: its teaching staff (instructors and TAs) and admins get the class summary, or
//   one learner's figures with `user_id`; a student of the course gets their own figures in it,
//   never the class's (403 for another learner's); anyone else of the tenant 403.
import type { Actor } from '../auth/authenticator';
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import { authorizeCourse, courseListLimit, type CourseAccess } from '../courses/policy';
import { forbidden } from '../http/errors';
import { isCourseStaff } from '../memberships/policy';

export const permissions: PermissionRules = {};

/** A learner's figures (across the courses `courseIds` allows when no course is named: null, all of theirs), or the class's. */
export type SummaryScope = { kind: 'learner'; userId: string; courseIds: readonly string[] | null } | { kind: 'course' };

/** The one entry the route calls: which summary the caller gets, or 403/404. */
export function authorizeSummary(actor: Actor, userId: string | undefined, access?: CourseAccess): SummaryScope {
  const own = userId === undefined || userId === actor.userId;
  if (!access) {
    if (!own && !isTenantAdmin(actor)) throw forbidden("Only admins can see another user's figures");
    // An API key limited to some courses sees the figures of those courses only.
    return { kind: 'learner', userId: userId ?? actor.userId, courseIds: courseListLimit(actor) };
  }
  authorizeCourse(actor, 'read', access);
  const teaches = isCourseStaff(actor, access.membership);
  if (teaches) return userId === undefined ? { kind: 'course' } : { kind: 'learner', userId, courseIds: null };
  if (access.membership?.role !== 'student') throw forbidden("Only the course's teaching staff, admins and learners can see its figures");
  if (!own) throw forbidden("Learners see only their own figures");
  return { kind: 'learner', userId: actor.userId, courseIds: null };
}
