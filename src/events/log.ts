// The domain-event log (see db/schema/events.ts). One function appends, inside the caller's
// transaction, so an event exists exactly when the change it records does; the rest reads it:
// a user's feed (newest first) and the tenant's log in order from a cursor (webhooks).
import { and, desc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { eventRecipients, events, feedReads } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import type { EventData, EventType } from './types';

export type EventRow = typeof events.$inferSelect;

export interface NewEvent<T extends EventType> {
  tenantId: string;
  type: T;
  actorId: string | null;
  subject: { type: string; id: string };
  courseId?: string | null;
  data: EventData<T>;
  /** Whose feeds it appears in (duplicates and nulls are ignored). */
  recipients?: Iterable<string | null | undefined>;
}

/** The events row of a new event (its seq comes from the insert). */
function eventRow(event: NewEvent<EventType>, occurredAt: string) {
  return {
    id: newId(),
    tenantId: event.tenantId,
    type: event.type,
    actorId: event.actorId,
    subjectType: event.subject.type,
    subjectId: event.subject.id,
    courseId: event.courseId ?? null,
    payload: JSON.stringify(event.data),
    occurredAt,
  };
}

/**
 * Appends one event. Call it with the transaction that makes the change, so that the change and
 * its event are committed (or rolled back) together.
 */
export function appendEvent<T extends EventType>(tx: Db, clock: Clock, event: NewEvent<T>): EventRow {
  // Every write of the API appends one: the statements are prepared once per database.
  const insertEvent = preparedFor(tx, 'events:append', () => {
    const p = sql.placeholder;
    const values = { id: p('id'), tenantId: p('tenantId'), type: p('type'), actorId: p('actorId'), subjectType: p('subjectType'), subjectId: p('subjectId'), courseId: p('courseId'), payload: p('payload'), occurredAt: p('occurredAt') };
    return tx.insert(events).values(values).returning().prepare();
  });
  const row = insertEvent.get(eventRow(event, clock.now().toISOString()));
  const recipients = new Set<string>();
  for (const userId of event.recipients ?? []) if (userId) recipients.add(userId);
  if (recipients.size > FEW_RECIPIENTS) {
    tx.insert(eventRecipients)
      .values([...recipients].map((userId) => ({ userId, eventSeq: row.seq, tenantId: event.tenantId })))
      .run();
  } else if (recipients.size > 0) {
    const insertRecipient = preparedFor(tx, 'events:recipient', () =>
      tx.insert(eventRecipients).values({ userId: sql.placeholder('userId'), eventSeq: sql.placeholder('eventSeq'), tenantId: sql.placeholder('tenantId') }).prepare(),
    );
    for (const userId of recipients) insertRecipient.run({ userId, eventSeq: row.seq, tenantId: event.tenantId });
  }
  return row;
}

/** Up to this many recipients, one prepared row each beats building a multi-row INSERT. */
const FEW_RECIPIENTS = 16;

// Statements of a batch stay far below SQLite's 32,766 bound values (9 per event, 2 per recipient).
const EVENTS_PER_STATEMENT = 500;
const RECIPIENTS_PER_STATEMENT = 2_000;

function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * appendEvent for many events of one change (a bulk enrolment): the same rows, in the order given,
 * written a few hundred per statement: several times cheaper than one call each (bench/RESULTS.md).
 */
export function appendEvents(tx: Db, clock: Clock, list: readonly NewEvent<EventType>[]): void {
  const occurredAt = clock.now().toISOString();
  for (const slice of slices(list, EVENTS_PER_STATEMENT)) {
    const rows = slice.map((event) => eventRow(event, occurredAt));
    // Rows are inserted in VALUES order, so their seqs follow the list; RETURNING's own order is
    // not promised, hence the lookup by id.
    const seqOf = new Map(tx.insert(events).values(rows).returning({ id: events.id, seq: events.seq }).all().map((r) => [r.id, r.seq]));
    const recipients: { userId: string; eventSeq: number; tenantId: string }[] = [];
    slice.forEach((event, i) => {
      const eventSeq = seqOf.get(rows[i]!.id)!;
      for (const userId of new Set(event.recipients ?? [])) if (userId) recipients.push({ userId, eventSeq, tenantId: event.tenantId });
    });
    for (const part of slices(recipients, RECIPIENTS_PER_STATEMENT)) tx.insert(eventRecipients).values(part).run();
  }
}

/** Events of these courses only, or of none (null: no limit), for a feed read with an API key limited to some courses. */
const ofCourses = (courseIds: readonly string[] | null) =>
  courseIds === null ? undefined : or(isNull(events.courseId), inArray(events.courseId, [...courseIds]));

/** A user's feed, newest first: one range of event_recipients' primary key (`courseIds`: leave out other courses' events). */
export function feedPage(db: Db, userId: string, limit: number, offset: number, courseIds: readonly string[] | null = null): { rows: EventRow[]; total: number } {
  if (courseIds !== null) {
    const where = and(eq(eventRecipients.userId, userId), ofCourses(courseIds));
    const rows = db
      .select({ event: events })
      .from(eventRecipients)
      .innerJoin(events, eq(events.seq, eventRecipients.eventSeq))
      .where(where)
      .orderBy(desc(eventRecipients.eventSeq))
      .limit(limit)
      .offset(offset)
      .all()
      .map((r) => r.event);
    const total = db.select({ n: sql<number>`count(*)` }).from(eventRecipients).innerJoin(events, eq(events.seq, eventRecipients.eventSeq)).where(where).get()!.n;
    return { rows, total };
  }
  const rows = db
    .select({ event: events })
    .from(eventRecipients)
    .innerJoin(events, eq(events.seq, eventRecipients.eventSeq))
    .where(eq(eventRecipients.userId, userId))
    .orderBy(desc(eventRecipients.eventSeq))
    .limit(limit)
    .offset(offset)
    .all()
    .map((r) => r.event);
  const total = db
    .select({ n: sql<number>`count(*)` })
    .from(eventRecipients)
    .where(eq(eventRecipients.userId, userId))
    .get()!.n;
  return { rows, total };
}

export function feedReadUpTo(db: Db, userId: string): number {
  return db.select({ seq: feedReads.readUpToSeq }).from(feedReads).where(eq(feedReads.userId, userId)).get()?.seq ?? 0;
}

export function unreadFeedCount(db: Db, userId: string, courseIds: readonly string[] | null = null): number {
  const upTo = feedReadUpTo(db, userId);
  if (courseIds !== null) {
    return db
      .select({ n: sql<number>`count(*)` })
      .from(eventRecipients)
      .innerJoin(events, eq(events.seq, eventRecipients.eventSeq))
      .where(and(eq(eventRecipients.userId, userId), gt(eventRecipients.eventSeq, upTo), ofCourses(courseIds)))
      .get()!.n;
  }
  return db
    .select({ n: sql<number>`count(*)` })
    .from(eventRecipients)
    .where(and(eq(eventRecipients.userId, userId), gt(eventRecipients.eventSeq, upTo)))
    .get()!.n;
}

/** Marks the feed read up to `seq` (never backwards). */
export function markFeedRead(db: Db, clock: Clock, reader: { tenantId: string; userId: string }, seq: number): number {
  const { tenantId, userId } = reader;
  const now = clock.now().toISOString();
  const upTo = Math.max(seq, feedReadUpTo(db, userId));
  db.insert(feedReads)
    .values({ userId, tenantId, readUpToSeq: upTo, updatedAt: now })
    .onConflictDoUpdate({ target: feedReads.userId, set: { readUpToSeq: upTo, updatedAt: now } })
    .run();
  return upTo;
}

/** The newest event in a user's feed, or 0. */
export function latestFeedSeq(db: Db, userId: string): number {
  return (
    db
      .select({ seq: eventRecipients.eventSeq })
      .from(eventRecipients)
      .where(eq(eventRecipients.userId, userId))
      .orderBy(desc(eventRecipients.eventSeq))
      .limit(1)
      .get()?.seq ?? 0
  );
}

/** An event by public id within a tenant (for `up_to` cursors given by clients). */
export function eventById(db: Db, tenantId: string, id: string): EventRow | undefined {
  return db.select().from(events).where(and(eq(events.tenantId, tenantId), eq(events.id, id))).get();
}

/**
 * The seq of the log's last event, of one tenant or (without one) of the whole log, or 0. The
 * whole log's is prepared once: the webhook worker asks on every pass.
 */
export function lastEventSeq(db: Db, tenantId?: string): number {
  const seq = sql<number | null>`max(${events.seq})`;
  const row =
    tenantId === undefined
      ? preparedFor(db, 'events:last-seq', () => db.select({ seq }).from(events).prepare()).get()
      : db.select({ seq }).from(events).where(eq(events.tenantId, tenantId)).get();
  return row?.seq ?? 0;
}

/**
 * The tenant's events after `afterSeq`, in log order, optionally of some types only: how a
 * consumer (an outbound webhook) walks the log from its cursor.
 */
export function eventsAfter(db: Db, tenantId: string, afterSeq: number, limit: number, types?: readonly string[]): EventRow[] {
  const conditions = [eq(events.tenantId, tenantId), gt(events.seq, afterSeq)];
  if (types && types.length > 0) conditions.push(inArray(events.type, [...types]));
  return db
    .select()
    .from(events)
    .where(and(...conditions))
    .orderBy(events.seq)
    .limit(limit)
    .all();
}

/** An event as the API shows it (the feed) and as webhooks carry its data. */
export function eventJson(row: EventRow) {
  return {
    id: row.id,
    type: row.type,
    actor_id: row.actorId,
    subject: { type: row.subjectType, id: row.subjectId },
    course_id: row.courseId,
    data: JSON.parse(row.payload) as Record<string, unknown>,
    occurred_at: row.occurredAt,
  };
}
