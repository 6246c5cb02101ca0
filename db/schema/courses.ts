// Courses and who is in them. A course is also the gradebook's "offering".
import { index, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const courses = sqliteTable(
  'courses',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    title: text('title').notNull(),
    slug: text('slug').notNull(),
    description: text('description'),
    status: text('status', { enum: ['draft', 'published'] }).notNull().default('draft'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    publishedAt: text('published_at'),
    deletedAt: text('deleted_at'),
  },
  (t) => [
    uniqueIndex('courses_tenant_slug_uq').on(t.tenantId, t.slug),
    index('courses_tenant_status_idx').on(t.tenantId, t.status),
    index('courses_created_by_idx').on(t.createdBy),
  ],
);

export const enrollmentRoles = ['instructor', 'ta', 'student'] as const;
export type EnrollmentRole = (typeof enrollmentRoles)[number];
export const enrollmentStatuses = ['active', 'completed', 'dropped'] as const;
export type EnrollmentStatus = (typeof enrollmentStatuses)[number];

export const enrollments = sqliteTable(
  'enrollments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role', { enum: enrollmentRoles }).notNull().default('student'),
    status: text('status', { enum: enrollmentStatuses }).notNull().default('active'),
    enrolledAt: text('enrolled_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    completedAt: text('completed_at'),
    droppedAt: text('dropped_at'),
  },
  (t) => [
    uniqueIndex('enrollments_course_user_uq').on(t.courseId, t.userId),
    index('enrollments_user_status_idx').on(t.userId, t.status),
    index('enrollments_course_status_idx').on(t.courseId, t.status),
    index('enrollments_tenant_idx').on(t.tenantId),
  ],
);
