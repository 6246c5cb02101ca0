// The webhooks' outbox: the delivery queue the worker (delivery.ts) drains. Events become pending
// deliveries as each subscription's cursor moves over the log; the due head of each queue is sent;
// each attempt is recorded with its backoff, and a subscription that has only failed for three days
// is disabled. The worker sends; this decides.
import { and, eq, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { webhookDeliveries, webhookSubscriptions } from '../../db/schema';
import { appendEvent, eventsAfter, type EventRow } from '../events/log';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import type { SendOutcome } from './send';
import { subscriptionEventTypes, type DeliveryRow, type SubscriptionRow } from './service';

/** Waits before the 2nd, 3rd… attempt (then the delivery has failed): about 28 hours in all. */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Each wait is stretched or shrunk by up to this fraction, so that many failed deliveries do not all retry at once. */
export const RETRY_JITTER = 0.1;
/** A subscription whose attempts have only failed for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;

/** The body of every attempt: `{type, timestamp, data}` (Standard Webhooks). */
export const messageBody = (type: string, timestamp: string, data: unknown): string => JSON.stringify({ type, timestamp, data });

/** messageBody of a logged event, whose data is already JSON text: spliced in, not parsed and written again. */
const eventMessageBody = (e: EventRow): string => `{"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(e.occurredAt)},"data":${e.payload}}`;

/** Events turned into deliveries per subscription and transaction: small enough not to hold the event loop long. */
const ENQUEUE_BATCH = 200;

/**
 * Moves the outbox cursor of every enabled subscription over the events appended since,
 * turning those of its types into pending deliveries, in the same transaction. Returns how many
 * deliveries it queued; at most a batch per subscription per call.
 */
export function enqueueNewEvents(db: Db, clock: Clock, upToSeq: number): number {
  // Prepared once: the worker asks on every pass, and almost always finds none.
  const subscriptions = preparedFor(db, 'webhooks:behind', () =>
    db
      .select()
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.enabled, true), sql`${webhookSubscriptions.cursorSeq} < ${sql.placeholder('end')}`))
      .prepare(),
  ).all({ end: upToSeq });
  let queued = 0;
  const now = clock.now().toISOString();
  // Prepared once, run per row: cheaper than building a multi-row insert for every batch.
  const insertDelivery = preparedFor(db, 'webhooks:enqueue', () =>
    db
      .insert(webhookDeliveries)
      .values({
        id: sql.placeholder('id'),
        tenantId: sql.placeholder('tenantId'),
        subscriptionId: sql.placeholder('subscriptionId'),
        eventSeq: sql.placeholder('eventSeq'),
        messageId: sql.placeholder('messageId'),
        eventType: sql.placeholder('eventType'),
        body: sql.placeholder('body'),
        status: 'pending',
        nextAttemptAt: sql.placeholder('now'),
        createdAt: sql.placeholder('now'),
      } as never)
      .prepare(),
  );
  const moveCursor = preparedFor(db, 'webhooks:cursor', () =>
    db
      .update(webhookSubscriptions)
      .set({ cursorSeq: sql.placeholder('cursor') } as never)
      .where(eq(webhookSubscriptions.id, sql.placeholder('id')))
      .prepare(),
  );
  for (const sub of subscriptions) {
    inTransaction(db, (tx) => {
      const rows: EventRow[] = eventsAfter(tx, sub.tenantId, sub.cursorSeq, ENQUEUE_BATCH, subscriptionEventTypes(sub) ?? undefined);
      // Fewer than a batch: every event up to `upToSeq` has been seen (ours or not ours).
      const cursor = rows.length < ENQUEUE_BATCH ? upToSeq : rows[rows.length - 1]!.seq;
      for (const e of rows) {
        insertDelivery.run({
          id: newId(),
          tenantId: sub.tenantId,
          subscriptionId: sub.id,
          eventSeq: e.seq,
          messageId: e.id,
          eventType: e.type,
          body: eventMessageBody(e),
          now,
        });
      }
      moveCursor.run({ cursor, id: sub.id });
      queued += rows.length;
    });
  }
  return queued;
}

/**
 * The head of each enabled subscription's queue (its oldest pending delivery in log order) when
 * it is due: strictly one message at a time per subscription keeps them in order.
 */
export function dueHeads(db: Db, clock: Clock, exclude: ReadonlySet<string>, limit: number): DeliveryRow[] {
  if (limit <= 0) return [];
  const heads = preparedFor(db, 'webhooks:due-heads', () =>
    db
      .select({ delivery: webhookDeliveries })
      .from(webhookSubscriptions)
      .innerJoin(
        webhookDeliveries,
        eq(
          webhookDeliveries.id,
          // In the queue index's order: the head is its first entry, never a sort of the backlog.
          sql`(select d.id from ${webhookDeliveries} d where d.subscription_id = ${webhookSubscriptions.id} and d.status = 'pending' order by d.event_seq limit 1)`,
        ),
      )
      .where(and(eq(webhookSubscriptions.enabled, true), lte(webhookDeliveries.nextAttemptAt, sql.placeholder('now'))))
      .prepare(),
  )
    .all({ now: clock.now().toISOString() })
    .map((r) => r.delivery);
  return heads.filter((d) => !exclude.has(d.subscriptionId)).slice(0, limit);
}

/** What one attempt gave: what sending it gave (send.ts). */
export type AttemptOutcome = SendOutcome;

/**
 * Records one attempt: delivered, or failed and due again after the next wait of the schedule,
 * or failed for good after the last. A failure starts (or continues) the subscription's failing
 * run; three days of it disables the subscription, and a `webhook.disabled` event says so.
 * `final`: no retry (a `webhook.test`), and the subscription's health is left alone. The
 * disabling is decided on the subscription's row as it is now (an admin may have disabled or
 * re-enabled it while the attempt was in flight).
 */
export function recordAttempt(
  db: Db,
  clock: Clock,
  delivery: DeliveryRow,
  outcome: AttemptOutcome,
  options: { final?: boolean; random?: () => number } = {},
): { delivery: DeliveryRow; disabled: boolean } {
  const now = clock.now();
  const nowIso = now.toISOString();
  return inTransaction(db, (tx) => {
    const attempts = delivery.attempts + 1;
    let next: Pick<DeliveryRow, 'status' | 'nextAttemptAt' | 'completedAt'>;
    if (outcome.ok) next = { status: 'succeeded', nextAttemptAt: null, completedAt: nowIso };
    else if (options.final || attempts >= MAX_ATTEMPTS) next = { status: 'failed', nextAttemptAt: null, completedAt: nowIso };
    else {
      const wait = RETRY_DELAYS_MS[attempts - 1]! * (1 + RETRY_JITTER * (2 * (options.random ?? Math.random)() - 1));
      next = { status: 'pending', nextAttemptAt: new Date(now.getTime() + Math.round(wait)).toISOString(), completedAt: null };
    }
    // Prepared once: every attempt records itself here.
    const updated = preparedFor(tx, 'webhooks:record-attempt', () =>
      tx
        .update(webhookDeliveries)
        .set({
          status: sql.placeholder('status'),
          attempts: sql.placeholder('attempts'),
          nextAttemptAt: sql.placeholder('nextAttemptAt'),
          completedAt: sql.placeholder('completedAt'),
          lastAttemptAt: sql.placeholder('lastAttemptAt'),
          lastStatusCode: sql.placeholder('lastStatusCode'),
          lastError: sql.placeholder('lastError'),
          lastLatencyMs: sql.placeholder('lastLatencyMs'),
        } as never)
        .where(eq(webhookDeliveries.id, sql.placeholder('id')))
        .returning()
        .prepare(),
    ).get({
      id: delivery.id,
      ...next,
      attempts,
      lastAttemptAt: nowIso,
      lastStatusCode: outcome.statusCode,
      lastError: outcome.error,
      lastLatencyMs: outcome.latencyMs,
    }) as DeliveryRow | undefined;
    let disabled = false;
    if (updated && !options.final) {
      if (outcome.ok) {
        preparedFor(tx, 'webhooks:healthy', () =>
          tx
            .update(webhookSubscriptions)
            .set({ failingSince: null })
            .where(and(eq(webhookSubscriptions.id, sql.placeholder('id')), isNotNull(webhookSubscriptions.failingSince)))
            .prepare(),
        ).run({ id: delivery.subscriptionId });
      } else {
        tx.update(webhookSubscriptions)
          .set({ failingSince: nowIso })
          .where(and(eq(webhookSubscriptions.id, delivery.subscriptionId), isNull(webhookSubscriptions.failingSince)))
          .run();
        disabled = disableFailing(tx, clock, delivery.subscriptionId, new Date(now.getTime() - DISABLE_AFTER_MS).toISOString());
      }
    }
    return { delivery: updated ?? delivery, disabled };
  });
}

/**
 * Disables a subscription that is enabled and has been failing since `cutoff` or earlier, and
 * appends the `webhook.disabled` event (with the subscription as it is now). Whether it did. (The
 * times are all toISOString()'s, which compare as text.)
 */
function disableFailing(tx: Db, clock: Clock, id: string, cutoff: string): boolean {
  const sub = tx
    .update(webhookSubscriptions)
    .set({
      enabled: false,
      disabledReason: sql`'every delivery attempt has failed since ' || ${webhookSubscriptions.failingSince}`,
      updatedAt: clock.now().toISOString(),
    })
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.enabled, true), lte(webhookSubscriptions.failingSince, cutoff)))
    .returning()
    .get();
  if (!sub) return false;
  const reason = sub.disabledReason!;
  appendEvent(tx, clock, {
    tenantId: sub.tenantId,
    type: 'webhook.disabled',
    actorId: null,
    subject: { type: 'webhook', id: sub.id },
    data: { webhook_id: sub.id, url: sub.url, reason, failing_since: sub.failingSince! },
    recipients: [sub.createdBy],
  });
  return true;
}

/** The body of a `webhook.test` message. */
export const testMessageBody = (sub: SubscriptionRow, now: Date): string =>
  messageBody('webhook.test', now.toISOString(), { webhook_id: sub.id, message: 'This is a test event sent on request.' });

/** A `webhook.test` message as sent, recorded in the log with its outcome; it is never retried. */
export function recordTestDelivery(db: Db, clock: Clock, sub: SubscriptionRow, message: { id: string; body: string; sentAt: Date }, outcome: AttemptOutcome): DeliveryRow {
  const sentAt = message.sentAt.toISOString();
  return db
    .insert(webhookDeliveries)
    .values({
      id: newId(),
      tenantId: sub.tenantId,
      subscriptionId: sub.id,
      eventSeq: null,
      messageId: message.id,
      eventType: 'webhook.test',
      body: message.body,
      status: outcome.ok ? 'succeeded' : 'failed',
      attempts: 1,
      nextAttemptAt: null,
      lastAttemptAt: sentAt,
      lastStatusCode: outcome.statusCode,
      lastError: outcome.error,
      lastLatencyMs: outcome.latencyMs,
      createdAt: sentAt,
      completedAt: clock.now().toISOString(),
    })
    .returning()
    .get();
}
