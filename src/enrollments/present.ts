// Enrollment rows (with their user's name and email) → public JSON: by JavaScript for single
// enrollments, by SQLite for list pages (the same shape: test/enrollments.test.ts compares them).
import { enrollmentRequests, enrollments, users } from '../../db/schema';
import type { JsonShape } from '../lib/json-sql';
import type { RosterRow } from './types';

export const presentEnrollment = (row: RosterRow) => ({
  id: row.id,
  course_id: row.courseId,
  user_id: row.userId,
  role: row.role,
  status: row.status,
  enrolled_at: row.enrolledAt,
  updated_at: row.updatedAt,
  completed_at: row.completedAt,
  dropped_at: row.droppedAt,
  user: { id: row.userId, name: row.userName, email: row.userEmail },
});

/** presentEnrollment's shape over the columns of `enrollments` joined to `users`, for list pages. */
export const enrollmentJson = {
  id: enrollments.id,
  course_id: enrollments.courseId,
  user_id: enrollments.userId,
  role: enrollments.role,
  status: enrollments.status,
  enrolled_at: enrollments.enrolledAt,
  updated_at: enrollments.updatedAt,
  completed_at: enrollments.completedAt,
  dropped_at: enrollments.droppedAt,
  user: { id: users.id, name: users.name, email: users.email },
} satisfies JsonShape;

/** An enrolment request as the API shows it. */
export const presentEnrollmentRequest = (r: typeof enrollmentRequests.$inferSelect) => ({
  id: r.id,
  course_id: r.courseId,
  user_id: r.userId,
  status: r.status,
  message: r.message,
  created_at: r.createdAt,
  decided_at: r.decidedAt,
  decided_by: r.decidedBy,
  reason: r.reason,
});
