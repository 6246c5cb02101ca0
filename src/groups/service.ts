// Groups of users within a tenant; documents are shared with groups as well as with users.
import type { AccessChanges } from '../auth/access';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { groupMembers, groups, users } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { conflict, notFound } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { preparedFor } from '../lib/prepared';
import { countAll, isUniqueViolation, selectPage } from '../lib/sql';
import { getUser } from '../users/service';

export type GroupRow = typeof groups.$inferSelect;

const nameTaken = (name: string) => conflict(`A group named ${name} already exists in this tenant`);

export function createGroup(db: Db, clock: Clock, tenantId: string, input: { name: string; description?: string | null }): GroupRow {
  const now = clock.now().toISOString();
  try {
    return db
      .insert(groups)
      .values({ id: newId(), tenantId, name: input.name.trim(), description: input.description ?? null, createdAt: now, updatedAt: now })
      .returning()
      .get();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(input.name);
    throw err;
  }
}

export function getGroup(db: Db, tenantId: string, id: string): GroupRow {
  const row = db.select().from(groups).where(and(eq(groups.id, id), eq(groups.tenantId, tenantId))).get();
  if (!row) throw notFound('Group');
  return row;
}

export function listGroups(db: Db, tenantId: string, page: PageQuery) {
  const { rows, total } = selectPage(db, groups, eq(groups.tenantId, tenantId), [asc(groups.name)], pageBounds(page));
  return { rows, total, memberCounts: memberCounts(db, rows.map((g) => g.id)) };
}

function memberCounts(db: Db, groupIds: string[]): Map<string, number> {
  if (groupIds.length === 0) return new Map();
  const rows = db
    .select({ groupId: groupMembers.groupId, n: countAll })
    .from(groupMembers)
    .innerJoin(users, eq(users.id, groupMembers.userId))
    .where(and(inArray(groupMembers.groupId, groupIds), isNull(users.deletedAt)))
    .groupBy(groupMembers.groupId)
    .all();
  return new Map(rows.map((r) => [r.groupId, r.n]));
}

export function updateGroup(db: Db, clock: Clock, group: GroupRow, changes: { name?: string; description?: string | null }): GroupRow {
  try {
    return db
      .update(groups)
      .set({
        ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        updatedAt: clock.now().toISOString(),
      })
      .where(eq(groups.id, group.id))
      .returning()
      .get()!;
  } catch (err) {
    if (isUniqueViolation(err) && changes.name) throw nameTaken(changes.name);
    throw err;
  }
}

/** Its grants go with it: its members lose what it gave them. */
export function deleteGroup(db: Db, access: AccessChanges, group: GroupRow): void {
  db.delete(groups).where(eq(groups.id, group.id)).run();
  access.narrowed();
}

export function groupMembersOf(db: Db, group: GroupRow) {
  return db
    .select({ id: users.id, email: users.email, name: users.name, addedAt: groupMembers.createdAt })
    .from(groupMembers)
    .innerJoin(users, eq(users.id, groupMembers.userId))
    .where(and(eq(groupMembers.groupId, group.id), isNull(users.deletedAt)))
    .orderBy(asc(users.name))
    .all();
}

/** Ids of a group's live members (not deleted users). */
export function memberIdsOf(db: Db, tenantId: string, groupId: string): string[] {
  return db
    .select({ id: users.id })
    .from(groupMembers)
    .innerJoin(users, eq(users.id, groupMembers.userId))
    .where(and(eq(groupMembers.groupId, groupId), eq(groupMembers.tenantId, tenantId), isNull(users.deletedAt)))
    .all()
    .map((r) => r.id);
}

/**
 * Idempotent: adding a member twice leaves one membership. Returns whether it was new. The group's
 * grants now reach the user, open documents included.
 */
export function addMember(db: Db, clock: Clock, access: AccessChanges, group: GroupRow, userId: string): boolean {
  getUser(db, group.tenantId, userId);
  const result = db
    .insert(groupMembers)
    .values({ groupId: group.id, userId, tenantId: group.tenantId, createdAt: clock.now().toISOString() })
    .onConflictDoNothing()
    .run();
  if (result.changes > 0) access.widened();
  return result.changes > 0;
}

export function removeMember(db: Db, access: AccessChanges, group: GroupRow, userId: string): void {
  const result = db
    .delete(groupMembers)
    .where(and(eq(groupMembers.groupId, group.id), eq(groupMembers.userId, userId)))
    .run();
  if (result.changes === 0) throw notFound('Group member');
  access.narrowed();
}

/** Ids of the groups a user belongs to; used to resolve group grants. */
export function groupIdsOf(db: Db, tenantId: string, userId: string): string[] {
  // Prepared once: every document access decision (REST and each live connection) asks.
  const statement = preparedFor(db, 'groups:ids-of', () =>
    db
      .select({ id: groupMembers.groupId })
      .from(groupMembers)
      .where(and(eq(groupMembers.tenantId, sql.placeholder('tenantId')), eq(groupMembers.userId, sql.placeholder('userId'))))
      .prepare(),
  );
  return statement.all({ tenantId, userId }).map((r) => r.id);
}
