// Who may do what to a document: pure functions of the caller's effective role, used by every
// documents route, by comments and export, and by the WebSocket hub (through `documentAccess` in
// service.ts, which resolves the role these functions judge).
//
// A role comes only from grants: the caller's own grant and the grants of the groups they belong
// to, the strongest one winning. Tenant admins get NO implicit access: documents are private to
// their collaborators, as in Google Docs or Outline's private documents, so an admin sees,
// searches and edits only what was shared with them (directly or through a group). An admin who
// needs a document asks its owner; nothing about an admin's tenant role widens a document's audience.
import type { DocumentRole } from '../../db/schema';

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
