// Who may see and change competencies. Every member of the tenant reads frameworks, competencies
// and their own progress; tenant admins author frameworks and competencies (and import them).
// Alignments tie a competency to course content, so they belong to that course: its instructors
// (and admins) create, list and remove them, anyone else gets 403. A learner's progress in a
// course is their own; the course's instructors may read any learner's (`user_id`), and read the
// course's mastery summary. Another tenant's framework, competency or course is never found (404):
// services look everything up within the caller's tenant first.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { authorizeCourse, keyReachesCourse, reachableCourseIds, type CourseAccess } from '../courses/policy';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, type Membership } from '../memberships/policy';

export const canReadCompetencies = (_actor: Actor): boolean => true;

export const canManageCompetencies = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

/** Alignments of content in a course: its instructors and the tenant's admins. */
export const canManageAlignments = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

export const canReadLearnerProgress = (actor: Pick<Actor, 'role' | 'userId'>, membership: Membership | undefined, learnerId: string): boolean =>
  learnerId === actor.userId || isCourseInstructor(actor, membership);

export const permissions: PermissionRules = {
  'competencies:read': canReadCompetencies,
  'competencies:write': canManageCompetencies,
};

export function authorizeCompetencies(actor: Actor, action: 'read' | 'manage'): void {
  if (action === 'manage' && !canManageCompetencies(actor)) throw forbidden('Only admins can change competency frameworks');
}

export type CourseCompetencyAction = { kind: 'alignments' } | { kind: 'summary' } | { kind: 'learner'; learnerId: string };

/**
 * 404 when the course is not the caller's to see (courses' rule), 403 when the action is not
 * theirs. Alignments are reached through a competency every member reads, so a target in a course
 * the caller cannot see is a 403 there, not a 404.
 */
export function authorizeCourseCompetencies<A extends CourseAccess>(actor: Actor, action: CourseCompetencyAction, access: A): A {
  const { membership } = access;
  if (action.kind === 'alignments') {
    // An API key limited to other courses does not know this course's content (nor its alignments).
    if (!keyReachesCourse(actor, access.course.id)) throw notFound('Alignment target');
    if (!canManageAlignments(actor, membership)) throw forbidden("Only the instructors of the aligned content's course can manage its alignments");
    return access;
  }
  authorizeCourse(actor, 'read', access);
  if (action.kind === 'summary' && !canManageAlignments(actor, membership))
    throw forbidden("Only the course's instructors can see its competency mastery summary");
  if (action.kind === 'learner' && !canReadLearnerProgress(actor, membership, action.learnerId))
    throw forbidden("Only the course's instructors can see another learner's competency progress");
  return access;
}

/**
 * Whose alignments of a competency the caller lists: null for every course's (admins with no
 * course limit), else those of these courses (the ones they teach, narrowed to their key's
 * `course_ids`). 403 for a caller who teaches no course at all (and is no admin).
 */
export function alignmentListing(actor: Actor, coursesTaught: () => string[]): string[] | null {
  if (isTenantAdmin(actor)) return actor.courseIds === null ? null : [...actor.courseIds];
  const taught = coursesTaught();
  if (taught.length === 0) throw forbidden("Only the instructors of the aligned content's course can manage its alignments");
  return reachableCourseIds(actor, taught);
}
