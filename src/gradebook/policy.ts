// Who may do what in a gradebook. Pure functions over the caller and their enrollment in the
// offering (a course). The course's teaching staff (instructors and TAs, active) see the whole
// gradebook and record grades; only instructors (and tenant admins) change its assignments and its
// settings. An offering of another tenant is never found (the service looks it up in the caller's
// tenant), and neither is one whose course the caller may not read (a draft they are not a member of).
import type { CourseStatus } from '../../db/schema';
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { canReadCourse } from '../courses/policy';
import { forbidden, notFound } from '../http/errors';
import { isCourseInstructor, isCourseStaff, type Membership } from '../memberships/policy';

/** The refusal of every gradebook action to someone who is not staff enough for it (the specification's words; TAs count for reading and grading). */
export const INSTRUCTOR_REQUIRED = 'Instructor access required';

/** Creating, changing and deleting assignments, and the gradebook's settings: instructors (and tenant admins). */
export const canManageGradebook = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

/** Assignments, grades of everyone, summaries, settings and history, and recording grades: the course's teaching staff (TAs too). */
export const canGrade = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean => isCourseStaff(actor, membership);

/** One student's grades: the student themself, or the offering's teaching staff. */
export const canReadStudentGrades = (
  actor: Pick<Actor, 'role' | 'userId'>,
  studentId: string,
  membership: Membership | undefined,
): boolean => actor.userId === studentId || canGrade(actor, membership);

/** The caller's enrollment in the offering, read only when a rule needs it (never for admins). */
type MembershipFact = () => Membership | undefined;

/** The offering as the policy judges it: its course's status, and what a 404 names (the course or an assignment of it). */
interface OfferingFacts {
  offering: { id: string; status: CourseStatus };
  notFoundAs: 'Course' | 'Assignment';
  membership: MembershipFact;
}

export type GradebookAccess =
  /** manage: assignments and settings changed; read: the gradebook seen; grade: a grade recorded. */
  | ({ action: 'manage' | 'read' | 'grade' } & OfferingFacts)
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
  if (access.action !== 'read_grade' && access.action !== 'read_student_grades') {
    if (!canGrade(actor, membership())) throw forbidden(INSTRUCTOR_REQUIRED);
    return;
  }
  if (actor.userId !== access.studentId && !canReadStudentGrades(actor, access.studentId, membership())) {
    throw forbidden(
      access.action === 'read_grade'
        ? 'Only the student themself or the teaching staff of the offering can read this grade'
        : 'Only the student themself or the teaching staff of the offering can read these grades',
    );
  }
}
