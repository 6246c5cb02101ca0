// A course file as the API shows it.
import type { CourseFileRow } from './service';

export const presentCourseFile = (f: CourseFileRow) => ({
  id: f.id,
  course_id: f.courseId,
  name: f.name,
  folder: f.folder,
  content_type: f.contentType,
  bytes: f.bytes,
  sha256: f.sha256,
  created_at: f.createdAt,
  updated_at: f.updatedAt,
});
