// Compliance seat time: sessions a learner holds open on one block (a module or an activity) of a
// course while they work on it. Time is credited only between heartbeats no further apart than
// the idle timeout, from the server's clock; instants are epoch milliseconds (integers), so that a
// heartbeat credits its interval in one UPDATE without reading the row first.
import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courses } from './courses';

export const seatSessionEndReasons = ['ended', 'switched', 'timed_out'] as const;
export type SeatSessionEndReason = (typeof seatSessionEndReasons)[number];

/**
 * One seat-time session. `block_id` names a module or an activity of the course; it has no foreign
 * key, so that a session stays on record (an audit trail) after its block is deleted.
 */
export const seatSessions = sqliteTable(
  'seat_sessions',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    blockId: text('block_id').notNull(),
    blockType: text('block_type', { enum: ['module', 'activity'] }).notNull(),
    startedAtMs: integer('started_at_ms').notNull(),
    /** The last moment the learner was seen: the start, then each heartbeat. */
    lastHeartbeatAtMs: integer('last_heartbeat_at_ms').notNull(),
    /** Null while the session is open. A timed-out session ends at its last heartbeat. */
    endedAtMs: integer('ended_at_ms'),
    endReason: text('end_reason', { enum: seatSessionEndReasons }),
    /** The idle timeout in force when the session started: the rule its credited time follows. */
    idleTimeoutMs: integer('idle_timeout_ms').notNull(),
    creditedMs: integer('credited_ms').notNull().default(0),
    heartbeats: integer('heartbeats').notNull().default(0),
  },
  (t) => [
    // One open session per learner: starting another ends the previous one.
    uniqueIndex('seat_sessions_open_user_uq').on(t.userId).where(sql`${t.endedAtMs} is null`),
    // Credited time per learner and block of a course, read from the index alone (reports, the gate).
    index('seat_sessions_course_user_block_idx').on(t.courseId, t.userId, t.blockId, t.creditedMs),
    // A course's sessions, newest first (the sessions listing).
    index('seat_sessions_course_started_idx').on(t.courseId, t.startedAtMs),
    index('seat_sessions_user_idx').on(t.userId),
    index('seat_sessions_tenant_idx').on(t.tenantId),
  ],
);
