// Resolves the caller of every non-public route from `Authorization: Bearer` or `X-API-Key`.
import type { Context, MiddlewareHandler } from 'hono';
import { looksLikeApiKey } from './secrets';
import type { AppEnv } from '../context';
import { unauthorized } from '../http/errors';

/** Paths anyone may call, whatever the method: health, sign-in, key discovery, the API reference. */
export function isPublicRoute(path: string): boolean {
  if (path === '/api/health' || path === '/api/health/uptime') return true;
  if (path === '/api/openapi.json' || path === '/api/docs' || path.startsWith('/api/docs/')) return true;
  // Sign-in and its kin take POST only; another method there is told so (405), not asked to sign in.
  if (path.startsWith('/api/auth/')) return true;
  // LTI: the platform's keys, and what tools call with credentials of their own (service tokens, registration tokens).
  if (path === '/api/lti/jwks' || path === '/api/lti/token' || path === '/api/lti/registrations' || path.startsWith('/api/lti/courses/')) return true;
  return false;
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null;
}

/** The credential of a request and the header it came in; `X-API-Key` carries API keys only. */
export function credentialFrom(c: Context): { credential: string; header: 'authorization' | 'x-api-key' } | null {
  const header = c.req.header('Authorization');
  if (header) {
    const token = bearerToken(header);
    return token ? { credential: token, header: 'authorization' } : null;
  }
  const key = c.req.header('X-API-Key')?.trim();
  return key ? { credential: key, header: 'x-api-key' } : null;
}

/**
 * Module level, not a closure inside the middleware: tsx (esbuild keepNames) names every function
 * it creates with Object.defineProperty, which a closure built per request paid on every request.
 */
const invalid = () => unauthorized('The credential is invalid, expired or revoked');

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === 'OPTIONS' || isPublicRoute(c.req.path)) return next();
  const found = credentialFrom(c);
  if (!found) throw unauthorized('Authentication required: send a Bearer token or an X-API-Key header');
  if (found.header === 'x-api-key' && !looksLikeApiKey(found.credential)) throw invalid();
  const actor = await c.get('deps').auth.authenticate(found.credential);
  if (!actor) throw invalid();
  c.set('actor', actor);
  return next();
};
