// API keys: a user's long-lived credentials for scripts and integrations.
import type { AccessChanges } from '../auth/access';
import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { apiKeys, courses } from '../../db/schema';
import type { Clock } from '../lib/clock';
import { generateApiKey, sha256 } from '../auth/secrets';
import { notFound, unprocessable } from '../http/errors';
import { pageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { selectPage } from '../lib/sql';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export function createApiKey(
  db: Db,
  clock: Clock,
  owner: { tenantId: string; userId: string },
  input: { name: string; expiresAt?: string; scopes?: string[]; courseIds?: string[]; catalogue: readonly { name: string }[] },
): { row: ApiKeyRow; key: string } {
  const now = clock.now();
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) {
    throw unprocessable('expires_at must be in the future', [{ path: 'expires_at', message: 'must be in the future' }]);
  }
  const known = new Set(input.catalogue.map((s) => s.name));
  const unknownScopes = (input.scopes ?? []).map((name, i) => ({ name, i })).filter(({ name }) => !known.has(name));
  if (unknownScopes.length > 0) {
    throw unprocessable('Unknown scopes: see GET /api/api-keys/scopes', unknownScopes.map(({ name, i }) => ({ path: `scopes.${i}`, message: `no scope ${name}` })));
  }
  const courseIds = input.courseIds ? [...new Set(input.courseIds.map((id) => id.toLowerCase()))] : null;
  if (courseIds) {
    const found = new Set(
      db
        .select({ id: courses.id })
        .from(courses)
        .where(and(eq(courses.tenantId, owner.tenantId), isNull(courses.deletedAt), inArray(courses.id, courseIds)))
        .all()
        .map((r) => r.id),
    );
    const missing = courseIds.filter((id) => !found.has(id));
    if (missing.length > 0) throw unprocessable('Unknown courses in course_ids', missing.map((id) => ({ path: 'course_ids', message: `no course ${id}` })));
  }
  const { key, prefix } = generateApiKey();
  const row = db
    .insert(apiKeys)
    .values({
      id: newId(),
      tenantId: owner.tenantId,
      userId: owner.userId,
      name: input.name.trim(),
      prefix,
      keyHash: sha256(key),
      createdAt: now.toISOString(),
      expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      scopes: input.scopes ? [...new Set(input.scopes)].sort() : ['*'],
      courseIds,
    })
    .returning()
    .get();
  return { row, key };
}

export function listApiKeys(db: Db, owner: { tenantId: string; userId: string }, page: PageQuery) {
  const where = and(eq(apiKeys.tenantId, owner.tenantId), eq(apiKeys.userId, owner.userId));
  return selectPage(db, apiKeys, where, [desc(apiKeys.createdAt), desc(apiKeys.id)], pageBounds(page));
}

export function getApiKey(db: Db, owner: { tenantId: string; userId: string }, id: string): ApiKeyRow {
  const row = db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.tenantId, owner.tenantId), eq(apiKeys.userId, owner.userId)))
    .get();
  if (!row) throw notFound('API key');
  return row;
}

/** Only the key's owner deletes it; anyone else's key does not exist for the caller. It stops at once. */
export function deleteApiKey(db: Db, access: AccessChanges, owner: { tenantId: string; userId: string }, id: string): void {
  const result = db
    .delete(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.tenantId, owner.tenantId), eq(apiKeys.userId, owner.userId)))
    .run();
  if (result.changes === 0) throw notFound('API key');
  access.narrowed();
}
