// The gradebook's offerings and students: an offering is a live course of the caller's tenant,
// a student anyone enrolled in it as one. The use cases are in assignments.ts, grades.ts,
// settings.ts and views.ts (the whole-offering summary and spreadsheet, computed set-based: a
// handful of queries per request, never one per student). Every query is scoped to the tenant.
import type { Db } from '../../db/client';
import type { CourseStatus } from '../../db/schema';
import { getCourse } from '../courses/service';
import { notFound } from '../http/errors';
import { studentOf } from '../memberships/service';

export interface Offering {
  id: string;
  tenantId: string;
  slug: string;
  /** The course's status: a draft is seen only by its members (and admins), as the course policy says. */
  status: CourseStatus;
}

/** The offering: a live course of the caller's tenant; 404 otherwise, whatever other tenants hold. */
export function getOffering(db: Db, tenantId: string, offeringId: string): Offering {
  const course = getCourse(db, tenantId, offeringId);
  return { id: course.id, tenantId: course.tenantId, slug: course.slug, status: course.status };
}

export interface StudentRef {
  id: string;
  name: string;
  email: string;
}

/**
 * A student of the offering, whatever the enrollment's status: a student who completed or dropped
 * the course still has grades to read. 404 for anyone never enrolled as a student.
 */
export function getStudent(db: Db, offering: Offering, studentId: string): StudentRef {
  const student = studentOf(db, offering.tenantId, offering.id, studentId);
  if (!student) throw notFound('Student');
  return student;
}
