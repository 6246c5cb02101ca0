// Request bodies: JSON only on JSON endpoints (415), bounded in size (413).
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../context';
import { AppError } from './errors';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

const hasBody = (headers: Headers): boolean => {
  const length = headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  return headers.has('transfer-encoding');
};

/** Larger limits for the few endpoints that take whole documents. */
export interface BodyLimitRule {
  method: string;
  pattern: RegExp;
  maxBytes: number;
}

export function requestBodies(defaultMaxBytes: number, rules: BodyLimitRule[] = []): MiddlewareHandler<AppEnv> {
  const tooLarge = (max: number) => () => {
    throw new AppError('payload_too_large', `The request body exceeds ${max} bytes`);
  };
  const defaultLimit = bodyLimit({ maxSize: defaultMaxBytes, onError: tooLarge(defaultMaxBytes) });
  const ruleLimits = rules.map((rule) => ({
    rule,
    limit: bodyLimit({ maxSize: rule.maxBytes, onError: tooLarge(rule.maxBytes) }),
  }));
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || !hasBody(c.req.raw.headers)) return next();
    const type = c.req.header('Content-Type') ?? '';
    if (!JSON_TYPE.test(type)) {
      throw new AppError('unsupported_media_type', `Expected Content-Type: application/json, got ${type || 'none'}`);
    }
    const match = ruleLimits.find(({ rule }) => rule.method === method && rule.pattern.test(c.req.path));
    return (match?.limit ?? defaultLimit)(c, next);
  };
}
