import { describe, expect, it } from 'vitest';
import type { EnrollmentRole, EnrollmentStatus } from '../db/schema';
import { canCreateCourse, canManageCourse, canReadCourse, isCourseMember } from '../src/courses/policy';
import { slugify } from '../src/courses/service';
import type { Membership } from '../src/enrollments/policy';

const admin = { role: 'admin' as const, isPlatformAdmin: false };
const member = { role: 'member' as const, isPlatformAdmin: false };
const m = (role: EnrollmentRole, status: EnrollmentStatus = 'active'): Membership => ({ role, status });
const draft = { id: 'c1', status: 'draft' as const };
const published = { id: 'c1', status: 'published' as const };

describe('courses policy', () => {
  it('counts active and completed enrollments as membership, not dropped ones', () => {
    expect(isCourseMember(m('student'))).toBe(true);
    expect(isCourseMember(m('student', 'completed'))).toBe(true);
    expect(isCourseMember(m('instructor', 'dropped'))).toBe(false);
    expect(isCourseMember(undefined)).toBe(false);
  });

  it('lets members and admins read any course, and anyone in the tenant read a published one', () => {
    expect(canReadCourse(member, draft, m('student'))).toBe(true);
    expect(canReadCourse(member, draft, m('student', 'completed'))).toBe(true);
    expect(canReadCourse(admin, draft, undefined)).toBe(true);
    expect(canReadCourse(member, published, undefined)).toBe(true);
    expect(canReadCourse(member, published, m('student', 'dropped'))).toBe(true);
    expect(canReadCourse(member, draft, undefined)).toBe(false);
    expect(canReadCourse(member, draft, m('instructor', 'dropped'))).toBe(false);
  });

  it('lets only active instructors and admins manage a course', () => {
    expect(canManageCourse(member, m('instructor'))).toBe(true);
    expect(canManageCourse(admin, undefined)).toBe(true);
    expect(canManageCourse(member, m('ta'))).toBe(false);
    expect(canManageCourse(member, m('student'))).toBe(false);
    expect(canManageCourse(member, m('instructor', 'completed'))).toBe(false);
  });

  it('lets every member of the tenant create courses', () => {
    expect(canCreateCourse(member)).toBe(true);
    expect(canCreateCourse(admin)).toBe(true);
  });

  it('slugifies titles to lowercase ASCII with single hyphens', () => {
    expect(slugify('Intro to Statistics')).toBe('intro-to-statistics');
    expect(slugify('  Ça va?  Économie -- Société! ')).toBe('ca-va-economie-societe');
    expect(slugify('Straße 101, Łódź, Ærø')).toBe('strasse-101-lodz-aero');
    expect(slugify('日本語')).toBe('course');
    expect(slugify('a'.repeat(200))).toHaveLength(80);
    expect(slugify(`${'a'.repeat(79)} b`)).toBe('a'.repeat(79));
  });
});
