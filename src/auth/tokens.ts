// Access tokens: ES256 JWTs signed by a key generated on first start and kept in the database.
// Verification pins the algorithm, issuer and audience.
import { eq, isNull } from 'drizzle-orm';
import {
  SignJWT,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type CryptoKey,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import type { Db } from '../../db/client';
import { signingKeys } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { v7 } from 'uuid';
import { newId } from '../lib/ids';

export const ACCESS_TOKEN_ALG = 'ES256';
export const ACCESS_TOKEN_AUDIENCE = 'lms-api';

export interface AccessClaims {
  sub: string;
  tid: string;
  role: string;
  exp: number;
  /** Issued at, in seconds. */
  iat: number;
  /** A UUID v7 whose timestamp is the issue time in milliseconds (see issuedAtMs). */
  jti: string;
  /** Set when the token was obtained with an API key: it lives only as long as that key. */
  akid?: string;
}

export class TokenSigner {
  private constructor(
    private readonly kid: string,
    private readonly privateKey: CryptoKey,
    private readonly publicJwks: JWK[],
    private readonly keySet: JWTVerifyGetKey,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {}

  /** Loads the active signing key, generating and storing one on first start. */
  static async load(db: Db, opts: { issuer: string; ttlSeconds: number; clock: Clock }): Promise<TokenSigner> {
    let active = db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).get();
    if (!active) {
      const { privateKey, publicKey } = await generateKeyPair(ACCESS_TOKEN_ALG, { extractable: true });
      const kid = newId();
      const row = {
        kid,
        alg: ACCESS_TOKEN_ALG,
        privateJwk: JSON.stringify(await exportJWK(privateKey)),
        publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: ACCESS_TOKEN_ALG, use: 'sig' }),
        createdAt: opts.clock.now().toISOString(),
      };
      db.insert(signingKeys).values(row).onConflictDoNothing().run();
      active = db.select().from(signingKeys).where(eq(signingKeys.kid, kid)).get() ?? { ...row, retiredAt: null };
    }
    const publicJwks = db
      .select({ publicJwk: signingKeys.publicJwk })
      .from(signingKeys)
      .all()
      .map((r) => JSON.parse(r.publicJwk) as JWK);
    const privateKey = (await importJWK(JSON.parse(active.privateJwk) as JWK, ACCESS_TOKEN_ALG)) as CryptoKey;
    return new TokenSigner(
      active.kid,
      privateKey,
      publicJwks,
      createLocalJWKSet({ keys: publicJwks }),
      opts.issuer,
      opts.ttlSeconds,
      opts.clock,
    );
  }

  get accessTokenTtlSeconds(): number {
    return this.ttlSeconds;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.publicJwks };
  }

  async sign(user: { id: string; tenantId: string; role: string }, opts: { apiKeyId?: string } = {}): Promise<string> {
    const nowMs = this.clock.now().getTime();
    const now = Math.floor(nowMs / 1000);
    return new SignJWT({ tid: user.tenantId, role: user.role, ...(opts.apiKeyId ? { akid: opts.apiKeyId } : {}) })
      .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: this.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setSubject(user.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .setJti(v7({ msecs: nowMs }))
      .sign(this.privateKey);
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; null when any fails. */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        algorithms: [ACCESS_TOKEN_ALG],
        issuer: this.issuer,
        audience: ACCESS_TOKEN_AUDIENCE,
        typ: 'at+jwt',
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      if (typeof payload.tid !== 'string' || typeof payload.role !== 'string') return null;
      if (payload.akid !== undefined && typeof payload.akid !== 'string') return null;
      return {
        sub: payload.sub!,
        tid: payload.tid,
        role: payload.role,
        exp: payload.exp!,
        iat: payload.iat!,
        jti: payload.jti!,
        ...(payload.akid ? { akid: payload.akid } : {}),
      };
    } catch {
      return null;
    }
  }
}

/**
 * When a token was issued, to the millisecond: a password change is recorded to the millisecond,
 * and a token issued earlier in the same second must end with it while one issued after it goes
 * on. `iat` has whole seconds only; the jti, a UUID v7, carries the milliseconds in its first 48
 * bits (no extra claim: the token stays the size clients expect). A jti whose time is not within
 * `iat`'s second counts from the start of that second.
 */
export function issuedAtMs(claims: Pick<AccessClaims, 'iat' | 'jti'>): number {
  const hex = claims.jti.slice(0, 8) + claims.jti.slice(9, 13);
  const ms = /^[0-9a-f]{12}$/i.test(hex) && claims.jti[14] === '7' ? parseInt(hex, 16) : NaN;
  return Math.floor(ms / 1000) === claims.iat ? ms : claims.iat * 1000;
}
