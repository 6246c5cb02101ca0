// Per-request plumbing, in one middleware because it runs on every request: the request id, the
// app's dependencies and logger in the context, the security headers of every answer, and one
// access-log line (request id, user, method, path, status, duration). Kept cheap on purpose:
// see the Foundation section of bench/RESULTS.md.
import type { ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Deps } from '../context';
import { accessLoggerOf } from '../logger';

/** Sent with every answer: the defaults of Hono's secureHeaders, with CORP relaxed to same-site. */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-site'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
];

/** A caller's own X-Request-Id is kept when it is short and plain (Hono's requestId rule). */
const ACCEPTABLE_REQUEST_ID = /^[\w\-=]{1,255}$/;

export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  const accessLog = accessLoggerOf(deps.logger);
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
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
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

    if (accessLog.isLevelEnabled('info')) {
      accessLog.info(
        {
          requestId,
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
          userId: c.get('actor')?.userId,
        },
        'request',
      );
    }
  };
}
