// Who may see and change a course's sequencing, and whose course state a caller may read. Pure
// functions over the course access (the course and the caller's enrollment) that courses/service
// loads. A course the caller may not read is 404 (courses' own rule); then:
// - edges and the graph: read by the course's teaching staff (instructors, TAs) and admins,
//   changed by its instructors and admins (403 otherwise);
// - course state and node availability: a caller reads their own; teaching staff and admins may
//   read any learner's (`user_id`), others 403.
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';
import { authorizeCourse, type CourseAccess } from '../courses/policy';
import { isCourseInstructor, isCourseStaff, type Membership } from '../memberships/policy';

export const canReadSequencing = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseStaff(actor, membership);

export const canManageSequencing = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isCourseInstructor(actor, membership);

export const canReadLearnerState = (actor: Pick<Actor, 'role' | 'userId'>, membership: Membership | undefined, learnerId: string): boolean =>
  learnerId === actor.userId || isCourseStaff(actor, membership);

export type SequencingAction = { kind: 'read' } | { kind: 'manage' } | { kind: 'learner-state'; learnerId: string };

/** The one entry the routes call: 404 when the course is not the caller's to see, 403 when the action is not theirs. */
export function authorizeSequencing<A extends CourseAccess>(actor: Actor, action: SequencingAction, access: A): A {
  authorizeCourse(actor, 'read', access);
  const { membership } = access;
  if (action.kind === 'read' && !canReadSequencing(actor, membership))
    throw forbidden("Only the course's instructors, TAs and admins can see its sequencing");
  if (action.kind === 'manage' && !canManageSequencing(actor, membership))
    throw forbidden("Only the course's instructors and admins can change its sequencing");
  if (action.kind === 'learner-state' && !canReadLearnerState(actor, membership, action.learnerId))
    throw forbidden("Only the course's instructors, TAs and admins can see another learner's state");
  return access;
}
