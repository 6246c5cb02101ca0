// One-time values of the LTI flows (launch URLs, message hints, deep-linking `data`, registration
// tokens) and the values tools sent us that must never come twice (their nonces and jtis): random
// where we make them, stored as a SHA-256 with what the flow needs back, taken once, dead after
// their time. Expired rows are swept as new ones are stored.
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ltiHandles, type LtiHandleKind } from '../../db/schema';
import { randomToken, sha256 } from '../auth/secrets';
import { isUniqueViolation } from '../lib/sql';
import type { Clock } from '../lib/clock';

export interface HandleOwner {
  tenantId: string;
  toolId?: string | null;
  userId?: string | null;
}

function sweep(db: Db, now: Date): void {
  db.delete(ltiHandles).where(lt(ltiHandles.expiresAt, new Date(now.getTime() - 3600_000).toISOString())).run();
}

/** Stores a new random handle and answers it. */
export function newHandle(db: Db, clock: Clock, kind: LtiHandleKind, owner: HandleOwner, data: object, ttlMs: number): { value: string; expiresAt: string } {
  const value = randomToken(32);
  const now = clock.now();
  sweep(db, now);
  const expiresAt = new Date(now.getTime() + ttlMs).toISOString();
  db.insert(ltiHandles)
    .values({ hash: sha256(value), kind, tenantId: owner.tenantId, toolId: owner.toolId ?? null, userId: owner.userId ?? null, data: JSON.stringify(data), expiresAt, createdAt: now.toISOString() })
    .run();
  return { value, expiresAt };
}

export type Taken<T> = { status: 'ok'; data: T; toolId: string | null; tenantId: string; userId: string | null } | { status: 'unknown' | 'used' | 'expired' };

/** Takes a handle (marks it used) when it is live; says why not otherwise. `toolId` narrows it to one tool's. */
export function takeHandle<T>(db: Db, clock: Clock, kind: LtiHandleKind, value: string, toolId?: string): Taken<T> {
  const now = clock.now().toISOString();
  const where = and(eq(ltiHandles.kind, kind), eq(ltiHandles.hash, sha256(value)), toolId ? eq(ltiHandles.toolId, toolId) : undefined);
  const taken = db.update(ltiHandles).set({ usedAt: now }).where(and(where, isNull(ltiHandles.usedAt), gt(ltiHandles.expiresAt, now))).returning().get();
  if (taken) return { status: 'ok', data: JSON.parse(taken.data) as T, toolId: taken.toolId, tenantId: taken.tenantId, userId: taken.userId };
  const row = db.select().from(ltiHandles).where(where).get();
  return { status: !row ? 'unknown' : row.usedAt ? 'used' : 'expired' };
}

/** Whether a handle is live now, without taking it. */
export function peekHandle(db: Db, clock: Clock, kind: LtiHandleKind, value: string): { tenantId: string } | undefined {
  const now = clock.now().toISOString();
  return db
    .select({ tenantId: ltiHandles.tenantId })
    .from(ltiHandles)
    .where(and(eq(ltiHandles.kind, kind), eq(ltiHandles.hash, sha256(value)), isNull(ltiHandles.usedAt), gt(ltiHandles.expiresAt, now)))
    .get();
}

/**
 * Records a value a tool sent that must be unique (a nonce, a jti) until `expiresAt`: false when
 * it was seen before (a replay).
 */
export function recordOnce(db: Db, clock: Clock, kind: 'tool_nonce' | 'jti', owner: HandleOwner & { toolId: string }, value: string, expiresAt: Date): boolean {
  const now = clock.now();
  sweep(db, now);
  try {
    db.insert(ltiHandles)
      .values({ hash: sha256(`${owner.toolId}:${value}`), kind, tenantId: owner.tenantId, toolId: owner.toolId, data: '{}', expiresAt: expiresAt.toISOString(), usedAt: now.toISOString(), createdAt: now.toISOString() })
      .run();
    return true;
  } catch (err) {
    if (isUniqueViolation(err) || (err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
    throw err;
  }
}
