// Request bodies: JSON only on JSON endpoints (415), bounded in size (413).
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../context';
import { AppError } from './errors';
import type { BodyLimitRule } from './body-rules';
import { FORM_TYPE, MULTIPART_TYPE } from './body-rules';

export { FORM_TYPE, MULTIPART_TYPE, uploadBody } from './body-rules';

export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Whether a request read from a socket has a body: it announces a length or a transfer encoding (RFC 9112 §6.1). */
export const hasBody = (headers: Headers): boolean => {
  const length = headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  return headers.has('transfer-encoding');
};

export function requestBodies(defaultMaxBytes: number, rules: BodyLimitRule[] = []): MiddlewareHandler<AppEnv> {
  // A body of announced length is left untouched and the server drains it, keeping the connection.
  // The rest of a streamed body is left unread, and the adapter gives up draining it after a moment
  // by closing the socket: said up front, a client knows that a request it pipelined after this one
  // was not read and sends it again, rather than losing it to a connection that claimed to stay open.
  const payloadTooLarge = (max: number, streamed = true) =>
    new AppError('payload_too_large', `The request body exceeds ${max} bytes`, streamed ? { headers: { Connection: 'close' } } : {});
  const tooLarge = (max: number) => () => {
    throw payloadTooLarge(max);
  };
  const defaultLimit = bodyLimit({ maxSize: defaultMaxBytes, onError: tooLarge(defaultMaxBytes) });
  const ruleLimits = rules.map((rule) => ({
    rule,
    limit: bodyLimit({ maxSize: rule.maxBytes, onError: tooLarge(rule.maxBytes) }),
  }));
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return next();
    if (!hasBody(c.req.raw.headers)) {
      // `fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' } })` sends an
      // empty body (`Content-Length: 0`) with a JSON type. Read it as `{}`, a body left out, not as
      // malformed JSON: a route with an optional body takes it, one with a required body names the
      // missing fields. (A request with neither length nor transfer encoding, as app.request()
      // builds them in tests, keeps its body.)
      if (c.req.header('Content-Length')?.trim() === '0' && JSON_TYPE.test(c.req.header('Content-Type') ?? '')) {
        c.req.raw = new Request(c.req.raw, { body: '{}' });
      }
      return next();
    }
    const type = c.req.header('Content-Type') ?? '';
    const match = ruleLimits.find(({ rule }) => rule.method === method && rule.pattern.test(c.req.path));
    const types = match?.rule.types ?? [JSON_TYPE];
    if (!types.some((accepted) => accepted.test(type))) {
      throw new AppError('unsupported_media_type', `Expected Content-Type: ${types.map(typeName).join(' or ')}, got ${type || 'none'}`);
    }
    // An announced length is judged without touching the body stream: wrapping the request body
    // and leaving it unread stalls the socket, where an untouched one is drained by the server.
    const length = c.req.header('Content-Length');
    if (length !== undefined && !c.req.raw.headers.has('transfer-encoding')) {
      const max = match?.rule.maxBytes ?? defaultMaxBytes;
      if (Number(length) > max) throw payloadTooLarge(max, false);
      return next();
    }
    if (match?.rule.streamed) return next();
    return (match?.limit ?? defaultLimit)(c, next);
  };
}

function typeName(pattern: RegExp): string {
  if (pattern === FORM_TYPE) return 'application/x-www-form-urlencoded';
  if (pattern === MULTIPART_TYPE) return 'multipart/form-data';
  return 'application/json';
}

/** The first buffer of a body read without an announced length; it doubles as needed. */
const UNANNOUNCED_START_BYTES = 64 * 1024;

/**
 * The request body's bytes, each chunk copied into one buffer as it arrives (sized by
 * Content-Length when announced; the body limits above have judged it). `c.req.arrayBuffer()`
 * keeps the chunks and joins them at the end, then copies the result once more: two copies of the
 * whole body in one turn of the event loop, for a body of tens of MiB hundreds of milliseconds on a
 * loaded machine (bench/case-import.ts). Here each turn copies one chunk.
 */
export async function bodyBytes(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const announced = Number(request.headers.get('content-length'));
  let buffer = new Uint8Array(Number.isSafeInteger(announced) && announced > 0 ? announced : UNANNOUNCED_START_BYTES);
  let length = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.max(buffer.byteLength * 2, length + value.byteLength));
      grown.set(buffer.subarray(0, length));
      buffer = grown;
    }
    buffer.set(value, length);
    length += value.byteLength;
  }
  return length === buffer.byteLength ? buffer : buffer.subarray(0, length);
}
