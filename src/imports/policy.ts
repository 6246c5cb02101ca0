// Who may import and export courses. Importing into an existing course, and exporting one, is for
// its instructors and tenant admins (the course policy's `manage`: 404 to whoever may not see the
// course, 403 to who may see but not change it); importing as a new course is for whoever may create
// courses. An import is seen by the person who started it and by tenant admins; to anyone else it
// does not exist (404).
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { authorizeCourse, type CourseAccess } from '../courses/policy';
import { notFound } from '../http/errors';

export const canSeeImport = (actor: Pick<Actor, 'userId' | 'role'>, job: { createdBy: string | null }): boolean =>
  job.createdBy === actor.userId || isTenantAdmin(actor);

/** Importing into `access`'s course (instructors, admins), or as a new course (course creators). */
export function authorizeImport<A extends CourseAccess>(actor: Actor, access: A | undefined): void {
  if (access) authorizeCourse(actor, 'manage', access);
  else authorizeCourse(actor, 'create');
}

export function authorizeExport<A extends CourseAccess>(actor: Actor, access: A): A {
  return authorizeCourse(actor, 'manage', access);
}

export function authorizeImportRead<J extends { createdBy: string | null }>(actor: Actor, job: J | undefined): J {
  if (!job || !canSeeImport(actor, job)) throw notFound('Import');
  return job;
}
