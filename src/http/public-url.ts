// The one place absolute URLs come from (CASE URIs, the API reference's server, links in messages):
// PUBLIC_URL when it is set; otherwise the scheme and host a trusted proxy forwarded; otherwise
// http://localhost:<PORT>.
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { forwardedOrigin } from './client-ip';

/** The server's origin (and path prefix, when PUBLIC_URL has one), without a trailing slash. */
export function publicOrigin(c: Context<AppEnv>): string {
  const { config } = c.var.deps;
  const origin = config.publicUrlSet ? config.publicUrl : (forwardedOrigin(c, config.trustProxy) ?? config.publicUrl);
  return origin.replace(/\/+$/, '');
}

/** An absolute URL of one of this server's paths (`/api/...`). */
export function absoluteUrl(c: Context<AppEnv>, path: string): string {
  return `${publicOrigin(c)}${path.startsWith('/') ? path : `/${path}`}`;
}
