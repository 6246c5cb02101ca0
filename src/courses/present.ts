// Course, section and module rows → public JSON.
import { courses } from '../../db/schema';
import type { JsonShape } from '../lib/json-sql';
import type { CourseModuleRow, ListedCourse, SectionRow } from './types';

export const presentCourse = (row: ListedCourse) => ({
  id: row.id,
  title: row.title,
  slug: row.slug,
  description: row.description,
  status: row.status,
  created_by: row.createdBy,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  published_at: row.publishedAt,
  enrollment: {
    self_enroll: row.selfEnroll,
    capacity: row.enrollmentCapacity,
    opens_at: row.enrollmentOpensAt,
    closes_at: row.enrollmentClosesAt,
  },
});

/** presentCourse's shape over the columns of `courses`, for list pages written by SQLite (src/json-sql.ts). */
export const courseJson = {
  id: courses.id,
  title: courses.title,
  slug: courses.slug,
  description: courses.description,
  status: courses.status,
  created_by: courses.createdBy,
  created_at: courses.createdAt,
  updated_at: courses.updatedAt,
  published_at: courses.publishedAt,
  enrollment: {
    self_enroll: courses.selfEnroll,
    capacity: courses.enrollmentCapacity,
    opens_at: courses.enrollmentOpensAt,
    closes_at: courses.enrollmentClosesAt,
  },
} satisfies JsonShape;

export const presentSection = (row: SectionRow) => ({
  id: row.id,
  course_id: row.courseId,
  title: row.title,
  position: row.position,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

export const presentModule = (row: CourseModuleRow) => ({
  id: row.id,
  course_id: row.courseId,
  section_id: row.sectionId,
  title: row.title,
  description: row.description,
  position: row.position,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});
