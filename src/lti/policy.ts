// Who does what with LTI. Tenant admins register and manage their tenant's tools (another
// tenant's tool is never found: 404; a member is 403). Launching an activity's tool: whoever may
// work on or teach the course (active students, instructors and TAs, admins); a deep linking
// request from a module: its course's instructors and admins. The tools themselves are not
// actors: their service tokens are checked in services.ts.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { canReadCourse } from '../courses/policy';
import type { CourseStatus } from '../../db/schema';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, type Membership } from '../memberships/policy';

export const canManageLti = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'lti:manage': canManageLti };

export function authorizeLtiManagement(actor: Actor): void {
  if (!canManageLti(actor)) throw forbidden('Only admins manage LTI tools');
}

interface CourseAccess {
  course: { id: string; status: CourseStatus };
  membership: Membership | undefined;
}

/** A resource link launch: 404 when the course is hidden from the caller, 403 for readers who neither learn nor teach there. */
export function authorizeLaunch(actor: Actor, access: CourseAccess, what: string): void {
  if (!canReadCourse(actor, access.course, access.membership)) throw notFound(what);
  const m = access.membership;
  if (isTenantAdmin(actor) || (m && m.status === 'active')) return;
  throw forbidden('Only members of this course (active) can launch its tools');
}

/** A deep linking request adds content to the module: its course's instructors and admins. */
export function authorizeDeepLinking(actor: Actor, access: CourseAccess): void {
  if (!canReadCourse(actor, access.course, access.membership)) throw notFound('Module');
  if (!isCourseInstructor(actor, access.membership)) throw forbidden('Only instructors of this course or admins can add content by deep linking');
}
