// Users of a tenant: create, list, search, read, update, soft delete. Every query is tenant-scoped.
import { and, asc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { courses, enrollments, refreshTokens, users } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { conflict, notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { countAll, ilike, isUniqueViolation, likeContains, sqlLimit } from '../lib/sql';
import type { TenantRole } from '../auth/authenticator';

export type UserRow = typeof users.$inferSelect;

export interface NewUser {
  tenantId: string;
  email: string;
  name: string;
  password?: string;
  role?: TenantRole;
  isPlatformAdmin?: boolean;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

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
  const { limit, offset } = sqlPageBounds(page);
  const rows = db.select().from(users).where(where).orderBy(asc(users.name), asc(users.id)).limit(limit).offset(offset).all();
  const total = db.select({ n: countAll }).from(users).where(where).get()?.n ?? 0;
  return { rows, total };
}

/** True when both users hold an enrollment (any role, not dropped) in a common course that is not deleted. */
export function shareACourse(db: Db, tenantId: string, a: string, b: string): boolean {
  const row = db
    .select({ one: sql<number>`1` })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(
      and(
        eq(enrollments.tenantId, tenantId),
        eq(enrollments.userId, a),
        sql`${enrollments.status} <> 'dropped'`,
        isNull(courses.deletedAt),
        sql`exists (select 1 from ${enrollments} e2 where e2.course_id = ${enrollments.courseId} and e2.user_id = ${b} and e2.status <> 'dropped')`,
      ),
    )
    .limit(sqlLimit(1))
    .get();
  return row !== undefined;
}

/**
 * True when the user is an active instructor of at least one course (a deleted course counts for
 * nothing). A TA is not an instructor here (see Roles in docs/api-conventions.md).
 */
export function teachesAnyCourse(db: Db, tenantId: string, userId: string): boolean {
  const row = db
    .select({ one: sql<number>`1` })
    .from(enrollments)
    .innerJoin(courses, eq(courses.id, enrollments.courseId))
    .where(
      and(
        eq(enrollments.tenantId, tenantId),
        eq(enrollments.userId, userId),
        eq(enrollments.status, 'active'),
        eq(enrollments.role, 'instructor'),
        isNull(courses.deletedAt),
      ),
    )
    .limit(sqlLimit(1))
    .get();
  return row !== undefined;
}

export interface UserChanges {
  name?: string;
  email?: string;
  role?: TenantRole;
  password?: string;
  currentPassword?: string;
}

/**
 * Applies changes the policy already allowed. A user changing their own password must prove the
 * current one; an admin resetting someone else's need not. A password change ends every session:
 * refresh tokens are revoked, and access tokens issued before it are refused (API keys go on).
 */
export async function updateUser(
  deps: UserServiceDeps,
  target: UserRow,
  changes: UserChanges,
  opts: { requireCurrentPassword: boolean; attempts?: { check(): void; failed(): void; succeeded(): void } },
): Promise<UserRow> {
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
  try {
    return inTransaction(deps.db, (tx) => {
      const updated = tx
        .update(users)
        .set({
          ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
          ...(changes.email !== undefined ? { email: normaliseEmail(changes.email) } : {}),
          ...(changes.role !== undefined ? { role: changes.role } : {}),
          // A new password signs the user out everywhere: refresh tokens now, access tokens too.
          ...(passwordHash !== undefined ? { passwordHash, tokensValidAfter: now } : {}),
          updatedAt: now,
        })
        .where(and(eq(users.id, target.id), eq(users.tenantId, target.tenantId)))
        .returning()
        .get();
      if (passwordHash !== undefined) revokeRefreshTokensOf(tx, target.id, now);
      return updated!;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('Another user of this tenant already has that email');
    throw err;
  }
}

/** Soft delete: the row and everything the user made stay; signing in and every credential stop. */
export function softDeleteUser(db: Db, clock: Clock, target: UserRow): void {
  const now = clock.now().toISOString();
  inTransaction(db, (tx) => {
    tx.update(users).set({ deletedAt: now, updatedAt: now }).where(eq(users.id, target.id)).run();
    revokeRefreshTokensOf(tx, target.id, now);
  });
}

export function revokeRefreshTokensOf(tx: Db, userId: string, now: string): void {
  tx.update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)))
    .run();
}
