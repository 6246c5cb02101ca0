// JSON bodies must be UTF-8 (RFC 8259). Decoding leniently, as Request.json() does, turns each
// invalid byte into U+FFFD: a lone surrogate sent as raw bytes (ED A0 80) was stored as three
// replacement characters instead of being refused. Checked strictly here, an invalid body is a
// 400; the text decoded here is what the validator parses later.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';
import { hasBody, JSON_TYPE } from './body';
import { badRequest } from './errors';

const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether the request has a body, told by its framing when it came over a socket: asking the Node
 * adapter's request for `body` builds a web stream and a full `Request` around the socket, for
 * every POST. A request built in memory (app.request()) says so by its `body`.
 */
function carriesBody(c: Context<AppEnv>): boolean {
  if (!(c.env as { incoming?: unknown } | undefined)?.incoming) return c.req.raw.body !== null;
  return hasBody(c.req.raw.headers);
}

/**
 * After the body limits (so that what is read is bounded) and after authentication. `checkedElsewhere`:
 * routes (method and path) that decode their large bodies strictly themselves, off the event loop
 * (a CASE import: 30 MB decoded here would hold it for everyone).
 */
export function utf8JsonBodies(checkedElsewhere: { method: string; pattern: RegExp }[] = []): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || !carriesBody(c)) return next();
    if (checkedElsewhere.some((route) => route.method === method && route.pattern.test(c.req.path))) return next();
    if (!JSON_TYPE.test(c.req.header('Content-Type') ?? '')) return next();
    const bytes = await c.req.arrayBuffer();
    let text: string;
    try {
      text = strict.decode(bytes);
    } catch (err) {
      if (err instanceof TypeError) throw badRequest('The request body is not valid UTF-8');
      throw err;
    }
    // `c.req.json()` parses the cached text: otherwise it decodes the bytes again through a Response.
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    return next();
  };
}
