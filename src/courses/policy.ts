// Who may see and change a course and its structure. Pure functions; the caller's enrollment
// (membership) is loaded with the course by courses/service's `courseAccess`.
//
// Reading: the course's members (any enrollment that is not dropped), tenant admins, and, once
// the course is published, any member of the tenant (so that they can find it and self-enrol).
// A course the caller may not read answers 404, exactly as another tenant's course would: a draft
// is not revealed to outsiders. A course the caller may read but not change answers 403.
// Changing (course, sections, modules, enrolling others): instructors of the course or admins.
import type { CourseStatus } from '../../db/schema';
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, isCourseMember, type Membership } from '../memberships/policy';

export { isCourseMember };

/** A course as the policy judges it, with the caller's enrollment in it (any status), if any. */
export interface CourseAccess<C extends { id: string; status: CourseStatus } = { id: string; status: CourseStatus }> {
  course: C;
  membership: Membership | undefined;
}

/** An API key limited to some courses (`course_ids`) reaches no other: they answer as courses the caller may not read. */
export const keyReachesCourse = (actor: { courseIds?: readonly string[] | null }, courseId: string): boolean =>
  actor.courseIds == null || actor.courseIds.includes(courseId);

/**
 * The courses a list may show the caller beyond what their rights already limit: null for no
 * further limit, else only these (an API key's `course_ids`). Every list of course things (courses,
 * enrolments, activities, documents, alignments, gradebooks, files, imports…) applies it, so that a
 * list never shows what a single read of the same thing would answer 404 to.
 */
export const courseListLimit = (actor: { courseIds?: readonly string[] | null }): readonly string[] | null => actor.courseIds ?? null;

/** The course ids of `ids` the caller's key reaches (all of them without a course limit). */
export const reachableCourseIds = (actor: { courseIds?: readonly string[] | null }, ids: readonly string[]): string[] =>
  ids.filter((id) => keyReachesCourse(actor, id));

export const canReadCourse = (
  actor: Pick<Actor, 'role'> & { courseIds?: readonly string[] | null },
  course: { id: string; status: CourseStatus },
  membership: Membership | undefined,
): boolean => keyReachesCourse(actor, course.id) && (isTenantAdmin(actor) || isCourseMember(membership) || course.status === 'published');

export const canManageCourse = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

/**
 * Any member of the tenant may create a course (and so becomes its instructor); not with an API key
 * limited to some courses (`course_ids`): a new course would be one the key does not reach.
 */
export const canCreateCourse = (actor: Pick<Actor, 'role' | 'isPlatformAdmin'> & { courseIds?: readonly string[] | null }): boolean =>
  (actor.role === 'admin' || actor.role === 'member') && actor.courseIds == null;

/** Lists every course of the tenant, not only the ones they are enrolled in: admins. */
export const canListAllCourses = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = {
  'courses:create': canCreateCourse,
  'courses:manage_all': canListAllCourses,
};

export type CourseAction = 'create' | 'read' | 'manage';

/**
 * The one entry the routes call: 404 when the caller may not read the course (as if it did not
 * exist), 403 when they may read it but the action needs an instructor. Returns the access.
 */
export function authorizeCourse(actor: Actor, action: 'create'): void;
export function authorizeCourse<A extends CourseAccess>(actor: Actor, action: 'read' | 'manage', access: A): A;
export function authorizeCourse<A extends CourseAccess>(actor: Actor, action: CourseAction, access?: A): A | void {
  if (action === 'create') {
    if (!canCreateCourse(actor)) throw forbidden('You are not allowed to create courses');
    return;
  }
  const { course, membership } = access!;
  if (!canReadCourse(actor, course, membership)) throw notFound('Course');
  if (action === 'manage' && !canManageCourse(actor, membership)) throw forbidden('Only instructors of this course or admins can do this');
  return access;
}
