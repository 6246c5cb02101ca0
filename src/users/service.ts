// Users of a tenant: create, list, search, read, update, soft delete. Every query is tenant-scoped.
import { and, asc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { users } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { conflict, notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { ilike, isUniqueViolation, likeContains, selectPage } from '../lib/sql';
import type { AccessChanges } from '../auth/access';
import { revokeAccountTokensOf } from '../auth/account-tokens';
import { revokeRefreshTokensOf } from '../auth/sessions';

export { revokeRefreshTokensOf };
import type { TenantRole } from '../auth/authenticator';
import { normaliseEmail } from '../lib/email';
import { timeZoneAsGiven } from '../lib/timezone';

export type UserRow = typeof users.$inferSelect;

export interface NewUser {
  tenantId: string;
  email: string;
  name: string;
  password?: string;
  role?: TenantRole;
  isPlatformAdmin?: boolean;
}

export { normaliseEmail };

export interface UserServiceDeps {
  db: Db;
  clock: Clock;
  scryptCost: number;
}

/** Hashes the password first (async, off the event loop), then inserts in one statement. */
export async function createUser(deps: UserServiceDeps, input: NewUser, tx: Db = deps.db): Promise<UserRow> {
  const passwordHash = input.password ? await hashPassword(input.password, deps.scryptCost) : null;
  return insertUser(tx, deps.clock, input, passwordHash);
}

export function insertUser(tx: Db, clock: Clock, input: NewUser, passwordHash: string | null): UserRow {
  const now = clock.now().toISOString();
  try {
    return tx
      .insert(users)
      .values({
        id: newId(),
        tenantId: input.tenantId,
        email: normaliseEmail(input.email),
        name: input.name.trim(),
        passwordHash,
        role: input.role ?? 'member',
        isPlatformAdmin: input.isPlatformAdmin ?? false,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
      .get();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A user with email ${normaliseEmail(input.email)} already exists in this tenant`);
    throw err;
  }
}

function prepareGetUser(db: Db, includeDeleted: boolean) {
  return db
    .select()
    .from(users)
    .where(
      and(
        eq(users.id, sql.placeholder('id')),
        eq(users.tenantId, sql.placeholder('tenantId')),
        includeDeleted ? undefined : isNull(users.deletedAt),
      ),
    )
    .prepare();
}

/** getUser serves most checks of a user id: its two statements are prepared once per database. */
export function getUser(db: Db, tenantId: string, id: string, opts: { includeDeleted?: boolean } = {}): UserRow {
  const statements = preparedFor(db, 'users:get', () => ({ live: prepareGetUser(db, false), withDeleted: prepareGetUser(db, true) }));
  const row = (opts.includeDeleted ? statements.withDeleted : statements.live).get({ id, tenantId });
  if (!row) throw notFound('User');
  return row;
}

export interface UserListFilter {
  role?: TenantRole;
  includeDeleted?: boolean;
  q?: string;
}

export function listUsers(db: Db, tenantId: string, filter: UserListFilter, page: PageQuery) {
  const conditions: (SQL | undefined)[] = [eq(users.tenantId, tenantId)];
  if (filter.role) conditions.push(eq(users.role, filter.role));
  if (!filter.includeDeleted) conditions.push(isNull(users.deletedAt));
  if (filter.q) {
    const pattern = likeContains(filter.q.trim());
    conditions.push(or(ilike(users.name, pattern), ilike(users.email, pattern)));
  }
  const where = and(...conditions);
  return selectPage(db, users, where, [asc(users.name), asc(users.id)], pageBounds(page));
}

export interface UserChanges {
  name?: string;
  email?: string;
  role?: TenantRole;
  /** An IANA zone (checked here: 422 otherwise), or null for UTC. */
  timezone?: string | null;
  password?: string;
  currentPassword?: string;
}

/**
 * Applies changes the policy already allowed. A user changing their own password must prove the
 * current one; an admin resetting someone else's need not. A password change ends every session:
 * refresh tokens are revoked, and access tokens issued before it are refused (API keys go on).
 */
export async function updateUser(
  deps: UserServiceDeps & { access: AccessChanges },
  target: UserRow,
  changes: UserChanges,
  opts: { requireCurrentPassword: boolean; attempts?: { check(): void; failed(): void; succeeded(): void } },
): Promise<UserRow> {
  let timezone: string | null | undefined;
  if (changes.timezone !== undefined) {
    timezone = changes.timezone === null ? null : timeZoneAsGiven(changes.timezone);
    if (timezone === null && changes.timezone !== null) {
      throw unprocessable('timezone must be an IANA time zone such as Europe/Paris', [
        { path: 'timezone', message: `${JSON.stringify(changes.timezone)} is not a known time zone` },
      ]);
    }
  }
  let passwordHash: string | undefined;
  if (changes.password !== undefined) {
    if (opts.requireCurrentPassword) {
      opts.attempts?.check();
      const ok =
        changes.currentPassword !== undefined &&
        target.passwordHash !== null &&
        (await verifyPassword(changes.currentPassword, target.passwordHash));
      if (!ok) {
        opts.attempts?.failed();
        throw unprocessable('current_password is missing or wrong', [{ path: 'current_password', message: 'does not match' }]);
      }
      opts.attempts?.succeeded();
    }
    passwordHash = await hashPassword(changes.password, deps.scryptCost);
  }
  const now = deps.clock.now().toISOString();
  let updated: UserRow;
  try {
    updated = inTransaction(deps.db, (tx) => {
      const row = tx
        .update(users)
        .set({
          ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
          ...(changes.email !== undefined ? { email: normaliseEmail(changes.email) } : {}),
          ...(changes.role !== undefined ? { role: changes.role } : {}),
          ...(timezone !== undefined ? { timezone } : {}),
          // A new password signs the user out everywhere: refresh tokens now, access tokens too.
          ...(passwordHash !== undefined ? { passwordHash, tokensValidAfter: now } : {}),
          updatedAt: now,
        })
        .where(and(eq(users.id, target.id), eq(users.tenantId, target.tenantId)))
        .returning()
        .get();
      if (passwordHash !== undefined) {
        revokeRefreshTokensOf(tx, target.id, now);
        // An invitation or a reset link still out would set a password over this one.
        revokeAccountTokensOf(tx, target.id, now);
      }
      return row!;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('Another user of this tenant already has that email');
    throw err;
  }
  // Cached credentials re-read the user: a role, an email or a password may have changed.
  deps.access.narrowed();
  return updated;
}

/** Soft delete: the row and everything the user made stay; signing in and every credential stop. */
export function softDeleteUser(db: Db, clock: Clock, access: AccessChanges, target: UserRow): void {
  const now = clock.now().toISOString();
  inTransaction(db, (tx) => {
    tx.update(users).set({ deletedAt: now, updatedAt: now }).where(eq(users.id, target.id)).run();
    revokeRefreshTokensOf(tx, target.id, now);
    revokeAccountTokensOf(tx, target.id, now);
  });
  access.narrowed();
}
