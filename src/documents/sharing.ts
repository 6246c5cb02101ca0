// Sharing: grants of a role on a document to users and groups. The document keeps at least one
// owner who is a person; a write that takes access away or gives it tells AccessChanges.
import { and, asc, eq, isNull, ne, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { documentGrants, groups, users, type DocumentRole } from '../../db/schema';
import type { AccessChanges } from '../auth/access';
import type { Clock } from '../lib/clock';
import { getGroup, memberIdsOf } from '../groups/service';
import { appendEvent } from '../events/log';
import { AppError, conflict, notFound, unprocessable } from '../http/errors';
import { sqlPageBounds, type PageQuery } from '../http/pagination';
import { newId } from '../lib/ids';
import { countAll, countRows } from '../lib/sql';
import { getUser } from '../users/service';
import { isDowngrade } from './policy';
import type { DocumentActor, DocumentRow } from './types';

export type PrincipalType = 'user' | 'group';

export interface Collaborator {
  principalType: PrincipalType;
  principalId: string;
  name: string;
  email: string | null;
  role: DocumentRole;
  grantedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

const roleOrder = sql`CASE ${documentGrants.role} WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 WHEN 'commenter' THEN 2 ELSE 3 END`;

function collaboratorQuery(db: Db) {
  return db
    .select({
      userId: documentGrants.userId,
      groupId: documentGrants.groupId,
      userName: users.name,
      email: users.email,
      groupName: groups.name,
      role: documentGrants.role,
      grantedBy: documentGrants.grantedBy,
      createdAt: documentGrants.createdAt,
      updatedAt: documentGrants.updatedAt,
    })
    .from(documentGrants)
    .leftJoin(users, eq(users.id, documentGrants.userId))
    .leftJoin(groups, eq(groups.id, documentGrants.groupId));
}

type CollaboratorJoin = ReturnType<ReturnType<typeof collaboratorQuery>['all']>[number];

const toCollaborator = (r: CollaboratorJoin): Collaborator => ({
  principalType: r.userId !== null ? 'user' : 'group',
  principalId: (r.userId ?? r.groupId)!,
  name: (r.userId !== null ? r.userName : r.groupName) ?? '',
  email: r.userId !== null ? r.email : null,
  role: r.role,
  grantedBy: r.grantedBy,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** Users and groups holding a role on the document, owners first. */
export function listCollaborators(db: Db, doc: DocumentRow, page: PageQuery): { rows: Collaborator[]; total: number } {
  const { limit, offset } = sqlPageBounds(page);
  const rows = collaboratorQuery(db)
    .where(eq(documentGrants.documentId, doc.id))
    .orderBy(roleOrder, asc(documentGrants.createdAt), asc(documentGrants.id))
    .limit(limit)
    .offset(offset)
    .all();
  const total = countRows(db, documentGrants, eq(documentGrants.documentId, doc.id));
  return { rows: rows.map(toCollaborator), total };
}

const principalColumn = (type: PrincipalType) => (type === 'user' ? documentGrants.userId : documentGrants.groupId);

/** One user's or group's grant on the document, or 404. */
export function getCollaborator(db: Db, doc: DocumentRow, type: PrincipalType, principalId: string): Collaborator {
  const row = collaboratorQuery(db)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(type), principalId)))
    .get();
  if (!row) throw notFound('Collaborator');
  return toCollaborator(row);
}

function grantOf(db: Db, doc: DocumentRow, type: PrincipalType, principalId: string) {
  return db
    .select()
    .from(documentGrants)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(type), principalId)))
    .get();
}

/**
 * Whether taking the owner role away from `grantId` would leave the document with no owner who is
 * a person: group owners do not count, since a group can be emptied or deleted.
 */
function isLastPersonOwner(db: Db, doc: DocumentRow, grant: { id: string; role: DocumentRole; userId: string | null }): boolean {
  if (grant.role !== 'owner') return false;
  const others =
    db
      .select({ n: countAll })
      .from(documentGrants)
      .innerJoin(users, eq(users.id, documentGrants.userId))
      .where(and(eq(documentGrants.documentId, doc.id), eq(documentGrants.role, 'owner'), ne(documentGrants.id, grant.id), isNull(users.deletedAt)))
      .get()?.n ?? 0;
  return others === 0;
}

const lastOwner = () => conflict('The document must keep at least one owner who is a person; make someone else owner first');

/** The principal exists in the document's tenant (a live user, or a group); otherwise 422. */
function checkPrincipal(db: Db, tenantId: string, type: PrincipalType, principalId: string): void {
  try {
    if (type === 'user') getUser(db, tenantId, principalId);
    else getGroup(db, tenantId, principalId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') {
      throw unprocessable(`principal_id does not name a ${type} of this tenant`, [{ path: 'principal_id', message: `unknown ${type}` }]);
    }
    throw err;
  }
}

export interface ShareResult {
  collaborator: Collaborator;
  created: boolean;
  /** Some right was taken away: live connections must re-check. */
  narrowed: boolean;
}

/** `document.shared`, in the grant's transaction: in the grantee's feed, or each member's of a granted group. */
function recordShare(tx: Db, clock: Clock, actor: DocumentActor, doc: DocumentRow, input: { principalType: PrincipalType; principalId: string; role: DocumentRole }) {
  appendEvent(tx, clock, {
    tenantId: doc.tenantId,
    type: 'document.shared',
    actorId: actor.userId,
    subject: { type: 'document', id: doc.id },
    data: { document_id: doc.id, title: doc.title, grantee_type: input.principalType, grantee_id: input.principalId, role: input.role },
    recipients: input.principalType === 'user' ? [input.principalId] : memberIdsOf(tx, doc.tenantId, input.principalId),
  });
}

/**
 * Grants or changes a role (upsert). Downgrading the last owner who is a person is a 409. Live
 * connections re-decide at once: a raised grant lets a viewer edit now, a lowered one stops them.
 * A new grant or a changed role is recorded as a `document.shared` event; a grant sent again as
 * it is records nothing.
 */
export function shareDocument(
  db: Db,
  clock: Clock,
  access: AccessChanges,
  actor: DocumentActor,
  doc: DocumentRow,
  input: { principalType: PrincipalType; principalId: string; role: DocumentRole },
): ShareResult {
  checkPrincipal(db, doc.tenantId, input.principalType, input.principalId);
  const now = clock.now().toISOString();
  const { created, narrowed } = inTransaction(db, (tx) => {
    const existing = grantOf(tx, doc, input.principalType, input.principalId);
    if (!existing) {
      tx.insert(documentGrants)
        .values({
          id: newId(),
          documentId: doc.id,
          tenantId: doc.tenantId,
          userId: input.principalType === 'user' ? input.principalId : null,
          groupId: input.principalType === 'group' ? input.principalId : null,
          role: input.role,
          grantedBy: actor.userId,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      recordShare(tx, clock, actor, doc, input);
      return { created: true, narrowed: false };
    }
    if (existing.role === input.role) return { created: false, narrowed: false };
    if (input.role !== 'owner' && isLastPersonOwner(tx, doc, existing)) throw lastOwner();
    tx.update(documentGrants).set({ role: input.role, grantedBy: actor.userId, updatedAt: now }).where(eq(documentGrants.id, existing.id)).run();
    recordShare(tx, clock, actor, doc, input);
    return { created: false, narrowed: isDowngrade(existing.role, input.role) };
  });
  const row = collaboratorQuery(db)
    .where(and(eq(documentGrants.documentId, doc.id), eq(principalColumn(input.principalType), input.principalId)))
    .get()!;
  if (narrowed) access.narrowed();
  else access.widened();
  return { collaborator: toCollaborator(row), created, narrowed };
}

/** Removes a grant. Removing the last owner who is a person is a 409. */
export function unshareDocument(db: Db, access: AccessChanges, doc: DocumentRow, type: PrincipalType, principalId: string): void {
  inTransaction(db, (tx) => {
    const existing = grantOf(tx, doc, type, principalId);
    if (!existing) throw notFound('Collaborator');
    if (isLastPersonOwner(tx, doc, existing)) throw lastOwner();
    tx.delete(documentGrants).where(eq(documentGrants.id, existing.id)).run();
  });
  access.narrowed();
}
