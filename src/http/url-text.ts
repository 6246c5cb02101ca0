// Text in URLs follows the rule of text in bodies (http/text.ts), whatever a route's schema says
// of a parameter: percent-encoding that does not decode as UTF-8 is a 400 (Hono would keep `%FF`
// as those three characters), and a query value or path segment holding a control character is a
// 422 naming the parameter, as a body field would be.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';
import { badRequest, unprocessable, type FieldError } from './errors';
import { textRefusal } from './text';

class NotUtf8 extends Error {}

function decode(raw: string, plusIsSpace: boolean): string {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    // decodeURIComponent refuses what is not UTF-8, an encoded surrogate included.
    throw new NotUtf8();
  }
}

/** Before the routes (after authentication, as for bodies). */
export function urlText(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const url = c.req.url;
    // A URL is ASCII with every other character percent-encoded: without a `%` there is nothing to check.
    if (!url.includes('%')) return next();
    const { pathname, search } = new URL(url);
    const errors: FieldError[] = [];
    let where = 'path';
    try {
      for (const segment of pathname.split('/')) {
        const problem = textRefusal(decode(segment, false));
        if (problem && errors.length === 0) errors.push({ path: '(path)', message: problem });
      }
      for (const pair of search.slice(1).split('&')) {
        if (pair === '') continue;
        const equals = pair.indexOf('=');
        const rawName = equals < 0 ? pair : pair.slice(0, equals);
        where = `query parameter ${rawName}`;
        const name = decode(rawName, true);
        const nameProblem = textRefusal(name);
        const problem = nameProblem ?? (equals < 0 ? null : textRefusal(decode(pair.slice(equals + 1), true)));
        if (problem) errors.push({ path: nameProblem ? '(query)' : name, message: problem });
      }
    } catch (err) {
      if (err instanceof NotUtf8) throw badRequest(`The request URL is not valid UTF-8 (percent-encoded bytes in the ${where})`);
      throw err;
    }
    if (errors.length > 0) throw unprocessable('The request contains characters that cannot be stored', errors);
    return next();
  };
}
