// Hand-made access tokens for the security tests: signed with the server's own key (to prove each
// claim is checked on its own), with a foreign key, or not signed at all.
import { isNull } from 'drizzle-orm';
import { SignJWT, generateKeyPair, importJWK, type JWK, type JWTPayload } from 'jose';
import { signingKeys } from '../../db/schema';
import { ACCESS_TOKEN_AUDIENCE } from '../../src/auth/tokens';
import type { TestApp } from './app';

export interface TokenParts {
  header?: Record<string, unknown>;
  claims?: JWTPayload & Record<string, unknown>;
}

/** Claims exactly like the server's own tokens for this user, valid for 15 minutes from the test clock. */
export function standardClaims(t: TestApp, user: { id: string; tenantId: string; role: string }): JWTPayload & Record<string, unknown> {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  return {
    iss: t.config.publicUrl,
    aud: ACCESS_TOKEN_AUDIENCE,
    sub: user.id,
    tid: user.tenantId,
    role: user.role,
    iat: now,
    exp: now + 900,
    jti: crypto.randomUUID(),
  };
}

function activeKey(t: TestApp) {
  const row = t.db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).get();
  if (!row) throw new Error('no signing key');
  return row;
}

/** Signs arbitrary claims with the server's real private key. */
export async function signWithServerKey(t: TestApp, parts: Required<Pick<TokenParts, 'claims'>> & TokenParts): Promise<string> {
  const row = activeKey(t);
  const key = await importJWK(JSON.parse(row.privateJwk) as JWK, 'ES256');
  return new SignJWT(parts.claims)
    .setProtectedHeader({ alg: 'ES256', kid: row.kid, typ: 'at+jwt', ...(parts.header ?? {}) } as { alg: string })
    .sign(key);
}

/** Same claims and kid as the server would use, but a key the server never made. */
export async function signWithForeignKey(t: TestApp, claims: JWTPayload): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: activeKey(t).kid, typ: 'at+jwt' }).sign(privateKey);
}

/** An unsecured JWT (`alg: none`): header and payload, empty signature. */
export function unsignedToken(claims: JWTPayload, t: TestApp): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'at+jwt', kid: activeKey(t).kid })}.${enc(claims)}.`;
}

/** HS256 signed with the server's public key as the HMAC secret: the classic algorithm-confusion attack. */
export async function signWithPublicKeyAsHmacSecret(t: TestApp, claims: JWTPayload): Promise<string> {
  const row = activeKey(t);
  const secret = new TextEncoder().encode(row.publicJwk);
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: row.kid, typ: 'at+jwt' }).sign(secret);
}

/** Replaces the payload of a signed token, keeping its header and signature. */
export function withTamperedPayload(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
  change(claims);
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}
