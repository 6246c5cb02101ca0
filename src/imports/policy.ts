// Who may import and export courses. Importing into an existing course, and exporting one, is for
// its instructors and tenant admins (the course policy's `manage`: 404 to whoever may not see the
// course, 403 to who may see but not change it); importing as a new course is for whoever may create
// courses. An import is seen by the person who started it and by tenant admins; to anyone else it
// does not exist (404).
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { authorizeCourse, courseListLimit, keyReachesCourse, type CourseAccess } from '../courses/policy';
import { notFound } from '../http/errors';

/** The course an import went into (null: it made a new one), as its job's input names it. */
export const importCourseOf = (job: { input: string }): string | null => (JSON.parse(job.input) as { courseId?: string | null }).courseId ?? null;

/**
 * Its starter and tenant admins see an import; an API key limited to some courses (`course_ids`)
 * only the imports into those courses (an import that made a new course is of no course it names).
 */
export const canSeeImport = (actor: Pick<Actor, 'userId' | 'role' | 'courseIds'>, job: { createdBy: string | null; input: string }): boolean => {
  if (job.createdBy !== actor.userId && !isTenantAdmin(actor)) return false;
  if (actor.courseIds === null) return true;
  const courseId = importCourseOf(job);
  return courseId !== null && keyReachesCourse(actor, courseId);
};

export { courseListLimit };

/** Importing into `access`'s course (instructors, admins), or as a new course (course creators). */
export function authorizeImport<A extends CourseAccess>(actor: Actor, access: A | undefined): void {
  if (access) authorizeCourse(actor, 'manage', access);
  else authorizeCourse(actor, 'create');
}

export function authorizeExport<A extends CourseAccess>(actor: Actor, access: A): A {
  return authorizeCourse(actor, 'manage', access);
}

export function authorizeImportRead<J extends { createdBy: string | null; input: string }>(actor: Actor, job: J | undefined): J {
  if (!job || !canSeeImport(actor, job)) throw notFound('Import');
  return job;
}
