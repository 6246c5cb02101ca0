// Webhook use cases: subscriptions (create, change, rotate the secret, delete) and the delivery log
// (list, retry). The queue the delivery worker drains (enqueueing, due heads, each attempt's
// bookkeeping) is outbox.ts.
import { randomBytes } from 'node:crypto';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { webhookDeliveries, webhookSubscriptions, type WebhookDeliveryStatus } from '../../db/schema';
import { lastEventSeq } from '../events/log';
import { notFound } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { countRows, selectPage } from '../lib/sql';

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** How long the secret replaced by a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600_000;

/** `whsec_` + base64 of 32 random bytes, as Standard Webhooks libraries read it. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export const subscriptionEventTypes = (row: SubscriptionRow): string[] | null =>
  row.eventTypes === null ? null : (JSON.parse(row.eventTypes) as string[]);

export interface SubscriptionInput {
  url: string;
  event_types?: string[] | null;
  description?: string | null;
  enabled?: boolean;
}

const typesColumn = (types: string[] | null | undefined): string | null => (types == null ? null : JSON.stringify([...new Set(types)]));

/** A new subscription receives the events appended from now on (its cursor starts at the log's end). */
export function createSubscription(db: Db, clock: Clock, tenantId: string, createdBy: string, input: SubscriptionInput): { row: SubscriptionRow; secret: string } {
  const now = clock.now().toISOString();
  const secret = newSecret();
  const row = inTransaction(db, (tx) =>
    tx
      .insert(webhookSubscriptions)
      .values({
        id: newId(),
        tenantId,
        url: input.url,
        description: input.description ?? null,
        eventTypes: typesColumn(input.event_types),
        enabled: input.enabled ?? true,
        secret,
        cursorSeq: lastEventSeq(tx, tenantId),
        createdBy,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get(),
  );
  return { row, secret };
}

export function getSubscription(db: Db, tenantId: string, id: string): SubscriptionRow {
  const row = db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('Webhook');
  return row;
}

/** Any tenant's subscription by id: the worker's read before each attempt (prepared once: it is on every delivery). */
export function findSubscription(db: Db, id: string): SubscriptionRow | undefined {
  return preparedFor(db, 'webhooks:find', () =>
    db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sql.placeholder('id'))).prepare(),
  ).get({ id });
}

export function listSubscriptions(db: Db, tenantId: string, page: PageQuery): { rows: SubscriptionRow[]; total: number } {
  const where = eq(webhookSubscriptions.tenantId, tenantId);
  const { rows, total } = selectPage(db, webhookSubscriptions, where, [asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id)], pageBounds(page));
  return { rows, total };
}

/** Enabling again (by an admin) clears what the server recorded when it disabled it. */
export function updateSubscription(db: Db, clock: Clock, row: SubscriptionRow, changes: Partial<SubscriptionInput>): SubscriptionRow {
  const reEnabled = changes.enabled === true && !row.enabled;
  return db
    .update(webhookSubscriptions)
    .set({
      ...(changes.url !== undefined ? { url: changes.url } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.event_types !== undefined ? { eventTypes: typesColumn(changes.event_types) } : {}),
      ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
      ...(reEnabled ? { disabledReason: null, failingSince: null } : {}),
      updatedAt: clock.now().toISOString(),
    })
    .where(eq(webhookSubscriptions.id, row.id))
    .returning()
    .get()!;
}

/** Its delivery log goes with it (ON DELETE CASCADE). */
export function deleteSubscription(db: Db, row: SubscriptionRow): void {
  db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, row.id)).run();
}

/** A new secret; the current one keeps signing beside it for 24 hours, so receivers can switch without losing a message. */
export function rotateSecret(db: Db, clock: Clock, row: SubscriptionRow): { row: SubscriptionRow; secret: string } {
  const now = clock.now();
  const secret = newSecret();
  const updated = db
    .update(webhookSubscriptions)
    .set({
      secret,
      previousSecret: row.secret,
      previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS).toISOString(),
      updatedAt: now.toISOString(),
    })
    .where(eq(webhookSubscriptions.id, row.id))
    .returning()
    .get()!;
  return { row: updated, secret };
}

/** The secrets that sign a message now: the current one, and the previous one until it expires. */
export function signingSecrets(row: SubscriptionRow, now: Date): string[] {
  const secrets = [row.secret];
  if (row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now.toISOString()) secrets.push(row.previousSecret);
  return secrets;
}

export function listDeliveries(db: Db, row: SubscriptionRow, status: WebhookDeliveryStatus | undefined, page: PageQuery) {
  const { limit, offset } = sqlPageBounds(page);
  const where = and(eq(webhookDeliveries.subscriptionId, row.id), status ? eq(webhookDeliveries.status, status) : undefined);
  const rows = db
    .select()
    .from(webhookDeliveries)
    .where(where)
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, webhookDeliveries, where);
  return { rows, total };
}

export function getDelivery(db: Db, row: SubscriptionRow, deliveryId: string): DeliveryRow {
  const delivery = db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, row.id)))
    .get();
  if (!delivery) throw notFound('Delivery');
  return delivery;
}

/**
 * Due now, whatever its state: a failed (or delivered) message is sent again with the same
 * `webhook-id`, and a pending one skips the rest of its wait. It takes its place in the queue
 * by its event's position in the log.
 */
export function retryDelivery(db: Db, clock: Clock, delivery: DeliveryRow): DeliveryRow {
  const failedBefore = delivery.status !== 'pending';
  return db
    .update(webhookDeliveries)
    .set({
      status: 'pending',
      nextAttemptAt: clock.now().toISOString(),
      completedAt: null,
      // A finished delivery retried by hand gets one more full round of attempts.
      ...(failedBefore ? { attempts: 0 } : {}),
    })
    .where(eq(webhookDeliveries.id, delivery.id))
    .returning()
    .get()!;
}
