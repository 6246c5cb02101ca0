// Comment threads on documents: a root comment (optionally anchored to a range of the body by two
// Yjs relative positions, so the anchor follows edits) and its replies. Resolution is the thread's,
// kept on the root.
import { blob, index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { documents } from './documents';

export const documentComments = sqliteTable(
  'document_comments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    /** The root comment of the thread; a root names itself. */
    threadId: text('thread_id').notNull(),
    /** The comment answered; null for a root. */
    parentId: text('parent_id'),
    authorId: text('author_id')
      .notNull()
      .references(() => users.id),
    /** Null once a root with replies is deleted: the thread stays, its opening shown as deleted. */
    body: text('body'),
    /** `Y.encodeRelativePosition` of the anchor's start and end on the `content` text (roots only). */
    anchorStart: blob('anchor_start', { mode: 'buffer' }),
    anchorEnd: blob('anchor_end', { mode: 'buffer' }),
    /** On the root: the whole thread is resolved. */
    resolvedAt: text('resolved_at'),
    resolvedBy: text('resolved_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    deletedAt: text('deleted_at'),
  },
  (t) => [
    index('document_comments_document_idx').on(t.documentId, t.threadId, t.createdAt),
    index('document_comments_thread_idx').on(t.threadId),
    index('document_comments_author_idx').on(t.authorId),
    index('document_comments_resolved_by_idx').on(t.resolvedBy),
    index('document_comments_tenant_idx').on(t.tenantId),
  ],
);
