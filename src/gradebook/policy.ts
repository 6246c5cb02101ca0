// Who may do what in a gradebook. Pure functions over the caller and their enrollment in the
// offering (a course); TAs are staff but not instructors, so the gradebook is closed to them. An
// offering of another tenant is never found (the service looks it up in the caller's tenant), and
// neither is one whose course the caller may not read (a draft they are not a member of).
import type { CourseStatus } from '../../db/schema';
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { canReadCourse } from '../courses/policy';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, type Membership } from '../memberships/policy';

export const INSTRUCTOR_REQUIRED = 'Instructor access required';

/** Assignments, grades of everyone, summaries, settings and history: instructors (and tenant admins). */
export const canManageGradebook = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

/** One student's grades: the student themself, or an instructor of the offering. */
export const canReadStudentGrades = (
  actor: Pick<Actor, 'role' | 'userId'>,
  studentId: string,
  membership: Membership | undefined,
): boolean => actor.userId === studentId || isCourseInstructor(actor, membership);

/** The caller's enrollment in the offering, read only when a rule needs it (never for admins). */
type MembershipFact = () => Membership | undefined;

/** The offering as the policy judges it: its course's status, and what a 404 names (the course or an assignment of it). */
interface OfferingFacts {
  offering: { status: CourseStatus };
  notFoundAs: 'Course' | 'Assignment';
  membership: MembershipFact;
}

export type GradebookAccess =
  | ({ action: 'manage' } & OfferingFacts)
  | ({ action: 'read_grade' | 'read_student_grades'; studentId: string } & OfferingFacts);

export function authorizeGradebook(actor: Actor, access: GradebookAccess): void {
  let read = isTenantAdmin(actor);
  let held: Membership | undefined;
  const membership = () => {
    if (!read) [held, read] = [access.membership(), true];
    return held;
  };
  if (!canReadCourse(actor, access.offering, membership())) throw notFound(access.notFoundAs);
  if (access.action === 'manage') {
    if (!canManageGradebook(actor, membership())) throw forbidden(INSTRUCTOR_REQUIRED);
    return;
  }
  if (actor.userId !== access.studentId && !canReadStudentGrades(actor, access.studentId, membership())) {
    throw forbidden(
      access.action === 'read_grade'
        ? 'Only the student themself or an instructor of the offering can read this grade'
        : 'Only the student themself or an instructor of the offering can read these grades',
    );
  }
}
