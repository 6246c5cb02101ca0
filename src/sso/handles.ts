// One-time handles of the sign-in flows (OIDC `state`, SAML request ids): random, stored as a
// SHA-256 with what the flow needs back, taken once, dead after their time.
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoHandles, type SsoHandleKind } from '../../db/schema';
import { sha256 } from '../auth/secrets';
import type { Clock } from '../lib/clock';

export const FLOW_HANDLE_TTL_MS = 5 * 60_000;

export function storeHandle(db: Db, clock: Clock, kind: SsoHandleKind, value: string, owner: { tenantId: string; connectionId: string }, data: object): void {
  const now = clock.now();
  // Expired handles of any flow are swept as new ones are made: the table stays the size of the flows in progress.
  db.delete(ssoHandles).where(lt(ssoHandles.expiresAt, new Date(now.getTime() - 24 * 3600_000).toISOString())).run();
  db.insert(ssoHandles)
    .values({
      hash: sha256(value),
      kind,
      tenantId: owner.tenantId,
      connectionId: owner.connectionId,
      data: JSON.stringify(data),
      expiresAt: new Date(now.getTime() + FLOW_HANDLE_TTL_MS).toISOString(),
      createdAt: now.toISOString(),
    })
    .run();
}

export type HandleLookup<T> = { status: 'ok'; data: T } | { status: 'unknown' | 'used' | 'expired' };

/** Takes a handle of this connection: marks it used when it is live, and says why not otherwise. */
export function takeHandle<T>(db: Db, clock: Clock, kind: SsoHandleKind, value: string, connectionId: string): HandleLookup<T> {
  const now = clock.now().toISOString();
  const where = and(eq(ssoHandles.hash, sha256(value)), eq(ssoHandles.kind, kind), eq(ssoHandles.connectionId, connectionId));
  const taken = db.update(ssoHandles).set({ usedAt: now }).where(and(where, isNull(ssoHandles.usedAt), gt(ssoHandles.expiresAt, now))).returning().get();
  if (taken) return { status: 'ok', data: JSON.parse(taken.data) as T };
  const row = db.select().from(ssoHandles).where(where).get();
  return { status: !row ? 'unknown' : row.usedAt ? 'used' : 'expired' };
}

/**
 * Records that an assertion (by its ID, per connection) was used, kept until it could no longer be
 * presented; false when it was already recorded: a replay, IdP-initiated ones included.
 */
export function recordAssertion(db: Db, clock: Clock, owner: { tenantId: string; connectionId: string }, assertionId: string, validUntil: Date): boolean {
  const now = clock.now();
  const inserted = db
    .insert(ssoHandles)
    .values({
      hash: sha256(`${owner.connectionId}\n${assertionId}`),
      kind: 'saml_assertion',
      tenantId: owner.tenantId,
      connectionId: owner.connectionId,
      data: '{}',
      expiresAt: new Date(Math.max(validUntil.getTime(), now.getTime() + FLOW_HANDLE_TTL_MS)).toISOString(),
      usedAt: now.toISOString(),
      createdAt: now.toISOString(),
    })
    .onConflictDoNothing()
    .returning({ hash: ssoHandles.hash })
    .get();
  return inserted !== undefined;
}
