// The domain-event log: an ordered, append-only record of what happened in a tenant (completions,
// badges, enrolments, grades, shares, help requests...). `seq` is the stable cursor that the
// dashboard feed pages by and that outbound webhooks deliver from; `event_recipients` says whose
// feed an event appears in, fixed when it is appended.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const events = sqliteTable(
  'events',
  {
    /** The log's order: strictly increasing, never reused (AUTOINCREMENT). */
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    /** The event's public id (a UUID): stable across retries of a webhook delivery. */
    id: text('id').notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    type: text('type').notNull(),
    /** Who caused it; null for the system (a sweep, a disabled webhook). */
    actorId: text('actor_id').references(() => users.id),
    subjectType: text('subject_type').notNull(),
    subjectId: text('subject_id').notNull(),
    /** The course it happened in, when there is one. */
    courseId: text('course_id'),
    /** JSON object: the event's data, as webhooks deliver it. */
    payload: text('payload').notNull(),
    occurredAt: text('occurred_at').notNull(),
  },
  (t) => [
    uniqueIndex('events_id_uq').on(t.id),
    index('events_tenant_seq_idx').on(t.tenantId, t.seq),
    index('events_tenant_type_seq_idx').on(t.tenantId, t.type, t.seq),
    index('events_actor_idx').on(t.actorId),
  ],
);

/** Whose feed an event is in. A user's feed, newest first, is one range of the primary key. */
export const eventRecipients = sqliteTable(
  'event_recipients',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    eventSeq: integer('event_seq')
      .notNull()
      .references(() => events.seq),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
  },
  // Stored as its key (WITHOUT ROWID, migration 0038: drizzle has no word for it; a migration that
  // rebuilds this table must keep it).
  (t) => [
    primaryKey({ columns: [t.userId, t.eventSeq] }),
    index('event_recipients_event_idx').on(t.eventSeq),
    index('event_recipients_tenant_idx').on(t.tenantId),
  ],
);

/** How far each user has read their feed: events with a larger `seq` are unread. */
export const feedReads = sqliteTable(
  'feed_reads',
  {
    userId: text('user_id')
      .primaryKey()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    readUpToSeq: integer('read_up_to_seq').notNull().default(0),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('feed_reads_tenant_idx').on(t.tenantId)],
);
