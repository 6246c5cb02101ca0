// Who may do what in a gradebook. Pure functions over the caller and their enrollment in the
// offering (a course); TAs are staff but not instructors, so the gradebook is closed to them. An
// offering of another tenant is never found (the service looks it up in the caller's tenant).
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';
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

export type GradebookAccess =
  | { action: 'manage'; membership: MembershipFact }
  | { action: 'read_grade' | 'read_student_grades'; studentId: string; membership: MembershipFact };

export function authorizeGradebook(actor: Actor, access: GradebookAccess): void {
  const membership = () => (isTenantAdmin(actor) ? undefined : access.membership());
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
