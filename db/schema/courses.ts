// Courses, their structure (sections and modules) and who is in them. A course is also the
// gradebook's "offering".
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const courseStatuses = ['draft', 'published'] as const;
export type CourseStatus = (typeof courseStatuses)[number];

/** Who may enrol themselves: nobody (closed, the default), any member (open), or members whose request an instructor approves. */
export const selfEnrollModes = ['closed', 'open', 'approval'] as const;
export type SelfEnrollMode = (typeof selfEnrollModes)[number];

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
    status: text('status', { enum: courseStatuses }).notNull().default('draft'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    publishedAt: text('published_at'),
    deletedAt: text('deleted_at'),
    /**
     * Bumped by triggers (see the course_structure_version migration) whenever a module, section,
     * activity or sequencing edge of the course is written: the course-state engine keeps a
     * course's graph in memory for as long as this stays the same. Never written by the application.
     */
    structureVersion: integer('structure_version').notNull().default(0),
    /** Self-enrolment: closed (instructors enrol people), open, or by approved request. */
    selfEnroll: text('self_enroll', { enum: selfEnrollModes }).notNull().default('closed'),
    /** At most this many students (active or completed) by self-enrolment and approval; null: no limit. */
    enrollmentCapacity: integer('enrollment_capacity'),
    /** Self-enrolment and requests are taken from this moment (null: at once) until `enrollment_closes_at` (null: no end). */
    enrollmentOpensAt: text('enrollment_opens_at'),
    enrollmentClosesAt: text('enrollment_closes_at'),
  },
  (t) => [
    // A soft-deleted course keeps its row but frees its slug for a new course.
    uniqueIndex('courses_tenant_slug_uq').on(t.tenantId, t.slug).where(sql`deleted_at is null`),
    index('courses_tenant_status_idx').on(t.tenantId, t.status),
    index('courses_tenant_title_idx').on(t.tenantId, t.title),
    index('courses_created_by_idx').on(t.createdBy),
    // Covers what a caller's course list filters and sorts on, reached from their enrollments by
    // course id: the list and its count read this index, never the course rows they skip.
    index('courses_listing_idx').on(t.id, t.tenantId, t.deletedAt, t.status, t.title),
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
    // A course's roster is listed in enrolment order; this index serves it without a sort.
    index('enrollments_course_order_idx').on(t.courseId, t.enrolledAt, t.id),
    index('enrollments_tenant_idx').on(t.tenantId),
  ],
);

export const enrollmentRequestStatuses = ['pending', 'approved', 'denied'] as const;
export type EnrollmentRequestStatus = (typeof enrollmentRequestStatuses)[number];

/** A member's request to join a course whose self-enrolment is by approval; an instructor approves (enrolling them) or denies it. */
export const enrollmentRequests = sqliteTable(
  'enrollment_requests',
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
    status: text('status', { enum: enrollmentRequestStatuses }).notNull().default('pending'),
    message: text('message'),
    createdAt: text('created_at').notNull(),
    decidedAt: text('decided_at'),
    decidedBy: text('decided_by').references(() => users.id),
    /** Why it was denied, as the instructor put it. */
    reason: text('reason'),
  },
  (t) => [
    // One pending request per member and course; decided ones stay as the record.
    uniqueIndex('enrollment_requests_pending_uq').on(t.courseId, t.userId).where(sql`status = 'pending'`),
    index('enrollment_requests_course_order_idx').on(t.courseId, t.createdAt, t.id),
    index('enrollment_requests_user_idx').on(t.userId),
    index('enrollment_requests_tenant_idx').on(t.tenantId),
    index('enrollment_requests_decided_by_idx').on(t.decidedBy),
  ],
);

/**
 * How many enrollments a course has per role and status, kept by triggers on `enrollments` (see
 * the courses_counts migration), so that a roster's total is a read of at most nine rows rather
 * than a count over every enrollment of a large course. Never written by the application.
 */
export const courseEnrollmentCounts = sqliteTable(
  'course_enrollment_counts',
  {
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    role: text('role', { enum: enrollmentRoles }).notNull(),
    status: text('status', { enum: enrollmentStatuses }).notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    n: integer('n').notNull().default(0),
    /**
     * Bumped (by the same triggers) whenever an enrollment enters, leaves or moves within this
     * role and status: the sum over a list's rows changes exactly when that list's order does.
     */
    changes: integer('changes').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.role, t.status] }), index('course_enrollment_counts_tenant_idx').on(t.tenantId)],
);

/** Sections group a course's modules; `position` is dense (0..n-1) within the course. */
export const courseSections = sqliteTable(
  'course_sections',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    title: text('title').notNull(),
    position: integer('position').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('course_sections_course_position_idx').on(t.courseId, t.position), index('course_sections_tenant_idx').on(t.tenantId)],
);

/**
 * Modules of a course, in a section or directly in the course (`section_id` null). `position` is
 * dense (0..n-1) within that scope: the section, or the course's section-less modules.
 */
export const courseModules = sqliteTable(
  'course_modules',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    sectionId: text('section_id').references(() => courseSections.id),
    title: text('title').notNull(),
    description: text('description'),
    position: integer('position').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    index('course_modules_course_section_position_idx').on(t.courseId, t.sectionId, t.position),
    index('course_modules_section_idx').on(t.sectionId),
    index('course_modules_tenant_idx').on(t.tenantId),
  ],
);
