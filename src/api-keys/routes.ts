// API keys of the caller: listed without secrets, created with the secret shown once, deleted at once.
import { z } from '@hono/zod-openapi';
import { type ApiTag, authedRoute, errorResponses, idParams, jsonBody, jsonContent, newRouter, noContent, timestamp, uuid } from '../http/openapi';
import { pageOf, pageOfRows, paginationQuery } from '../http/pagination';
import { singleLineText } from '../http/text';
import { authorizeApiKeys } from './policy';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys, type ApiKeyRow } from './service';

const tags: [ApiTag] = ['API keys'];

const apiKeySchema = z
  .object({
    id: uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The visible start of the key, lms_<prefix>_…' }),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    expires_at: timestamp.nullable(),
  })
  .openapi('ApiKey');

const createdKeySchema = apiKeySchema
  .extend({ key: z.string().openapi({ description: 'The secret; shown only in this answer' }) })
  .openapi('CreatedApiKey');

const createBody = z
  .object({ name: singleLineText().trim().min(1).max(200), expires_at: z.iso.datetime({ offset: true }).optional() })
  .strict();

const presentKey = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: `lms_${k.prefix}`,
  created_at: k.createdAt,
  last_used_at: k.lastUsedAt,
  expires_at: k.expiresAt,
});

export const apiKeysRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/api-keys',
      operationId: 'listApiKeys',
      tags,
      summary: "The caller's API keys, never their secrets",
      request: { query: paginationQuery },
      responses: { 200: jsonContent(pageOf(apiKeySchema), 'API keys') },
    }),
    (c) => {
      const q = c.req.valid('query');
      return c.json(pageOfRows(c, q, listApiKeys(c.var.deps.db, c.var.actor, q), presentKey), 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'post',
      path: '/api/api-keys',
      operationId: 'createApiKey',
      tags,
      summary: 'Create an API key (signed in with a password, not with a key); the secret is in this answer only',
      request: jsonBody(createBody),
      responses: { 201: jsonContent(createdKeySchema, 'The key with its secret'), ...errorResponses(403, 422) },
    }),
    (c) => {
      authorizeApiKeys(c.var.actor, 'create');
      const body = c.req.valid('json');
      const { row, key } = createApiKey(c.var.deps.db, c.var.deps.clock, c.var.actor, { name: body.name, expiresAt: body.expires_at });
      c.header('Location', `/api/api-keys/${row.id}`);
      c.header('Cache-Control', 'no-store');
      return c.json({ ...presentKey(row), key }, 201);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/api-keys/{id}',
      operationId: 'getApiKey',
      tags,
      summary: 'One of the caller\'s API keys, without its secret',
      request: { params: idParams },
      responses: { 200: jsonContent(apiKeySchema, 'The key'), ...errorResponses(404) },
    }),
    (c) => c.json(presentKey(getApiKey(c.var.deps.db, c.var.actor, c.req.valid('param').id)), 200),
  )
  .openapi(
    authedRoute({
      method: 'delete',
      path: '/api/api-keys/{id}',
      operationId: 'deleteApiKey',
      tags,
      summary: 'Delete an API key; it stops working at once',
      request: { params: idParams },
      responses: { 204: noContent, ...errorResponses(404) },
    }),
    (c) => {
      const deps = c.var.deps;
      deleteApiKey(deps.db, deps.auth, c.var.actor, c.req.valid('param').id);
      return c.body(null, 204);
    },
  );
