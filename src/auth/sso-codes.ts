// The one-time codes that end a single sign-on: the SSO flow (src/sso) issues one for the user it
// resolved and hands it to the front end in a redirect; POST /api/auth/token (`sso_code`) trades it
// for tokens. Random, stored as a SHA-256, good for 60 seconds and once.
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoHandles, users } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { randomToken, sha256 } from './secrets';

export const SSO_CODE_TTL_MS = 60_000;

export function issueSsoCode(db: Db, clock: Clock, grant: { userId: string; tenantId: string; connectionId: string }): string {
  const code = randomToken(32);
  const now = clock.now();
  db.insert(ssoHandles)
    .values({
      hash: sha256(code),
      kind: 'code',
      tenantId: grant.tenantId,
      connectionId: grant.connectionId,
      data: JSON.stringify({ user_id: grant.userId }),
      expiresAt: new Date(now.getTime() + SSO_CODE_TTL_MS).toISOString(),
      createdAt: now.toISOString(),
    })
    .run();
  return code;
}

/** The live user a code was issued for, marking it used; null when unknown, used, expired, or the user is gone. Run in a transaction. */
export function redeemSsoCode(tx: Db, clock: Clock, code: string): typeof users.$inferSelect | null {
  const now = clock.now().toISOString();
  const handle = tx
    .update(ssoHandles)
    .set({ usedAt: now })
    .where(and(eq(ssoHandles.hash, sha256(code)), eq(ssoHandles.kind, 'code'), isNull(ssoHandles.usedAt), gt(ssoHandles.expiresAt, now)))
    .returning()
    .get();
  if (!handle) return null;
  const { user_id } = JSON.parse(handle.data) as { user_id: string };
  return tx.select().from(users).where(and(eq(users.id, user_id), eq(users.tenantId, handle.tenantId), isNull(users.deletedAt))).get() ?? null;
}
