// Who may see, make and end enrollments. Course-level standing (instructor, staff) is the
// memberships module's; the course itself is authorized first by the course policy.
import type { CourseStatus, EnrollmentRole, SelfEnrollMode } from '../../db/schema';
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { AppError, forbidden, notFound } from '../http/errors';
import { isCourseInstructor, isCourseStaff, type Membership } from '../memberships/policy';
import { courseListLimit, keyReachesCourse } from '../courses/policy';

export { courseListLimit, keyReachesCourse };

export { isCourseInstructor, isCourseStaff, type Membership };

// Enrollments. An enrollment is visible to its own user, to the course's staff and to admins;
// to anyone else it does not exist (404), so that a single read never reveals what the list hides.

/** Sees this enrollment (and its progress): its user, the course's instructors and TAs, admins. */
export const canViewEnrollment = (
  actor: Pick<Actor, 'role' | 'userId'>,
  enrollment: { userId: string },
  callerMembership: Membership | undefined,
): boolean => actor.userId === enrollment.userId || isCourseStaff(actor, callerMembership);

/** Sees every enrollment of the course: its instructors and TAs, admins. */
export const canListCourseEnrollments = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseStaff(actor, callerMembership);

/** Enrols other people, with any role, even into a draft: instructors of the course, admins. */
export const canEnrollOthers = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseInstructor(actor, callerMembership);

/** A course's enrolment policy, as the rules below judge it. */
export interface EnrollmentPolicy {
  status: CourseStatus;
  selfEnroll: SelfEnrollMode;
  enrollmentOpensAt: string | null;
  enrollmentClosesAt: string | null;
}

/** A refusal of self-enrolment or of a request: its problem code and what the member is told. */
export type EnrollmentRefusal = { code: 'forbidden' | 'self_enrollment_closed' | 'enrollment_approval_required' | 'enrollment_requests_closed' | 'enrollment_not_open_yet' | 'enrollment_period_over'; detail: string };

/** Whether `now` falls outside the course's enrolment dates, and which way. */
function periodRefusal(course: EnrollmentPolicy, now: Date): EnrollmentRefusal | null {
  if (course.enrollmentOpensAt !== null && now.getTime() < Date.parse(course.enrollmentOpensAt)) {
    return { code: 'enrollment_not_open_yet', detail: `Enrolment in this course opens at ${course.enrollmentOpensAt}` };
  }
  if (course.enrollmentClosesAt !== null && now.getTime() >= Date.parse(course.enrollmentClosesAt)) {
    return { code: 'enrollment_period_over', detail: `Enrolment in this course closed at ${course.enrollmentClosesAt}` };
  }
  return null;
}

/**
 * Why a member may not enrol themselves (null: they may): only as a student, only into a published
 * course whose self-enrolment is open, within its dates. Capacity is the service's to check, in
 * the transaction that enrols.
 */
export function selfEnrollmentRefusal(course: EnrollmentPolicy, role: EnrollmentRole, now: Date): EnrollmentRefusal | null {
  if (role !== 'student') return { code: 'forbidden', detail: 'You can only enrol yourself as a student' };
  if (course.status !== 'published') return { code: 'forbidden', detail: 'This course is not open for enrolment until it is published' };
  if (course.selfEnroll === 'closed') return { code: 'self_enrollment_closed', detail: 'This course does not take self-enrolment: its instructors enrol people' };
  if (course.selfEnroll === 'approval') {
    return { code: 'enrollment_approval_required', detail: 'This course enrols by approval: ask with POST /api/courses/{id}/enrollment-requests' };
  }
  return periodRefusal(course, now);
}

/** Why a member may not ask to join (null: they may): a published course enrolling by approval, within its dates. */
export function enrollmentRequestRefusal(course: EnrollmentPolicy, now: Date): EnrollmentRefusal | null {
  if (course.status !== 'published') return { code: 'forbidden', detail: 'This course is not open for enrolment until it is published' };
  if (course.selfEnroll !== 'approval') {
    return {
      code: 'enrollment_requests_closed',
      detail: course.selfEnroll === 'open' ? 'This course is open: enrol yourself instead of asking' : 'This course does not take enrolment requests',
    };
  }
  return periodRefusal(course, now);
}

const refuse = (refusal: EnrollmentRefusal): AppError => new AppError(refusal.code, refusal.detail);

/** Approves and denies enrolment requests, and lists everyone's: instructors of the course, admins. */
export const canDecideEnrollmentRequests = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseInstructor(actor, callerMembership);

/** Whose requests of the course the caller lists: everyone's (instructors, admins) or their own. */
export const enrollmentRequestListing = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): 'all' | 'own' =>
  canDecideEnrollmentRequests(actor, callerMembership) ? 'all' : 'own';

/** One request: its member and the course's instructors see it; to anyone else it does not exist (404). */
export function authorizeEnrollmentRequestRead(actor: Pick<Actor, 'role' | 'userId'>, request: { userId: string }, callerMembership: Membership | undefined): void {
  if (request.userId !== actor.userId && !canDecideEnrollmentRequests(actor, callerMembership)) throw notFound('Enrollment request');
}

/** Marks an enrollment completed: instructors of the course, admins. */
export const canCompleteEnrollment = (actor: Pick<Actor, 'role'>, callerMembership: Membership | undefined): boolean =>
  isCourseInstructor(actor, callerMembership);

/** Drops an enrollment: instructors of the course, admins, and its own user (leaving the course). */
export const canDropEnrollment = (
  actor: Pick<Actor, 'role' | 'userId'>,
  enrollment: { userId: string },
  callerMembership: Membership | undefined,
): boolean => actor.userId === enrollment.userId || isCourseInstructor(actor, callerMembership);

/** Sees and manages every enrollment of the tenant: admins. */
export const canManageAllEnrollments = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'enrollments:manage_all': canManageAllEnrollments };

type Enrollment = { userId: string; courseId: string };

export type EnrollmentAccess =
  /** A read of one enrollment by id, or of its progress. */
  | { action: 'view'; enrollment: Enrollment; membership: Membership | undefined }
  /** A read of a user's enrollment in a course the caller may read. */
  | { action: 'look_up'; userId: string; membership: Membership | undefined }
  | { action: 'enroll'; course: EnrollmentPolicy; membership: Membership | undefined; userId: string; role: EnrollmentRole; now: Date }
  /** A member asks to join the course (under approval). */
  | { action: 'request'; course: EnrollmentPolicy; membership: Membership | undefined; now: Date }
  /** Instructors list every request and approve or deny them. */
  | { action: 'decide_requests'; membership: Membership | undefined }
  | { action: 'complete' | 'drop'; enrollment: Enrollment; membership: Membership | undefined };

/**
 * The one entry the routes call; `membership` is the caller's enrollment in the course. An
 * enrollment the caller may not see is a 404, as if it did not exist; one they see but may not
 * change, a 403. An enrolment answers how it is made: by the course's staff (no capacity applies:
 * instructors may go past it) or by the member themself (the course's capacity applies).
 */
export function authorizeEnrollment(actor: Actor, access: Extract<EnrollmentAccess, { action: 'enroll' }>): 'by_instructor' | 'self_service';
export function authorizeEnrollment(actor: Actor, access: EnrollmentAccess): void;
export function authorizeEnrollment(actor: Actor, access: EnrollmentAccess): 'by_instructor' | 'self_service' | void {
  switch (access.action) {
    case 'look_up':
      if (access.userId !== actor.userId && !isCourseStaff(actor, access.membership)) {
        throw forbidden("Only the course's instructors and TAs can look up other people's enrollments");
      }
      return;
    case 'enroll':
      if (canEnrollOthers(actor, access.membership)) return 'by_instructor';
      if (access.userId !== actor.userId) throw forbidden('Only instructors of this course or admins can enrol other people');
      {
        const refusal = selfEnrollmentRefusal(access.course, access.role, access.now);
        if (refusal) throw refuse(refusal);
      }
      return 'self_service';
    case 'request': {
      const refusal = enrollmentRequestRefusal(access.course, access.now);
      if (refusal) throw refuse(refusal);
      return;
    }
    case 'decide_requests':
      if (!canDecideEnrollmentRequests(actor, access.membership)) throw forbidden('Only instructors of this course or admins can decide enrolment requests');
      return;
    default:
      if (!keyReachesCourse(actor, access.enrollment.courseId) || !canViewEnrollment(actor, access.enrollment, access.membership)) throw notFound('Enrollment');
      if (access.action === 'complete' && !canCompleteEnrollment(actor, access.membership)) {
        throw forbidden('Only instructors of this course or admins can complete enrollments');
      }
      if (access.action === 'drop' && !canDropEnrollment(actor, access.enrollment, access.membership)) {
        throw forbidden('Only instructors of this course, admins or the enrolled user can drop an enrollment');
      }
  }
}
