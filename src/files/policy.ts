// Who may do what with a course's files: its members read and download them; its instructors (and
// tenant admins) upload, rename, move and delete. Someone who may not see the course gets 404;
// someone who sees a published course without being in it gets 403 for its files.
import type { Actor } from '../auth/authenticator';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, isCourseMember, type Membership } from '../memberships/policy';
import { canReadCourse } from '../courses/policy';
import { isTenantAdmin } from '../auth/access';
import type { CourseStatus } from '../../db/schema';

export const canReadFiles = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isTenantAdmin(actor) || isCourseMember(membership);
export const canManageFiles = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

export type FileAction = 'read' | 'manage';

/** The one entry the routes call, with the course (of the file) and the caller's enrollment in it. */
export function authorizeFiles(actor: Actor, action: FileAction, course: { id: string; status: CourseStatus }, membership: Membership | undefined, what: 'Course' | 'File'): void {
  if (!canReadCourse(actor, course, membership)) throw notFound(what);
  if (!canReadFiles(actor, membership)) throw forbidden("Only the course's members can see its files");
  if (action === 'manage' && !canManageFiles(actor, membership)) throw forbidden("Only the course's instructors can change its files");
}
