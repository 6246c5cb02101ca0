// The platform's RS256 signing keys, in the database so that every process signs with the same
// one. The newest unretired key signs; past KEY_LIFETIME_MS the next signature makes a new key
// (a new `kid`) and retires the old one, which stays in the key set until whatever it signed has
// expired (our messages live 5 minutes; a margin covers clock skew). Private keys are sealed with
// the server's secret box.
import { desc, eq, gt, isNull, or } from 'drizzle-orm';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';

type KeyLike = Awaited<ReturnType<typeof importJWK>>;
import { inTransaction, type Db } from '../../db/client';
import { ltiPlatformKeys } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import type { SecretBox } from '../sso/secret-box';

export const KEY_LIFETIME_MS = 30 * 24 * 3600_000;
/** The longest a message we sign is valid, plus skew: how long a retired key stays listed. */
export const RETIRED_KEY_LISTED_MS = 3600_000;

export interface KeyDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
}

type KeyRow = typeof ltiPlatformKeys.$inferSelect;

const privateKeys = new Map<string, KeyLike>();

async function makeKey(deps: KeyDeps): Promise<KeyRow> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const kid = newId();
  const pub = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const priv = { ...(await exportJWK(privateKey)), kid, alg: 'RS256' };
  const now = deps.clock.now();
  return inTransaction(deps.db, (tx) => {
    // Another process may have rotated meanwhile: the newest live key then stays the signer.
    const current = tx.select().from(ltiPlatformKeys).where(isNull(ltiPlatformKeys.retiredAt)).orderBy(desc(ltiPlatformKeys.createdAt)).get();
    if (current && now.getTime() - Date.parse(current.createdAt) < KEY_LIFETIME_MS) return current;
    if (current) {
      tx.update(ltiPlatformKeys)
        .set({ retiredAt: now.toISOString(), expiresAt: new Date(now.getTime() + RETIRED_KEY_LISTED_MS).toISOString() })
        .where(eq(ltiPlatformKeys.kid, current.kid))
        .run();
    }
    return tx
      .insert(ltiPlatformKeys)
      .values({ kid, publicJwk: JSON.stringify(pub), privateJwkSealed: deps.secretBox.seal(JSON.stringify(priv)), createdAt: now.toISOString() })
      .returning()
      .get();
  });
}

/** The key that signs now: the newest live one, or a new one when it is due for rotation. */
export async function signingKey(deps: KeyDeps): Promise<{ kid: string; key: KeyLike }> {
  let row = deps.db.select().from(ltiPlatformKeys).where(isNull(ltiPlatformKeys.retiredAt)).orderBy(desc(ltiPlatformKeys.createdAt)).get();
  if (!row || deps.clock.now().getTime() - Date.parse(row.createdAt) >= KEY_LIFETIME_MS) row = await makeKey(deps);
  let key = privateKeys.get(row.kid);
  if (!key) {
    key = (await importJWK(JSON.parse(deps.secretBox.open(row.privateJwkSealed)) as JWK, 'RS256')) as KeyLike;
    privateKeys.set(row.kid, key);
  }
  return { kid: row.kid, key };
}

/** Retires the signing key now (a new one signs from the next message on). */
export async function rotateKey(deps: KeyDeps): Promise<string> {
  const now = deps.clock.now();
  deps.db
    .update(ltiPlatformKeys)
    .set({ retiredAt: now.toISOString(), expiresAt: new Date(now.getTime() + RETIRED_KEY_LISTED_MS).toISOString() })
    .where(isNull(ltiPlatformKeys.retiredAt))
    .run();
  return (await signingKey(deps)).kid;
}

/** The public key set: the signing key and the retired keys still listed. */
export async function publicKeySet(deps: KeyDeps): Promise<{ keys: JWK[] }> {
  await signingKey(deps);
  const now = deps.clock.now().toISOString();
  const rows = deps.db
    .select()
    .from(ltiPlatformKeys)
    .where(or(isNull(ltiPlatformKeys.retiredAt), gt(ltiPlatformKeys.expiresAt, now)))
    .orderBy(desc(ltiPlatformKeys.createdAt))
    .all();
  return { keys: rows.map((r) => JSON.parse(r.publicJwk) as JWK) };
}

/** Signs a message of ours (RS256, with the signing key's kid). */
export async function signMessage(deps: KeyDeps, payload: JWTPayload, ttlSeconds: number): Promise<string> {
  const { kid, key } = await signingKey(deps);
  const iat = Math.floor(deps.clock.now().getTime() / 1000);
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).setIssuedAt(iat).setExpirationTime(iat + ttlSeconds).sign(key);
}
