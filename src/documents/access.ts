// Who holds which role on a document: the caller's own grant and their groups' grants, the
// strongest winning. `documentAccess` is the one resolver of a caller's role, for REST and the
// live hub alike; the list queries filter with `visibleTo` inside their WHERE clause, so a list
// can never show what a single GET would refuse.
import { and, eq, inArray, notInArray, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { type Db } from '../../db/client';
import { activities, courseModules, courses, documentContexts, documentGrants, documents, type DocumentRole } from '../../db/schema';
import { courseOfLink, documentsLinked, linkedActivity, linkedCourse, linkedModule, linkTargetExists } from './contexts';
import type { Actor } from '../auth/authenticator';
import { groupIdsOf } from '../groups/service';
import { preparedFor } from '../lib/prepared';
import { keyReachesDocument, strongestRole } from './policy';
import type { DocumentRow } from './types';

/** The caller and the groups they belong to: whoever a grant may name; and the courses their key is limited to (null: none). */
interface Principals {
  tenantId: string;
  userId: string;
  groupIds: string[];
  courseIds: readonly string[] | null;
}

type Caller = Pick<Actor, 'userId' | 'tenantId'> & { courseIds?: readonly string[] | null };

export const principalsOf = (db: Db, actor: Caller): Principals => ({
  tenantId: actor.tenantId,
  userId: actor.userId,
  groupIds: groupIdsOf(db, actor.tenantId, actor.userId),
  courseIds: actor.courseIds ?? null,
});

/**
 * The documents policy's keyReachesDocument in SQL, on a column holding document ids: undefined
 * for a caller without a course limit; else the documents filed in no course, or in one of theirs.
 */
export function reachedBy(db: Db, p: Pick<Principals, 'tenantId' | 'courseIds'>, documentId: SQLiteColumn): SQL | undefined {
  if (p.courseIds === null) return undefined;
  const inTenant = eq(documentContexts.tenantId, p.tenantId);
  const filed = documentsLinked(db, inTenant);
  if (p.courseIds.length === 0) return notInArray(documentId, filed);
  return or(notInArray(documentId, filed), inArray(documentId, documentsLinked(db, and(inTenant, inArray(courseOfLink, [...p.courseIds])))))!;
}

/** The live courses a document is filed in (directly, or through a module or activity). */
export function coursesOfDocument(db: Db, documentId: string): string[] {
  return db
    .selectDistinct({ courseId: courseOfLink })
    .from(documentContexts)
    .leftJoin(courses, linkedCourse)
    .leftJoin(courseModules, linkedModule)
    .leftJoin(activities, linkedActivity)
    .where(and(eq(documentContexts.documentId, documentId), linkTargetExists))
    .all()
    .map((r) => r.courseId);
}

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
  const grants = and(grantsTo(p), role === undefined ? undefined : eq(documentGrants.role, role), reachedBy(db, p, documentGrants.documentId));
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
  actor: Caller,
  documentId: string,
  opts: { includeTrashed?: boolean } = {},
): DocumentAccess | null {
  const statements = accessStatements(db);
  const document = statements.document.get({ documentId, tenantId: actor.tenantId });
  if (!document || (document.trashedAt !== null && !opts.includeTrashed)) return null;
  const { userId, groupIds } = principalsOf(db, actor);
  const grants = statements.roles.all({ documentId, userId, groupIds: JSON.stringify(groupIds) });
  // A document filed only in courses the caller's key does not reach is one they hold no role on: 404.
  if (!keyReachesDocument(actor, () => coursesOfDocument(db, documentId))) return { document, role: null };
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
