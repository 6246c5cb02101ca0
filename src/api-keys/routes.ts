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
    scopes: z.array(z.string()).openapi({ description: 'The scopes the key holds; `["*"]`: every scope (keys made before scopes existed, and keys made without `scopes`)' }),
    course_ids: z.array(uuid()).nullable().openapi({ description: 'The only courses the key reaches; null: every course its creator reaches' }),
  })
  .openapi('ApiKey');

const scopeSchema = z
  .object({ name: z.string().openapi({ example: 'grades:read' }), area: z.string(), access: z.enum(['read', 'write']), description: z.string() })
  .openapi('ApiKeyScope');

const createdKeySchema = apiKeySchema
  .extend({ key: z.string().openapi({ description: 'The secret; shown only in this answer' }) })
  .openapi('CreatedApiKey');

const createBody = z
  .object({
    name: singleLineText().trim().min(1).max(200),
    expires_at: z.iso.datetime({ offset: true }).optional(),
    scopes: z
      .array(singleLineText().max(100))
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'Names from GET /api/api-keys/scopes (a write scope holds its read one); omitted: every scope' }),
    course_ids: z.array(uuid()).min(1).max(1000).optional().openapi({ description: 'Only these courses of the tenant; omitted: every course the creator reaches' }),
  })
  .strict();

const presentKey = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: `lms_${k.prefix}`,
  created_at: k.createdAt,
  last_used_at: k.lastUsedAt,
  expires_at: k.expiresAt,
  scopes: k.scopes,
  course_ids: k.courseIds,
});

export const apiKeysRouter = newRouter()
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/api-keys/scopes',
      operationId: 'listApiKeyScopes',
      tags,
      summary: 'The scopes an API key may hold: a read and a write scope per area',
      description:
        'A key acts as its creator, narrowed to its scopes (and its course_ids): it never holds more than its creator may do, ' +
        'checked at every call. A call outside its scopes is 403 `insufficient_scope` with `WWW-Authenticate: Bearer error="insufficient_scope"`.',
      responses: { 200: jsonContent(z.object({ data: z.array(scopeSchema) }), 'The catalogue') },
    }),
    (c) => c.json({ data: c.var.deps.scopes.catalogue }, 200),
  )
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
      description:
        '`scopes` from GET /api/api-keys/scopes (omitted: every scope), `course_ids` to reach only those courses of the tenant. ' +
        'An unknown scope or course is a 422. The key never holds more than its creator: demoting the creator demotes the key.',
      request: jsonBody(createBody),
      responses: { 201: jsonContent(createdKeySchema, 'The key with its secret'), ...errorResponses(403, 422) },
    }),
    (c) => {
      authorizeApiKeys(c.var.actor, 'create');
      const body = c.req.valid('json');
      const { row, key } = createApiKey(c.var.deps.db, c.var.deps.clock, c.var.actor, {
        name: body.name,
        expiresAt: body.expires_at,
        scopes: body.scopes,
        courseIds: body.course_ids,
        catalogue: c.var.deps.scopes.catalogue,
      });
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
