// Outbound webhooks: a tenant's subscriptions (target URL, event types, signing secrets, and the
// outbox cursor: the last event of the log already turned into deliveries), and the delivery log,
// one row per message to one subscription, which is also the queue the delivery worker drains.
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

export const webhookSubscriptions = sqliteTable(
  'webhook_subscriptions',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    url: text('url').notNull(),
    description: text('description'),
    /** JSON array of event types; null: every type of the catalogue. */
    eventTypes: text('event_types'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    /** Why the server disabled it (failing for 3 days); null when enabled or disabled by an admin. */
    disabledReason: text('disabled_reason'),
    /** `whsec_…`: signs every delivery. */
    secret: text('secret').notNull(),
    /** The secret before the last rotation, still signing alongside until `previous_secret_expires_at`. */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: text('previous_secret_expires_at'),
    /** The outbox cursor: events of the tenant with a larger `seq` are not yet queued for it. */
    cursorSeq: integer('cursor_seq').notNull().default(0),
    /** Start of the current run of failed attempts with no success since; null when the last attempt succeeded. */
    failingSince: text('failing_since'),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('webhook_subscriptions_tenant_idx').on(t.tenantId, t.createdAt), index('webhook_subscriptions_created_by_idx').on(t.createdBy)],
);

export const webhookDeliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof webhookDeliveryStatuses)[number];

export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    subscriptionId: text('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    /** The event's place in the log (the order of delivery); null for a `webhook.test`. */
    eventSeq: integer('event_seq'),
    /** `webhook-id`: the event's id, the same on every attempt. */
    messageId: text('message_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The exact body sent on every attempt: `{type, timestamp, data}`. */
    body: text('body').notNull(),
    status: text('status', { enum: webhookDeliveryStatuses }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When the next attempt is due (pending only). */
    nextAttemptAt: text('next_attempt_at'),
    lastAttemptAt: text('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    lastLatencyMs: integer('last_latency_ms'),
    createdAt: text('created_at').notNull(),
    completedAt: text('completed_at'),
  },
  (t) => [
    // The head of a subscription's queue: its oldest pending delivery in log order.
    index('webhook_deliveries_queue_idx').on(t.subscriptionId, t.status, t.eventSeq),
    index('webhook_deliveries_log_idx').on(t.subscriptionId, t.createdAt),
    index('webhook_deliveries_tenant_idx').on(t.tenantId),
  ],
);
