// Who may do what to a document's comments: pure functions of the caller's role on the document
// (the documents policy's roles) and of the comment. Readers (viewers included) see threads;
// commenters and above write, answer, resolve and reopen; a comment is changed by its author
// alone and deleted by its author or an owner of the document.
import type { DocumentRole } from '../../db/schema';
import { canComment, canManage, canRead } from '../documents/policy';
import { forbidden, notFound } from '../http/errors';

export const canEditComment = (userId: string, role: DocumentRole | null, comment: { authorId: string }): boolean =>
  canComment(role) && comment.authorId === userId;
export const canDeleteComment = (userId: string, role: DocumentRole | null, comment: { authorId: string }): boolean =>
  canManage(role) || canEditComment(userId, role, comment);

export type CommentAction = 'read' | 'write' | 'resolve' | 'edit' | 'delete';

/**
 * The one entry the routes call, with the caller's role on the comment's document (null: no
 * grant, another tenant's, or in the trash: 404 as if neither existed). A reader lacking the right
 * is 403.
 */
export function authorizeComment(action: CommentAction, userId: string, role: DocumentRole | null, comment?: { authorId: string }): void {
  if (!canRead(role)) throw notFound(comment ? 'Comment' : 'Document');
  switch (action) {
    case 'read':
      return;
    case 'write':
      if (!canComment(role)) throw forbidden('Only commenters, editors and owners can comment on this document');
      return;
    case 'resolve':
      if (!canComment(role)) throw forbidden('Only commenters, editors and owners can resolve or reopen threads');
      return;
    case 'edit':
      if (!canEditComment(userId, role, comment!)) throw forbidden('Only the author can change a comment');
      return;
    case 'delete':
      if (!canDeleteComment(userId, role, comment!)) throw forbidden("Only the author or the document's owners can delete a comment");
      return;
  }
}
