// Service tokens (POST /api/lti/token): OAuth 2.0 client credentials with a private_key_jwt
// client assertion (RFC 7523, as the 1EdTech Security Framework uses it): `iss` = `sub` = the
// tool's client_id, `aud` = our token endpoint, an `exp` at most an hour away, a `jti` never seen
// (a replay is `invalid_grant`). Only scopes registered for the tool are granted. The token is
// opaque, stored as its SHA-256, and lasts one hour.
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Db } from '../../db/client';
import { ltiAccessTokens, ltiTools } from '../../db/schema';
import { randomToken, sha256 } from '../auth/secrets';
import { preparedFor } from '../lib/prepared';
import type { Deps } from '../context';
import { recordOnce } from './handles';
import { ToolJwtRefused, verifyToolJwt } from './tool-keys';
import { scopesOf, toolByClientId, type ToolRow } from './tools';
import { platformUrls } from './urls';

export const ACCESS_TOKEN_TTL_S = 3600;
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'invalid_scope' | 'unsupported_grant_type',
    readonly description: string,
  ) {
    super(description);
  }
  get status(): 400 | 401 {
    return this.error === 'invalid_client' ? 401 : 400;
  }
}

export interface TokenRequest {
  grant_type?: string;
  client_assertion_type?: string;
  client_assertion?: string;
  scope?: string;
}

export async function issueToken(deps: Deps, req: TokenRequest): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number; scope: string }> {
  const { db, clock } = deps;
  if (req.grant_type !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'grant_type must be client_credentials');
  if (req.client_assertion_type !== ASSERTION_TYPE || !req.client_assertion) throw new OAuthError('invalid_client', `a client_assertion of type ${ASSERTION_TYPE} is required`);
  let iss: unknown;
  try {
    iss = decodeJwt(req.client_assertion).iss;
  } catch {
    throw new OAuthError('invalid_client', 'client_assertion is not a JWT');
  }
  const tool = typeof iss === 'string' ? toolByClientId(db, iss) : undefined;
  if (!tool || !tool.enabled) throw new OAuthError('invalid_client', 'unknown or disabled client');
  let payload;
  try {
    payload = await verifyToolJwt(deps, tool, req.client_assertion, {
      issuer: tool.clientId,
      subject: tool.clientId,
      audience: platformUrls(deps.config.publicUrl).token,
      requiredClaims: ['exp', 'jti'],
    });
  } catch (err) {
    if (err instanceof ToolJwtRefused) throw new OAuthError('invalid_client', err.message);
    throw err;
  }
  const now = clock.now();
  const exp = new Date((payload.exp as number) * 1000);
  if (exp.getTime() - now.getTime() > ACCESS_TOKEN_TTL_S * 1000) throw new OAuthError('invalid_grant', 'the assertion expires too late (at most an hour)');
  if (typeof payload.jti !== 'string' || payload.jti.length > 512) throw new OAuthError('invalid_grant', 'jti must be a string');
  const requested = (req.scope ?? '').split(/\s+/).filter(Boolean);
  if (requested.length === 0) throw new OAuthError('invalid_scope', 'scope is required');
  const registered = scopesOf(tool);
  const refused = requested.filter((s) => !registered.includes(s));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `not granted to this tool: ${refused.join(' ')}`);
  if (!recordOnce(db, clock, 'jti', { tenantId: tool.tenantId, toolId: tool.id }, payload.jti, exp)) throw new OAuthError('invalid_grant', 'jti was used before');
  const token = randomToken(32);
  const scope = [...new Set(requested)].join(' ');
  // Expired tokens are swept as new ones are issued.
  db.delete(ltiAccessTokens).where(lt(ltiAccessTokens.expiresAt, now.toISOString())).run();
  db.insert(ltiAccessTokens)
    .values({ hash: sha256(token), tenantId: tool.tenantId, toolId: tool.id, scope, expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_S * 1000).toISOString(), createdAt: now.toISOString() })
    .run();
  return { access_token: token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, scope };
}

/** The tool and scopes of a live service token, or undefined. */
export function tokenHolder(db: Db, now: Date, token: string): { tool: ToolRow; scopes: string[] } | undefined {
  // Every service call asks this: prepared once per database (bench/lti.ts, RESULTS.md).
  const query = preparedFor(db, 'lti:token-holder', () =>
    db
      .select({ tool: ltiTools, scope: ltiAccessTokens.scope })
      .from(ltiAccessTokens)
      .innerJoin(ltiTools, eq(ltiTools.id, ltiAccessTokens.toolId))
      .where(and(eq(ltiAccessTokens.hash, sql.placeholder('hash')), gt(ltiAccessTokens.expiresAt, sql.placeholder('now'))))
      .prepare(),
  );
  const row = query.get({ hash: sha256(token), now: now.toISOString() });
  if (!row || !row.tool.enabled) return undefined;
  return { tool: row.tool, scopes: row.scope.split(' ') };
}
