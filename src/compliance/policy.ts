// Who may keep and read seat time. Pure functions over the caller, the course and their enrollment
// in it (loaded with the course by courses/service's courseAccess). A course the caller may not
// read is 404, as another tenant's would be; then:
// - keeping seat time (starting a session): a student whose enrollment is active; 409 for a
//   student whose enrollment is over (dropped or completed); 403 for everyone else (instructors
//   and admins are not learners);
// - a learner's own figures (block status, their sessions): any student of the course, whatever
//   the enrollment's status (a finished learner keeps their record);
// - another learner's figures, the course report and the course's sessions: the course's
//   teaching staff (instructors and TAs) and tenant admins, who audit; 403 for everyone else.
import type { Actor } from '../auth/authenticator';
import type { PermissionRules } from '../auth/access';
import { authorizeCourse, keyReachesCourse, type CourseAccess } from '../courses/policy';
import { conflict, forbidden, notFound } from '../http/errors';
import { isCourseStaff, type Membership } from '../memberships/policy';

const isStudent = (m: Membership | undefined): m is Membership => m !== undefined && m.role === 'student';

export const canKeepSeatTime = (membership: Membership | undefined): boolean => isStudent(membership) && membership.status === 'active';

export const canAuditSeatTime = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean => isCourseStaff(actor, membership);

export const canReadOwnSeatTime = (membership: Membership | undefined): boolean => isStudent(membership);

export const permissions: PermissionRules = {};

export type ComplianceAction = { kind: 'keep' } | { kind: 'audit' } | { kind: 'learner'; learnerId: string };

/** The one entry the routes call. Returns the access. */
export function authorizeCompliance<A extends CourseAccess>(actor: Actor, action: ComplianceAction, access: A): A {
  authorizeCourse(actor, 'read', access);
  const { membership } = access;
  if (action.kind === 'keep' && !canKeepSeatTime(membership)) {
    if (isStudent(membership)) throw conflict(`Your enrollment in this course is ${membership.status}: no more seat time can be kept in it`);
    throw forbidden('Only learners enrolled in this course keep seat time');
  }
  if (action.kind === 'audit' && !canAuditSeatTime(actor, membership)) throw forbidden("Only the course's teaching staff and admins can see its seat time");
  if (action.kind === 'learner') {
    const own = action.learnerId === actor.userId;
    if (own ? !canReadOwnSeatTime(membership) && !canAuditSeatTime(actor, membership) : !canAuditSeatTime(actor, membership))
      throw forbidden(own ? 'Only learners of this course have seat time in it' : "Only the course's teaching staff and admins can see another learner's seat time");
  }
  return access;
}

/**
 * Whose sessions of the course the caller may list: an auditor everyone's (or the one learner they
 * name: the answer is that id, or undefined for all), anyone else only their own (403 for another's).
 */
export function authorizeSessionListing<A extends CourseAccess>(actor: Actor, access: A, userId: string | undefined): string | undefined {
  authorizeCourse(actor, 'read', access);
  if (canAuditSeatTime(actor, access.membership)) return userId;
  const learnerId = userId ?? actor.userId;
  authorizeCompliance(actor, { kind: 'learner', learnerId }, access);
  return learnerId;
}

/**
 * The caller's own seat-time session (found by its id or as their open one): an API key limited to
 * other courses (`course_ids`) does not know it (404, as another user's session).
 */
export function authorizeOwnSession<S extends { courseId: string }>(actor: Pick<Actor, 'courseIds'>, session: S | undefined): S | undefined {
  if (session && !keyReachesCourse(actor, session.courseId)) return undefined;
  return session;
}

/** Whether the caller's key needs the session's course looked up before a heartbeat or an end (only a key limited to some courses). */
export const sessionNeedsCourseCheck = (actor: Pick<Actor, 'courseIds'>): boolean => actor.courseIds !== null;
