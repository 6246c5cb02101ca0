// Who may do what in a gradebook. Pure functions over the caller and their enrollment in the
// offering; TAs are staff but not instructors, so the gradebook is closed to them.
import type { Actor } from '../auth/authenticator';
import { isCourseInstructor, type Membership } from '../enrollments/policy';

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
