// Who may do what to a document: pure functions of the caller's effective role, used by every
// documents route, by comments and export, and by the WebSocket hub (through `documentAccess` in
// access.ts, which resolves the role these functions judge).
//
// A role comes only from grants: the caller's own grant and the grants of the groups they belong
// to, the strongest one winning. Tenant admins get NO implicit access: documents are private to
// their collaborators, as in Google Docs or Outline's private documents, so an admin sees,
// searches and edits only what was shared with them (directly or through a group). An admin who
// needs a document asks its owner; nothing about an admin's tenant role widens a document's audience.
import type { DocumentRole } from '../../db/schema';
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { holdsScope } from '../auth/scopes';
import { forbidden, notFound } from '../http/errors';
import type { Membership } from '../memberships/policy';
import { DOCUMENTS_SCOPE } from '../../collab/scope';

export type { DocumentRole };

const rank: Record<DocumentRole, number> = { viewer: 1, commenter: 2, editor: 3, owner: 4 };

/** The strongest of several grants, or null for none. */
export function strongestRole(roles: Iterable<DocumentRole>): DocumentRole | null {
  let best: DocumentRole | null = null;
  for (const role of roles) if (best === null || rank[role] > rank[best]) best = role;
  return best;
}

/** `to` gives less than `from`: taking a right away, which live connections must notice. */
export const isDowngrade = (from: DocumentRole, to: DocumentRole): boolean => rank[to] < rank[from];

/** See the document, its body, history, versions, diffs and collaborators; copy it; favorite it. */
export const canRead = (role: DocumentRole | null): role is DocumentRole => role !== null;

/** Write comments (and so see and answer threads). */
export const canComment = (role: DocumentRole | null): boolean => role !== null && rank[role] >= rank.commenter;

/** Change the body: live edits, named versions, revert. */
export const canEdit = (role: DocumentRole | null): boolean => role !== null && rank[role] >= rank.editor;

/** Share, rename and recategorise, link to contexts, trash, restore and erase. */
export const canManage = (role: DocumentRole | null): boolean => role === 'owner';

/**
 * An API key limited to some courses (`course_ids`) reaches a document filed in none of them only
 * when it is filed in no course at all (a personal document, governed by grants and scopes alone);
 * one filed in courses reaches it through any of them. Without such a key, every document.
 * `linkedCourseIds`: the courses of the document's live links (asked only for a limited key). The
 * lists apply the same rule in SQL (access.ts, `reachedBy`).
 */
export const keyReachesDocument = (actor: { courseIds?: readonly string[] | null }, linkedCourseIds: () => readonly string[]): boolean => {
  if (actor.courseIds == null) return true;
  const linked = linkedCourseIds();
  return linked.length === 0 || linked.some((id) => actor.courseIds!.includes(id));
};

/** Any member of the tenant creates documents (and owns them). */
export const canCreateDocument = (_actor: Actor): boolean => true;

/**
 * Links documents to a course (or its modules): an active member of the course in any role, or a
 * tenant admin. Linking shares nothing: it only files the document there.
 */
export const canAddToCourse = (actor: Pick<Actor, 'role'>, membership: Membership | undefined): boolean =>
  isTenantAdmin(actor) || membership?.status === 'active';

/** Every course of the tenant is a context the caller may file documents in: tenant admins. */
export const canUseEveryCourse = (actor: Pick<Actor, 'role'>): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'documents:create': canCreateDocument };

/** The documents area's scope (src/auth/scopes.ts): `documents:read` and `documents:write`, for REST and the live hub alike. */
export { DOCUMENTS_SCOPE };

/**
 * What a live connection may do: the caller's role on the document (null: none, or a course their
 * key does not reach), narrowed by their API key's scopes as every REST route is. Connecting reads
 * the document (`documents:read`); sending updates writes it (`documents:write`): a key holding only
 * the read scope is a viewer, whatever its creator's role; a key with neither is refused.
 */
export function collabAccessOf(actor: Pick<Actor, 'scopes'>, role: DocumentRole | null): 'edit' | 'read' | 'none' {
  if (!canRead(role)) return 'none';
  if (actor.scopes !== null && !holdsScope(actor.scopes, `${DOCUMENTS_SCOPE.name}:read`)) return 'none';
  if (!canEdit(role)) return 'read';
  return actor.scopes === null || holdsScope(actor.scopes, `${DOCUMENTS_SCOPE.name}:write`) ? 'edit' : 'read';
}

export type DocumentAction = 'read' | 'edit' | 'manage';

const allowed: Record<DocumentAction, (role: DocumentRole) => boolean> = { read: canRead, edit: canEdit, manage: canManage };
const refusals: Record<DocumentAction, string> = {
  read: 'You cannot read this document',
  edit: 'Only editors and owners can change this document',
  manage: 'Only owners can do this to the document',
};

/**
 * The one entry the routes call, with the caller's access as `documentAccess` resolved it (null:
 * no such document in the tenant). A document the caller holds no grant on answers 404, as if it
 * did not exist; in the trash a document is its owners' alone, so reading a trashed one is 404 to
 * anyone else. A role too weak for the action is a 403.
 */
export function authorizeDocument<A extends { document: { trashedAt: string | null }; role: DocumentRole | null }>(
  action: DocumentAction,
  access: A | null,
): A & { role: DocumentRole } {
  if (!access || access.role === null) throw notFound('Document');
  if (action === 'read' && access.document.trashedAt !== null && !canManage(access.role)) throw notFound('Document');
  if (!allowed[action](access.role)) throw forbidden(refusals[action]);
  return access as A & { role: DocumentRole };
}
