// Enrollment rows (with their user's name and email) → public JSON.
import type { RosterRow } from './service';

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
