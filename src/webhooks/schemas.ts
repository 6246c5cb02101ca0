// Request and response shapes of the webhooks API, and of the messages it sends (one OpenAPI
// webhook per event type, so integrators generate receivers from the same document).
import { z } from '@hono/zod-openapi';
import { webhookDeliveryStatuses } from '../../db/schema';
import { eventCatalogue, eventTypes, isEventType } from '../events/types';
import { timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText } from '../http/text';

const eventTypeList = z
  .array(z.string().refine(isEventType, { message: `must be one of ${eventTypes.join(', ')}` }))
  .min(1)
  .max(eventTypes.length * 2)
  .nullable()
  .openapi({ description: 'Event types to receive; null or omitted: every type', example: ['enrollment.created', 'grade.recorded'] });

const url = z.string().min(1).max(2000).openapi({ description: 'https:// endpoint (http:// only when the server allows it)', example: 'https://hooks.example.org/lms' });

export const createWebhookBody = z
  .object({
    url,
    event_types: eventTypeList.optional(),
    description: multiLineText().max(2000).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const updateWebhookBody = createWebhookBody.partial().refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' });

export const webhookSchema = z
  .object({
    id: uuid(),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()).nullable().openapi({ description: 'null: every type' }),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({ description: 'Set when the server disabled it (3 days of failures)' }),
    failing_since: timestamp.nullable().openapi({ description: 'Start of the current run of failed attempts; null when the last attempt succeeded' }),
    previous_secret_expires_at: timestamp.nullable().openapi({ description: 'Until then the secret replaced by the last rotation signs too' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Webhook');

export const webhookWithSecret = webhookSchema
  .extend({ secret: z.string().openapi({ description: 'The signing secret (whsec_…), shown this once', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) })
  .openapi('WebhookWithSecret');

export const deliverySchema = z
  .object({
    id: uuid(),
    webhook_id: uuid(),
    message_id: z.string().openapi({ description: 'The webhook-id header: the event id, the same on every attempt' }),
    event_type: z.string(),
    status: z.enum(webhookDeliveryStatuses),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_latency_ms: z.number().int().nullable(),
    last_attempt_at: timestamp.nullable(),
    next_attempt_at: timestamp.nullable().openapi({ description: 'When a pending delivery is due' }),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .openapi('WebhookDelivery');

export const deliveriesQuery = paginationQuery.extend({ status: z.enum(webhookDeliveryStatuses).optional() });

export const deliveryParams = z.object({ id: uuidParam('id'), delivery_id: uuidParam('delivery_id') });

export const eventTypeSchema = z
  .object({
    type: z.string(),
    description: z.string(),
    data_schema: z.record(z.string(), z.unknown()).openapi({ description: "JSON Schema of the message's `data`" }),
  })
  .openapi('WebhookEventType');

/** The body of a message of one type, as sent. */
export const messageSchema = (type: string) =>
  z
    .object({
      type: z.literal(type),
      timestamp: timestamp.openapi({ description: 'When the event happened' }),
      data: eventCatalogue[type as keyof typeof eventCatalogue].data,
    })
    .openapi(`WebhookMessage_${type.replace(/\./g, '_')}`);

export const eventTypesList = eventTypes.map((type) => ({
  type,
  description: eventCatalogue[type].description,
  data_schema: z.toJSONSchema(eventCatalogue[type].data, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>,
}));

/** The Standard Webhooks headers every message carries. */
export const messageHeaders = z.object({
  'webhook-id': z.string().openapi({ description: 'The message id: the same on every attempt (deduplicate on it)' }),
  'webhook-timestamp': z.string().openapi({ description: 'Seconds since the epoch when this attempt was signed' }),
  'webhook-signature': z.string().openapi({
    description: 'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per secret (two during a rotation)',
  }),
});
