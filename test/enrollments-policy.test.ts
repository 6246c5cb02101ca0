import { describe, expect, it } from 'vitest';
import type { EnrollmentRole, EnrollmentStatus } from '../db/schema';
import {
  canCompleteEnrollment,
  canDropEnrollment,
  canEnrollOthers,
  canListCourseEnrollments,
  canViewEnrollment,
  isCourseInstructor,
  isCourseStaff,
  selfEnrollmentRefusal,
  type Membership,
} from '../src/enrollments/policy';

const admin = { role: 'admin' as const, userId: 'admin-1' };
const member = { role: 'member' as const, userId: 'user-1' };
const m = (role: EnrollmentRole, status: EnrollmentStatus = 'active'): Membership => ({ role, status });

describe('enrollments policy', () => {
  describe('isCourseInstructor (the gradebook\'s "instructor role in the offering")', () => {
    it('holds for an active instructor enrollment and for tenant admins', () => {
      expect(isCourseInstructor(member, m('instructor'))).toBe(true);
      expect(isCourseInstructor(admin, undefined)).toBe(true);
      expect(isCourseInstructor(admin, m('student', 'dropped'))).toBe(true);
    });
    it('does not hold for TAs, students, outsiders, or instructors no longer active', () => {
      expect(isCourseInstructor(member, m('ta'))).toBe(false);
      expect(isCourseInstructor(member, m('student'))).toBe(false);
      expect(isCourseInstructor(member, undefined)).toBe(false);
      expect(isCourseInstructor(member, m('instructor', 'dropped'))).toBe(false);
      expect(isCourseInstructor(member, m('instructor', 'completed'))).toBe(false);
    });
  });

  describe('isCourseStaff', () => {
    it('holds for active instructors and TAs and for admins only', () => {
      expect(isCourseStaff(member, m('instructor'))).toBe(true);
      expect(isCourseStaff(member, m('ta'))).toBe(true);
      expect(isCourseStaff(admin, undefined)).toBe(true);
      expect(isCourseStaff(member, m('student'))).toBe(false);
      expect(isCourseStaff(member, m('ta', 'dropped'))).toBe(false);
      expect(isCourseStaff(member, undefined)).toBe(false);
    });
  });

  it('shows an enrollment to its user, the course staff and admins', () => {
    const own = { userId: member.userId };
    const someoneElse = { userId: 'user-2' };
    expect(canViewEnrollment(member, own, undefined)).toBe(true);
    expect(canViewEnrollment(member, own, m('student', 'dropped'))).toBe(true);
    expect(canViewEnrollment(member, someoneElse, m('ta'))).toBe(true);
    expect(canViewEnrollment(admin, someoneElse, undefined)).toBe(true);
    expect(canViewEnrollment(member, someoneElse, m('student'))).toBe(false);
    expect(canViewEnrollment(member, someoneElse, m('instructor', 'dropped'))).toBe(false);
  });

  it('lists a course roster for staff only', () => {
    expect(canListCourseEnrollments(member, m('ta'))).toBe(true);
    expect(canListCourseEnrollments(admin, undefined)).toBe(true);
    expect(canListCourseEnrollments(member, m('student'))).toBe(false);
  });

  it('lets only instructors and admins enrol others and complete enrollments', () => {
    for (const can of [canEnrollOthers, canCompleteEnrollment]) {
      expect(can(member, m('instructor'))).toBe(true);
      expect(can(admin, undefined)).toBe(true);
      expect(can(member, m('ta'))).toBe(false);
      expect(can(member, m('student'))).toBe(false);
      expect(can(member, undefined)).toBe(false);
    }
  });

  it('lets instructors, admins and the enrolled user drop an enrollment', () => {
    expect(canDropEnrollment(member, { userId: member.userId }, m('student'))).toBe(true);
    expect(canDropEnrollment(member, { userId: 'user-2' }, m('instructor'))).toBe(true);
    expect(canDropEnrollment(admin, { userId: 'user-2' }, undefined)).toBe(true);
    expect(canDropEnrollment(member, { userId: 'user-2' }, m('ta'))).toBe(false);
    expect(canDropEnrollment(member, { userId: 'user-2' }, m('student'))).toBe(false);
  });

  it('allows self-enrolment only as a student into a published course whose self-enrolment is open, within its dates', () => {
    const now = new Date('2026-06-01T00:00:00.000Z');
    const open = { status: 'published' as const, selfEnroll: 'open' as const, enrollmentOpensAt: null, enrollmentClosesAt: null };
    expect(selfEnrollmentRefusal(open, 'student', now)).toBeNull();
    expect(selfEnrollmentRefusal({ ...open, status: 'draft' }, 'student', now)?.detail).toMatch(/published/);
    expect(selfEnrollmentRefusal(open, 'ta', now)?.detail).toMatch(/student/);
    expect(selfEnrollmentRefusal(open, 'instructor', now)?.detail).toMatch(/student/);
    expect(selfEnrollmentRefusal({ ...open, selfEnroll: 'closed' }, 'student', now)?.code).toBe('self_enrollment_closed');
    expect(selfEnrollmentRefusal({ ...open, selfEnroll: 'approval' }, 'student', now)?.code).toBe('enrollment_approval_required');
    expect(selfEnrollmentRefusal({ ...open, enrollmentOpensAt: '2026-06-01T00:00:00.001Z' }, 'student', now)?.code).toBe('enrollment_not_open_yet');
    expect(selfEnrollmentRefusal({ ...open, enrollmentOpensAt: '2026-06-01T00:00:00.000Z' }, 'student', now)).toBeNull();
    expect(selfEnrollmentRefusal({ ...open, enrollmentClosesAt: '2026-06-01T00:00:00.000Z' }, 'student', now)?.code).toBe('enrollment_period_over');
    expect(selfEnrollmentRefusal({ ...open, enrollmentClosesAt: '2026-06-01T00:00:00.001Z' }, 'student', now)).toBeNull();
  });
});
