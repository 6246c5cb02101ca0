// One-time account links (db/schema/account-tokens.ts): an invitation (7 days) and a password
// reset (1 hour). The token is 32 random bytes, given out once in the link and stored only as its
// SHA-256; it works once; a new link of a kind ends the user's earlier ones of that kind; a
// password change or a deletion ends them all.
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { accountTokens, type AccountTokenKind } from '../../db/schema';
import type { Config } from '../config';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { randomToken, sha256 } from './secrets';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
export const PASSWORD_RESET_TTL_MS = 3600 * 1000;

const ttlOf: Record<AccountTokenKind, number> = { invitation: INVITATION_TTL_MS, password_reset: PASSWORD_RESET_TTL_MS };

export type AccountTokenRow = typeof accountTokens.$inferSelect;

/** A new link of `kind` for the user; their earlier live ones of that kind stop working. Run in a transaction. */
export function issueAccountToken(
  tx: Db,
  clock: Clock,
  grant: { kind: AccountTokenKind; userId: string; tenantId: string; createdBy?: string | null },
): { token: string; expiresAt: Date } {
  const now = clock.now();
  const nowIso = now.toISOString();
  tx.update(accountTokens)
    .set({ usedAt: nowIso })
    .where(and(eq(accountTokens.userId, grant.userId), eq(accountTokens.kind, grant.kind), isNull(accountTokens.usedAt)))
    .run();
  const token = randomToken(32);
  const expiresAt = new Date(now.getTime() + ttlOf[grant.kind]);
  tx.insert(accountTokens)
    .values({
      id: newId(),
      tenantId: grant.tenantId,
      userId: grant.userId,
      kind: grant.kind,
      tokenHash: sha256(token),
      createdBy: grant.createdBy ?? null,
      createdAt: nowIso,
      expiresAt: expiresAt.toISOString(),
    })
    .run();
  return { token, expiresAt };
}

const liveToken = (kind: AccountTokenKind, token: string, now: string) =>
  and(eq(accountTokens.tokenHash, sha256(token)), eq(accountTokens.kind, kind), isNull(accountTokens.usedAt), gt(accountTokens.expiresAt, now));

/** The live link a token opens (unused, unexpired), without using it; undefined otherwise. */
export function findAccountToken(db: Db, clock: Clock, kind: AccountTokenKind, token: string): AccountTokenRow | undefined {
  return db.select().from(accountTokens).where(liveToken(kind, token, clock.now().toISOString())).get();
}

/** Uses the link (once: a conditional update); undefined when it was used, ended or expired meanwhile. Run in a transaction. */
export function redeemAccountToken(tx: Db, clock: Clock, kind: AccountTokenKind, token: string): AccountTokenRow | undefined {
  const now = clock.now().toISOString();
  return tx.update(accountTokens).set({ usedAt: now }).where(liveToken(kind, token, now)).returning().get();
}

/** Ends every live link of a user (a password set or changed, a deletion). */
export function revokeAccountTokensOf(tx: Db, userId: string, now: string): void {
  tx.update(accountTokens)
    .set({ usedAt: now })
    .where(and(eq(accountTokens.userId, userId), isNull(accountTokens.usedAt)))
    .run();
}

/**
 * The address a link opens: INVITATION_URL or PASSWORD_RESET_URL when set (the front end's page),
 * otherwise PUBLIC_URL + /accept-invitation or /reset-password; with `?token=` added. Never built
 * from a request's Host header, which a caller chooses.
 */
export function accountLink(config: Pick<Config, 'publicUrl' | 'invitationUrl' | 'passwordResetUrl'>, kind: AccountTokenKind, token: string): string {
  const base = kind === 'invitation' ? (config.invitationUrl ?? `${config.publicUrl.replace(/\/+$/, '')}/accept-invitation`) : (config.passwordResetUrl ?? `${config.publicUrl.replace(/\/+$/, '')}/reset-password`);
  const url = new URL(base);
  url.searchParams.set('token', token);
  return url.toString();
}
