// Who may see and change a course and its structure. Pure functions; the caller's enrollment
// (membership) is passed in.
//
// Reading: the course's members (any enrollment that is not dropped), tenant admins, and, once
// the course is published, any member of the tenant (so that they can find it and self-enrol).
// A course the caller may not read answers 404, exactly as another tenant's course would: a draft
// is not revealed to outsiders. A course the caller may read but not change answers 403.
// Changing (course, sections, modules, enrolling others): instructors of the course or admins.
import type { Actor } from '../auth/authenticator';
import { permissionsOf } from '../auth/permissions';
import type { CourseStatus } from '../../db/schema';
import { isCourseInstructor, type Membership } from '../enrollments/policy';

/** Holds an enrollment that still counts: active or completed. */
export const isCourseMember = (membership: Membership | undefined): boolean =>
  membership !== undefined && membership.status !== 'dropped';

export const canReadCourse = (
  actor: Pick<Actor, 'role'>,
  course: { status: CourseStatus },
  membership: Membership | undefined,
): boolean => actor.role === 'admin' || isCourseMember(membership) || course.status === 'published';

export const canManageCourse = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

export const canCreateCourse = (actor: Pick<Actor, 'role' | 'isPlatformAdmin'>): boolean =>
  permissionsOf(actor).includes('courses:create');
