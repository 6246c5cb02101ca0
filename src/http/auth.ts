// Resolves the caller of every non-public route from `Authorization: Bearer` or `X-API-Key`.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';
import { unauthorized } from './errors';

/** Routes anyone may call: health, sign-in, key discovery, the API reference. */
export function isPublicRoute(method: string, path: string): boolean {
  if (path === '/api/health' || path === '/api/health/uptime') return true;
  if (path === '/api/openapi.json' || path === '/api/docs' || path.startsWith('/api/docs/')) return true;
  if (method === 'POST' && path.startsWith('/api/auth/')) return true;
  return false;
}

export function credentialFrom(c: Context): string | null {
  const header = c.req.header('Authorization');
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1]! : null;
  }
  return c.req.header('X-API-Key')?.trim() || null;
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === 'OPTIONS' || isPublicRoute(c.req.method, c.req.path)) return next();
  const credential = credentialFrom(c);
  if (!credential) throw unauthorized('Authentication required: send a Bearer token or an X-API-Key header');
  const actor = await c.var.deps.auth.authenticate(credential);
  if (!actor) throw unauthorized('The credential is invalid, expired or revoked');
  c.set('actor', actor);
  return next();
};
