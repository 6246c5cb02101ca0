// Direct-insert factories for courses and enrollments: for setting up large classes quickly in
// tests and benchmarks. Behaviour itself is always tested through the HTTP API.
import type { Db } from '../../db/client';
import { courses, enrollments, type EnrollmentRole, type EnrollmentStatus } from '../../db/schema';
import { newId } from '../../src/lib/ids';

/** A course of the tenant (published unless said otherwise), with `members` enrolled in it: a class. */
export function insertCourse(
  db: Db,
  input: {
    tenantId: string;
    createdBy: string;
    title?: string;
    slug?: string;
    status?: 'draft' | 'published';
    members?: { userId: string; role?: EnrollmentRole; status?: EnrollmentStatus }[];
  },
) {
  const now = new Date().toISOString();
  const id = newId();
  const course = db
    .insert(courses)
    .values({
      id,
      tenantId: input.tenantId,
      title: input.title ?? `Course ${id.slice(-6)}`,
      slug: input.slug ?? `course-${id}`,
      status: input.status ?? 'published',
      createdBy: input.createdBy,
      createdAt: now,
      updatedAt: now,
      publishedAt: input.status === 'draft' ? null : now,
    })
    .returning()
    .get();
  for (const member of input.members ?? []) insertEnrollment(db, { tenantId: input.tenantId, courseId: course.id, ...member });
  return course;
}

export function insertEnrollment(
  db: Db,
  input: { tenantId: string; courseId: string; userId: string; role?: EnrollmentRole; status?: EnrollmentStatus },
) {
  const now = new Date().toISOString();
  return db
    .insert(enrollments)
    .values({
      id: newId(),
      tenantId: input.tenantId,
      courseId: input.courseId,
      userId: input.userId,
      role: input.role ?? 'student',
      status: input.status ?? 'active',
      enrolledAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}
