// Route-definition helpers shared by every area: routers that answer validation failures as
// problem+json, JSON bodies and responses, and the standard error responses for the OpenAPI document.
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { problemSchema, validationFailure } from './errors';

/**
 * The validation hook of every route: a request that fails its schema is a 400
 * `validation_failed`, or a 422 for characters that cannot be stored (see validationFailure).
 * A route passes its own (`.openapi(route, handler, validationHook({ missingIsUnprocessable: true }))`)
 * only to change that.
 */
export function validationHook(options: Parameters<typeof validationFailure>[2] = {}) {
  return (result: { success: boolean; error?: z.ZodError }): undefined => {
    // @hono/zod-validator hands the hook the input as received (path, query or body) as `data`,
    // failed or not, though the type leaves it out: it tells a missing value apart.
    if (!result.success) throw validationFailure(result.error!, (result as { data?: unknown }).data, options);
  };
}

/** Every router of the app. */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });
}

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  body: { required: true, description, content: { 'application/json': { schema } } },
});

const errorDescriptions: Record<number, string> = {
  400: 'Malformed request (validation_failed)',
  401: 'Missing, invalid or expired credential (unauthorized)',
  403: 'Authenticated but not allowed (forbidden)',
  404: 'Not found, or belongs to another tenant (not_found)',
  409: 'Conflicts with the current state (conflict)',
  413: 'Body too large (payload_too_large)',
  415: 'Body is not JSON (unsupported_media_type)',
  422: 'Well-formed but not acceptable (validation_failed)',
  429: 'Too many attempts (rate_limited)',
  503: 'Service unavailable',
};

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 503;

export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  const out = {} as Record<S, { description: string; content: { 'application/problem+json': { schema: typeof problemSchema } } }>;
  for (const status of statuses) {
    out[status] = {
      description: errorDescriptions[status] ?? 'Error',
      content: { 'application/problem+json': { schema: problemSchema } },
    };
  }
  return out;
}

/** Errors every authenticated route can answer. */
export const authErrors = errorResponses(400, 401, 403, 404);

/**
 * A UUID, read in lower case: UUIDs are case-insensitive on input (RFC 9562), ids are stored in
 * lower case, and an id in capitals (as some stacks write GUIDs) must find the same row.
 */
export const uuid = (params?: Parameters<typeof z.uuid>[0]) => z.uuid(params).toLowerCase();

export const uuidParam = (name: string, description?: string) =>
  uuid({ message: `${name} must be a UUID` }).openapi({
    param: { name, in: 'path', ...(description ? { description } : {}) },
    example: '0192f6a4-7b1c-7c3e-8e5a-3f1d2c4b5a69',
  });

export const idParams = z.object({ id: uuidParam('id') });

export const noContent = { description: 'Done; no body' };

/** Security requirements: bearer JWT or API key (bearer or X-API-Key). */
export const secured: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

export const timestamp = z.iso.datetime().openapi({ example: '2026-01-01T00:00:00.000Z' });

/** `?flag=true|false` in a query string. */
export const booleanQuery = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .optional();
