// Each user's favorite documents.
import { and, eq, inArray } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { documentFavorites } from '../../db/schema';
import type { Clock } from '../lib/clock';
import type { DocumentRow } from './types';

export function favoritesAmong(db: Db, userId: string, documentIds: string[]): Set<string> {
  if (documentIds.length === 0) return new Set();
  const rows = db
    .select({ id: documentFavorites.documentId })
    .from(documentFavorites)
    .where(and(eq(documentFavorites.userId, userId), inArray(documentFavorites.documentId, documentIds)))
    .all();
  return new Set(rows.map((r) => r.id));
}

export const isFavorite = (db: Db, userId: string, doc: DocumentRow): boolean => favoritesAmong(db, userId, [doc.id]).has(doc.id);

/** Flips the caller's favorite flag; returns the new state. */
export function toggleFavorite(db: Db, clock: Clock, userId: string, doc: DocumentRow): boolean {
  return inTransaction(db, (tx) => {
    const removed = tx
      .delete(documentFavorites)
      .where(and(eq(documentFavorites.userId, userId), eq(documentFavorites.documentId, doc.id)))
      .run();
    if (removed.changes > 0) return false;
    tx.insert(documentFavorites).values({ userId, documentId: doc.id, tenantId: doc.tenantId, createdAt: clock.now().toISOString() }).run();
    return true;
  });
}
