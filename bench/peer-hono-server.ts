// Bench helper, not a benchmark: the minimal peer of the foundation benchmark, in its own process
// on 127.0.0.1, port 0. A plain Hono + @hono/node-server app with the duties our server has on
// `GET /api/users/me` (bench/foundation.ts checks that both answer the same body and headers):
//   - an ES256 access token verified with jose (algorithm, issuer, audience, typ and required
//     claims pinned as src/auth/tokens.ts does), once: its claims then come from an LRU cache
//     until the token expires;
//   - the caller looked up in memory (our authenticator answers from its user cache as well; it
//     reads the database only after a write to users), deleted users and tokens issued before a
//     password change refused;
//   - Hono's stock requestId() and secureHeaders() middleware, set to the five headers ours sends
//     (`node` as third argument: the same headers written onto node's response, as ours does);
//   - one pino access-log line per request (same fields, ISO time, asynchronous stdout, which the
//     benchmark sends to a file as it does ours);
//   - the user as JSON, in the shape of src/users/present.ts.
// It reads the signing keys and the users from our server's SQLite file once, at start.
//   node --import tsx bench/peer-hono-server.ts <sqlite file> <issuer> [stock|node]
// Logs `listening` with its port (as our server does) and exits on SIGTERM.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { requestId, type RequestIdVariables } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import pino from 'pino';

const [file, issuer, headerMode = 'stock'] = process.argv.slice(2);
if (!file || !issuer || (headerMode !== 'stock' && headerMode !== 'node')) {
  process.stderr.write('usage: peer-hono-server.ts <sqlite file> <issuer> [stock|node]\n');
  process.exit(2);
}

interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: string;
  timezone: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  tokens_valid_after: string | null;
}
interface User {
  profile: Omit<UserRow, 'tokens_valid_after'>;
  tenantId: string;
  /** Tokens issued before this second are refused (a password change); null: none. */
  tokensValidAfterS: number | null;
}
interface Claims {
  sub: string;
  tid: string;
  expiresAtMs: number;
  issuedAtS: number;
}

const db = new Database(file, { readonly: true, fileMustExist: true });
const keySet = createLocalJWKSet({
  keys: (db.prepare('SELECT public_jwk FROM signing_keys').all() as { public_jwk: string }[]).map((r) => JSON.parse(r.public_jwk) as JWK),
});
const users = new Map<string, User>();
for (const row of db.prepare('SELECT * FROM users WHERE deleted_at IS NULL').all() as UserRow[]) {
  users.set(row.id, {
    profile: {
      id: row.id,
      tenant_id: row.tenant_id,
      email: row.email,
      name: row.name,
      role: row.role,
      timezone: row.timezone,
      created_at: row.created_at,
      updated_at: row.updated_at,
      deleted_at: row.deleted_at,
    },
    tenantId: row.tenant_id,
    tokensValidAfterS: row.tokens_valid_after ? Math.floor(Date.parse(row.tokens_valid_after) / 1000) : null,
  });
}
db.close();

/** A least-recently-used map: a hit moves the entry to the back, the front goes past the limit. */
class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: K): void {
    this.map.delete(key);
  }
}

const verified = new Lru<string, Claims>(50_000);

async function claimsOf(token: string): Promise<Claims | null> {
  let claims = verified.get(token);
  if (!claims) {
    try {
      const { payload } = await jwtVerify(token, keySet, {
        algorithms: ['ES256'],
        issuer,
        audience: 'lms-api',
        typ: 'at+jwt',
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      if (typeof payload.tid !== 'string') return null;
      claims = { sub: payload.sub!, tid: payload.tid, expiresAtMs: payload.exp! * 1000, issuedAtS: payload.iat! };
    } catch {
      return null;
    }
    verified.set(token, claims);
  }
  if (claims.expiresAtMs <= Date.now()) {
    verified.delete(token);
    return null;
  }
  return claims;
}

/** The security headers of src/http/request-context.ts. */
const SECURITY_HEADERS = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-site'],
] as const;

const log = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: false }));

const app = new Hono<{ Variables: RequestIdVariables & { userId?: string } }>();

if (headerMode === 'node') {
  // What src/http/request-context.ts does: the same headers, written onto node's response.
  const given = /^[\w\-=]{1,255}$/;
  app.use(async (c, next) => {
    const header = c.req.header('X-Request-Id');
    const id = header !== undefined && given.test(header) ? header : crypto.randomUUID();
    c.set('requestId', id);
    const outgoing = (c.env as { outgoing: ServerResponse }).outgoing;
    for (const [name, value] of SECURITY_HEADERS) outgoing.setHeader(name, value);
    outgoing.setHeader('X-Request-Id', id);
    await next();
  });
} else {
  app.use(requestId());
  app.use(
    secureHeaders({
      crossOriginResourcePolicy: 'same-site',
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }),
  );
}
app.use(async (c, next) => {
  const started = performance.now();
  await next();
  log.info(
    {
      requestId: c.get('requestId'),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      userId: c.get('userId'),
      // The connection's address, as ours logs it without a trusted proxy.
      ip: (c.env as { incoming: IncomingMessage }).incoming.socket.remoteAddress,
    },
    'request',
  );
});

const unauthorized = { type: 'about:blank', title: 'Unauthorized', status: 401 };

app.get('/api/users/me', async (c) => {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('Authorization') ?? '')?.[1];
  const claims = token ? await claimsOf(token) : null;
  const user = claims ? users.get(claims.sub) : undefined;
  if (!claims || !user || user.tenantId !== claims.tid || (user.tokensValidAfterS !== null && claims.issuedAtS < user.tokensValidAfterS)) {
    return c.json(unauthorized, 401);
  }
  c.set('userId', user.profile.id);
  return c.json(user.profile);
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => log.info({ port: info.port }, 'listening')) as Server;

process.on('SIGTERM', () => {
  server.close(() => log.flush(() => process.exit(0)));
  server.closeAllConnections();
});
