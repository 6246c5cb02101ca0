// Comment rows → public JSON (snake_case); anchors as base64 with the text they cover now.
import type { CommentView, ThreadView } from './service';

export const presentComment = (c: CommentView) => ({
  id: c.id,
  document_id: c.documentId,
  thread_id: c.threadId,
  parent_id: c.parentId,
  author_id: c.authorId,
  body: c.deletedAt === null ? c.body : null,
  deleted: c.deletedAt !== null,
  anchor: c.anchor,
  resolved: c.thread.resolvedAt !== null,
  resolved_at: c.thread.resolvedAt,
  resolved_by: c.thread.resolvedBy,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const presentThread = (t: ThreadView) => ({ ...presentComment(t), replies: t.replies.map(presentComment) });
