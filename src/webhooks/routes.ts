// Webhooks over HTTP: tenant admins subscribe endpoints to the tenant's events, rotate their
// signing secrets, read the delivery log, retry a delivery and send a test message. Each route
// finds the subscription in the caller's tenant first (404 elsewhere), then asks the policy (403).
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { eventTypes } from '../events/types';
import { unprocessable } from '../http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { authorizeWebhooks } from './policy';
import { presentDelivery, presentWebhook } from './present';
import {
  createWebhookBody,
  deliveriesQuery,
  deliveryParams,
  deliverySchema,
  eventTypeSchema,
  eventTypesList,
  messageHeaders,
  messageSchema,
  updateWebhookBody,
  webhookSchema,
  webhookWithSecret,
} from './schemas';
import {
  createSubscription,
  deleteSubscription,
  getDelivery,
  getSubscription,
  listDeliveries,
  listSubscriptions,
  retryDelivery,
  rotateSecret,
  updateSubscription,
} from './service';
import { TargetRefused } from './targets';

const tags: [ApiTag] = ['Webhooks'];

async function vetUrl(c: Context<AppEnv>, url: string): Promise<string> {
  try {
    return (await c.var.deps.webhooks.vetUrl(url)).toString();
  } catch (err) {
    if (err instanceof TargetRefused) throw unprocessable(`url refused: ${err.message}`, [{ path: 'url', message: err.message }]);
    throw err;
  }
}

/** The caller's tenant's subscription, or 404; then the policy. */
function subscriptionFor(c: Context<AppEnv>, id: string) {
  const row = getSubscription(c.var.deps.db, c.var.actor.tenantId, id);
  authorizeWebhooks(c.var.actor);
  return row;
}

export const webhooksRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/webhooks/event-types',
      operationId: 'listWebhookEventTypes',
      tags,
      summary: 'The event types a webhook can receive, with the JSON Schema of each one’s data (admin)',
      responses: { 200: jsonContent(z.object({ data: z.array(eventTypeSchema) }), 'Event types'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeWebhooks(c.var.actor);
      return c.json({ data: eventTypesList }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/webhooks',
      operationId: 'listWebhooks',
      tags,
      summary: "The tenant's webhook subscriptions (admin)",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(webhookSchema), 'Subscriptions'), ...errorResponses(403) },
    }),
    (c) => {
      authorizeWebhooks(c.var.actor);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listSubscriptions(c.var.deps.db, c.var.actor.tenantId, q), presentWebhook), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/webhooks',
      operationId: 'createWebhook',
      tags,
      summary: 'Subscribe an endpoint to events (admin); the signing secret is shown this once',
      description:
        'The endpoint receives the events appended from now on. Its URL must be https:// (http:// when WEBHOOK_ALLOW_HTTP) and its host ' +
        'must resolve only to public addresses (unless WEBHOOK_ALLOW_PRIVATE_TARGETS): a refused URL is a 422.',
      request: jsonBody(createWebhookBody),
      responses: { 201: jsonContent(webhookWithSecret, 'The subscription, with its secret'), ...errorResponses(403, 422) },
    }),
    async (c) => {
      authorizeWebhooks(c.var.actor);
      const body = c.req.valid('json');
      const url = await vetUrl(c, body.url);
      const { row, secret } = createSubscription(c.var.deps.db, c.var.deps.clock, c.var.actor.tenantId, c.var.actor.userId, { ...body, url });
      c.header('Location', `/api/webhooks/${row.id}`);
      return c.json({ ...presentWebhook(row), secret }, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/webhooks/{id}',
      operationId: 'getWebhook',
      tags,
      summary: 'One subscription (admin)',
      request: { params: idParams },
      responses: { 200: jsonContent(webhookSchema, 'The subscription'), ...errorResponses(403, 404) },
    }),
    (c) => c.json(presentWebhook(subscriptionFor(c, c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'patch',
      path: '/api/webhooks/{id}',
      operationId: 'updateWebhook',
      tags,
      summary: 'Change the URL, types, description, or enable/disable (admin)',
      request: { params: idParams, ...jsonBody(updateWebhookBody) },
      responses: { 200: jsonContent(webhookSchema, 'The subscription'), ...errorResponses(403, 404, 422) },
    }),
    async (c) => {
      const row = subscriptionFor(c, c.req.valid('param').id);
      const changes = c.req.valid('json');
      const url = changes.url !== undefined ? await vetUrl(c, changes.url) : undefined;
      const updated = updateSubscription(c.var.deps.db, c.var.deps.clock, row, { ...changes, ...(url ? { url } : {}) });
      return c.json(presentWebhook(updated), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/webhooks/{id}',
      operationId: 'deleteWebhook',
      tags,
      summary: 'Delete a subscription and its delivery log (admin)',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(403, 404) },
    }),
    (c) => {
      deleteSubscription(c.var.deps.db, subscriptionFor(c, c.req.valid('param').id));
      return c.body(null, 204);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      tags,
      summary: 'A new signing secret, shown this once; the old one keeps signing beside it for 24 h (admin)',
      request: { params: idParams },
      responses: { 200: jsonContent(webhookWithSecret, 'The subscription, with its new secret'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { row, secret } = rotateSecret(c.var.deps.db, c.var.deps.clock, subscriptionFor(c, c.req.valid('param').id));
      return c.json({ ...presentWebhook(row), secret }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/webhooks/{id}/test',
      operationId: 'testWebhook',
      tags,
      summary: 'Send a webhook.test message now and answer its outcome (admin)',
      description: 'The attempt is recorded in the delivery log and never retried; the answer is 200 whether the endpoint accepted it or not (see `status`).',
      request: { params: idParams },
      responses: { 200: jsonContent(deliverySchema, 'The test delivery'), ...errorResponses(403, 404) },
    }),
    async (c) => {
      const row = subscriptionFor(c, c.req.valid('param').id);
      return c.json(presentDelivery(await c.var.deps.webhooks.sendTest(row)), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      tags,
      summary: 'The delivery log, newest first, optionally of one status (admin)',
      request: { params: idParams, query: deliveriesQuery },
      responses: { 200: jsonContent(pageOf(deliverySchema), 'Deliveries'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const row = subscriptionFor(c, c.req.valid('param').id);
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listDeliveries(c.var.deps.db, row, q.status, q), presentDelivery), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/webhooks/{id}/deliveries/{delivery_id}/retry',
      operationId: 'retryWebhookDelivery',
      tags,
      summary: 'Send a delivery again now, with the same webhook-id, in its place in the queue (admin)',
      request: { params: deliveryParams },
      responses: { 202: jsonContent(deliverySchema, 'The delivery, pending and due now'), ...errorResponses(403, 404) },
    }),
    (c) => {
      const { id, delivery_id } = c.req.valid('param');
      const row = subscriptionFor(c, id);
      const delivery = retryDelivery(c.var.deps.db, c.var.deps.clock, getDelivery(c.var.deps.db, row, delivery_id));
      return c.json(presentDelivery(delivery), 202);
    },
  );

/** Each message an endpoint may receive, as an OpenAPI 3.1 webhook named after its type: its headers and body. */
export function documentMessages(app: OpenAPIHono<AppEnv>): void {
  for (const type of eventTypes) {
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `receive_${type.replace(/\./g, '_')}`,
      tags,
      summary: `The ${type} message`,
      security: [],
      request: { headers: messageHeaders, body: { required: true, content: { 'application/json': { schema: messageSchema(type) } } } },
      responses: { 200: { description: 'Any 2xx answer acknowledges the message; anything else (or no answer within 10 s) is retried' } },
    });
  }
}
