// The learner journey: activities inside modules, each learner's state per activity, the
// sequencing edges between a course's nodes (modules and activities), and the rewards a learner
// has earned (experience points, level, streak, badges).
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courseModules, courses } from './courses';

export const activityTypes = ['reading', 'video', 'quiz', 'assignment', 'discussion', 'external', 'lti'] as const;
export type ActivityType = (typeof activityTypes)[number];

/** Activities of a module; `position` is dense (0..n-1) within the module. */
export const activities = sqliteTable(
  'activities',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** Denormalised from the module so that a course's activities are one index range. */
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    moduleId: text('module_id')
      .notNull()
      .references(() => courseModules.id),
    title: text('title').notNull(),
    type: text('type', { enum: activityTypes }).notNull(),
    /** The instructor's priority, 0..100. */
    priority: integer('priority').notNull().default(50),
    xp: integer('xp').notNull().default(10),
    dueAt: text('due_at'),
    required: integer('required', { mode: 'boolean' }).notNull().default(true),
    deepLinkUrl: text('deep_link_url'),
    estimatedMinutes: integer('estimated_minutes'),
    /** Seat time a learner must be credited with before completing it (compliance). */
    minSeatSeconds: integer('min_seat_seconds'),
    position: integer('position').notNull(),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    index('activities_module_position_idx').on(t.moduleId, t.position),
    // A course's activities in module order: the course-state engine reads them without a sort.
    index('activities_course_module_position_idx').on(t.courseId, t.moduleId, t.position),
    index('activities_tenant_idx').on(t.tenantId),
    index('activities_created_by_idx').on(t.createdBy),
  ],
);

export const activityStatuses = ['in_progress', 'completed', 'skipped'] as const;
export type ActivityStatus = (typeof activityStatuses)[number];

/**
 * One learner's state on one activity. No row means "not started". A row exists once the learner
 * has touched the activity (clicked its deep link, saved it, skipped or completed it).
 */
export const activityStates = sqliteTable(
  'activity_states',
  {
    activityId: text('activity_id')
      .notNull()
      .references(() => activities.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    /** Null while the row only records a save for later (not started yet). */
    status: text('status', { enum: activityStatuses }),
    score: real('score'),
    startedAt: text('started_at'),
    completedAt: text('completed_at'),
    skippedAt: text('skipped_at'),
    skipReason: text('skip_reason'),
    clicks: integer('clicks').notNull().default(0),
    /** On the learner's shelf since then; null when not saved. */
    savedAt: text('saved_at'),
    remindAt: text('remind_at'),
    /** Completed while it was on the shelf: shelf analytics count these. */
    completedFromShelf: integer('completed_from_shelf', { mode: 'boolean' }).notNull().default(false),
    /** Days it spent on the shelf before it was completed or taken off (shelf analytics). */
    shelfDays: real('shelf_days'),
    xpAwarded: integer('xp_awarded').notNull().default(0),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.activityId] }),
    index('activity_states_course_user_idx').on(t.courseId, t.userId),
    index('activity_states_activity_idx').on(t.activityId),
    index('activity_states_user_saved_idx').on(t.userId, t.savedAt),
    index('activity_states_tenant_idx').on(t.tenantId),
  ],
);

export const sequencingNodeTypes = ['module', 'activity'] as const;
export type SequencingNodeType = (typeof sequencingNodeTypes)[number];

/** `from` must be completed (with at least `min_score` percent when set) before `to` is available. */
export const sequencingEdges = sqliteTable(
  'sequencing_edges',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    fromNodeId: text('from_node_id').notNull(),
    fromNodeType: text('from_node_type', { enum: sequencingNodeTypes }).notNull(),
    toNodeId: text('to_node_id').notNull(),
    toNodeType: text('to_node_type', { enum: sequencingNodeTypes }).notNull(),
    minScore: real('min_score'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('sequencing_edges_course_from_to_uq').on(t.courseId, t.fromNodeId, t.toNodeId),
    // Covers the course-state engine's read of a course's edges: no table lookups per edge.
    index('sequencing_edges_course_cover_idx').on(t.courseId, t.fromNodeId, t.toNodeId, t.minScore),
    index('sequencing_edges_from_idx').on(t.fromNodeId),
    index('sequencing_edges_to_idx').on(t.toNodeId),
    index('sequencing_edges_tenant_idx').on(t.tenantId),
    index('sequencing_edges_created_by_idx').on(t.createdBy),
  ],
);

/** A learner's rewards: one row per user, written in the same transaction as the completion. */
export const learnerStats = sqliteTable(
  'learner_stats',
  {
    userId: text('user_id')
      .primaryKey()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    totalXp: integer('total_xp').notNull().default(0),
    level: integer('level').notNull().default(1),
    streakDays: integer('streak_days').notNull().default(0),
    longestStreak: integer('longest_streak').notNull().default(0),
    /** The learner's local calendar day (YYYY-MM-DD, in their time zone) of their last completion. */
    lastActiveDay: text('last_active_day'),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('learner_stats_tenant_idx').on(t.tenantId)],
);

/**
 * Badges earned, once each: `scope_id` is the module or course a badge is for, '' for badges that
 * have no scope (first completion, streaks).
 */
export const learnerBadges = sqliteTable(
  'learner_badges',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    badge: text('badge').notNull(),
    scopeId: text('scope_id').notNull().default(''),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    awardedAt: text('awarded_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.badge, t.scopeId] }), index('learner_badges_tenant_idx').on(t.tenantId)],
);
