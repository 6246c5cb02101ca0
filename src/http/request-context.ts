// Per-request plumbing, in one middleware because it runs on every request: the request id, the
// app's dependencies and logger in the context, the security headers of every answer, and one
// access-log line (request id, user, client address, method, path, status, duration), and, when metrics are on,
// one histogram observation (route template, status, duration). Kept cheap on purpose:
// see the Foundation section of bench/RESULTS.md.
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv, Deps } from '../context';
import { accessLoggerOf } from '../logger';
import { clientIp } from './client-ip';

/** The route label of every request no route matches (so raw paths never become label values). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Sent with every answer: the headers that protect JSON (OWASP REST Security): no MIME sniffing,
 * no framing, HTTPS only, no referrer, and no cross-site reads of API data (CORP). Each header is
 * work for every client and for the server on every request (see the Foundation section of
 * bench/RESULTS.md), so the HTML-only ones are in DOCUMENT_SECURITY_HEADERS.
 */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-site'],
];

/**
 * The rest of Hono's secureHeaders defaults, which act only on HTML a browser renders: sent with
 * the HTML pages (the API reference), besides SECURITY_HEADERS.
 */
export const DOCUMENT_SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
];

/** For routes that answer HTML: adds DOCUMENT_SECURITY_HEADERS. */
export const documentSecurityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  for (const [name, value] of DOCUMENT_SECURITY_HEADERS) c.res.headers.set(name, value);
};

const nodeResponseOf = (c: Context): ServerResponse | undefined => (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;

/**
 * Sets a response header the cheap way (see requestContext): on node's response when there is
 * one, so that Hono keeps its plain-object headers; on the web Response otherwise (tests).
 */
export function setResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = nodeResponseOf(c);
  if (outgoing) outgoing.setHeader(name, value);
  else c.header(name, value);
}

/** A caller's own X-Request-Id is kept when it is short and plain (Hono's requestId rule). */
const ACCEPTABLE_REQUEST_ID = /^[\w\-=]{1,255}$/;

/**
 * The route template that answered (`/api/documents/:id`), never the raw path: the handler that
 * ran, or when a middleware answered first (a 401), the route that would have; `unmatched` when
 * no route matches the path (404, 405), so that clients cannot mint label values.
 */
export function routeLabel(c: Context): string {
  const routes = matchedRoutes(c);
  const ran = routes[c.req.routeIndex];
  if (ran && ran.method !== 'ALL') return ran.path;
  for (const route of routes) if (route.method !== 'ALL') return route.path;
  return UNMATCHED_ROUTE;
}

export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  const accessLog = accessLoggerOf(deps.logger);
  const metrics = deps.metrics;
  return async (c, next) => {
    const started = performance.now();
    const given = c.req.header('X-Request-Id');
    const requestId = given !== undefined && ACCEPTABLE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
    c.set('requestId', requestId);
    c.set('deps', deps);
    c.set('logger', deps.logger);

    // Behind @hono/node-server the headers go straight onto node's response, where the answer's
    // own headers are merged over them. Setting them on a web Response instead turns Hono's
    // plain-object fast path into a Headers object and costs more than the whole route.
    const outgoing = nodeResponseOf(c);
    if (outgoing) {
      for (const [name, value] of SECURITY_HEADERS) outgoing.setHeader(name, value);
      outgoing.setHeader('X-Request-Id', requestId);
    }
    await next();
    if (!outgoing) {
      // app.request() (tests) has no node response: the same headers on the web Response.
      const headers = c.res.headers;
      for (const [name, value] of SECURITY_HEADERS) if (!headers.has(name)) headers.set(name, value);
      headers.set('X-Request-Id', requestId);
    }

    metrics.observeRequest(c.req.method, routeLabel(c), c.res.status, (performance.now() - started) / 1000);

    if (accessLog.isLevelEnabled('info')) {
      accessLog.info(
        {
          requestId,
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
          userId: c.get('actor')?.userId,
          ip: clientIp(c, deps.config.trustProxy),
        },
        'request',
      );
    }
  };
}
