// Subscription and delivery rows → public JSON. The secret is never part of a subscription's
// JSON: the routes that make one (create, rotate) add it to that one answer.
import { subscriptionEventTypes, type DeliveryRow, type SubscriptionRow } from './service';

export const presentWebhook = (row: SubscriptionRow) => ({
  id: row.id,
  url: row.url,
  description: row.description,
  event_types: subscriptionEventTypes(row),
  enabled: row.enabled,
  disabled_reason: row.disabledReason,
  failing_since: row.failingSince,
  previous_secret_expires_at: row.previousSecret ? row.previousSecretExpiresAt : null,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

export const presentDelivery = (row: DeliveryRow) => ({
  id: row.id,
  webhook_id: row.subscriptionId,
  message_id: row.messageId,
  event_type: row.eventType,
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.lastStatusCode,
  last_error: row.lastError,
  last_latency_ms: row.lastLatencyMs,
  last_attempt_at: row.lastAttemptAt,
  next_attempt_at: row.status === 'pending' ? row.nextAttemptAt : null,
  created_at: row.createdAt,
  completed_at: row.completedAt,
});
