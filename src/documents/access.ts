// Who holds which role on a document: the caller's own grant and their groups' grants, the
// strongest winning. `documentAccess` is the one resolver of a caller's role, for REST and the
// live hub alike; the list queries filter with `visibleTo` inside their WHERE clause, so a list
// can never show what a single GET would refuse.
import { and, eq, inArray, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { type Db } from '../../db/client';
import { documentGrants, documents, type DocumentRole } from '../../db/schema';
import type { Actor } from '../auth/authenticator';
import { groupIdsOf } from '../groups/service';
import { preparedFor } from '../lib/prepared';
import { strongestRole } from './policy';
import type { DocumentRow } from './types';

/** The caller and the groups they belong to: whoever a grant may name. */
interface Principals {
  userId: string;
  groupIds: string[];
}

export const principalsOf = (db: Db, actor: Pick<Actor, 'userId' | 'tenantId'>): Principals => ({
  userId: actor.userId,
  groupIds: groupIdsOf(db, actor.tenantId, actor.userId),
});

/**
 * Grants that name the principals: the user's own, or one of their groups'. A prepared statement
 * passes placeholders, the group ids then as a subquery (see accessStatements).
 */
export function grantsTo(p: { userId: string | Placeholder; groupIds: string[] | SQL }): SQL {
  const own = eq(documentGrants.userId, p.userId);
  if (Array.isArray(p.groupIds) && p.groupIds.length === 0) return own;
  return or(own, inArray(documentGrants.groupId, p.groupIds))!;
}

/** `documents.id` is one the principals hold a grant on (with `role`: a grant of that role). */
export function visibleTo(db: Db, p: Principals, role?: DocumentRole): SQL {
  const grants = role === undefined ? grantsTo(p) : and(grantsTo(p), eq(documentGrants.role, role));
  return inArray(documents.id, db.select({ id: documentGrants.documentId }).from(documentGrants).where(grants));
}

export function rolesOn(db: Db, p: Principals, documentIds: string[]): Map<string, DocumentRole> {
  if (documentIds.length === 0) return new Map();
  const grants = db
    .select({ documentId: documentGrants.documentId, role: documentGrants.role })
    .from(documentGrants)
    .where(and(inArray(documentGrants.documentId, documentIds), grantsTo(p)))
    .all();
  const byDocument = new Map<string, DocumentRole[]>();
  for (const g of grants) byDocument.set(g.documentId, [...(byDocument.get(g.documentId) ?? []), g.role]);
  const roles = new Map<string, DocumentRole>();
  for (const [id, list] of byDocument) roles.set(id, strongestRole(list)!);
  return roles;
}

export interface DocumentAccess {
  document: DocumentRow;
  /** The strongest of the caller's own grant and their groups' grants; null for none. */
  role: DocumentRole | null;
}

/**
 * The document and the caller's role on it, for routes and the WebSocket hub alike. Null when the
 * document does not exist, belongs to another tenant, or is in the trash (unless `includeTrashed`:
 * only restore, erase and the trash listing deal with trashed documents).
 */
export function documentAccess(
  db: Db,
  actor: Pick<Actor, 'userId' | 'tenantId'>,
  documentId: string,
  opts: { includeTrashed?: boolean } = {},
): DocumentAccess | null {
  const statements = accessStatements(db);
  const document = statements.document.get({ documentId, tenantId: actor.tenantId });
  if (!document || (document.trashedAt !== null && !opts.includeTrashed)) return null;
  const { userId, groupIds } = principalsOf(db, actor);
  const grants = statements.roles.all({ documentId, userId, groupIds: JSON.stringify(groupIds) });
  return { document, role: strongestRole(grants.map((g) => g.role)) };
}

/**
 * `documentAccess`'s statements, prepared once per database: the hub re-decides every live
 * connection with them after each access change. Group ids go in as one JSON array.
 */
function accessStatements(db: Db) {
  return preparedFor(db, 'documents:access', () => {
    const p = sql.placeholder;
    return {
      document: db
        .select()
        .from(documents)
        .where(and(eq(documents.id, p('documentId')), eq(documents.tenantId, p('tenantId'))))
        .prepare(),
      roles: db
        .select({ role: documentGrants.role })
        .from(documentGrants)
        .where(
          and(
            eq(documentGrants.documentId, p('documentId')),
            grantsTo({ userId: p('userId'), groupIds: sql`(select value from json_each(${p('groupIds')}))` }),
          ),
        )
        .prepare(),
    };
  });
}
