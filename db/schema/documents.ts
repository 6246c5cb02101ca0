// Documents: metadata rows, and their Yjs bodies as an append-only update log plus a compacted state;
// who may use them (grants to users and groups), named versions, favorites, context links and the
// search rows behind the FTS5 index (the index itself and its triggers: migration documents_fts).
import { sql } from 'drizzle-orm';
import { blob, check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { groups, tenants, users } from './core';
import { documentTemplates } from './templates';

export const documents = sqliteTable(
  'documents',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    title: text('title').notNull(),
    category: text('category'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    forkedFrom: text('forked_from'),
    /** The template it was made from, if any (kept as null once that template is deleted). */
    templateId: text('template_id').references(() => documentTemplates.id, { onDelete: 'set null' }),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    /** Set while the document is in the trash. */
    trashedAt: text('trashed_at'),
  },
  (t) => [
    index('documents_tenant_idx').on(t.tenantId, t.trashedAt),
    index('documents_created_by_idx').on(t.createdBy),
    index('documents_tenant_category_idx').on(t.tenantId, t.category),
    index('documents_template_idx').on(t.templateId),
  ],
);

/**
 * Every Yjs update a document received, in order, with its author. Compaction folds old updates
 * into `document_states` and clears their `data`, keeping the row as change history.
 *
 * Live editing inserts a row per keystroke burst, and every index is one more page written to the
 * WAL per commit, so there are only the indexes a query or a cascade uses: by document (reads,
 * history, the cascade of an erased document). None on `user_id` or `tenant_id`: nothing looks rows
 * up by them, and users and tenants are never deleted (a user is soft-deleted), so their foreign
 * keys never search this table.
 */
export const documentUpdates = sqliteTable(
  'document_updates',
  {
    /**
     * The rowid, without AUTOINCREMENT: each insert would also rewrite the table's row in
     * sqlite_sequence, a third page in every one-update commit (the hot path of live editing).
     * Ids still only grow within a document: rows leave only with their document (erase).
     */
    id: integer('id').primaryKey(),
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id').references(() => users.id),
    createdAt: text('created_at').notNull(),
    /** Size of the update in bytes (kept after compaction). */
    bytes: integer('bytes').notNull(),
    /** The encoded update; null once compacted into the state row. */
    data: blob('data', { mode: 'buffer' }),
  },
  (t) => [index('document_updates_doc_idx').on(t.documentId, t.id)],
);

/** The compacted body: a full Yjs state covering every update up to `through_update_id`. */
export const documentStates = sqliteTable(
  'document_states',
  {
    documentId: text('document_id')
      .primaryKey()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** The encoded state; empty when it is stored in parts (`parts_generation`). */
    state: blob('state', { mode: 'buffer' }).notNull(),
    throughUpdateId: integer('through_update_id').notNull(),
    /**
     * Set when the state and its Markdown are stored in `document_state_parts` under this
     * generation (a large state, written a part per turn; see Compaction.storeState in collab/store/compaction.ts); `state`
     * is then empty and `markdown` null.
     */
    partsGeneration: text('parts_generation'),
    /**
     * Log rows up to here have had their `data` cleared. Compaction writes the state at once and
     * clears the rows it covers afterwards, a few at a time (see DocumentStore), so this may lag
     * behind `through_update_id` for a while; rows between the two are never read.
     */
    clearedThroughUpdateId: integer('cleared_through_update_id').notNull().default(0),
    updatedAt: text('updated_at').notNull(),
    /**
     * The Markdown of `state`, written with it (null in rows from before it was kept, filled at the
     * next compaction). While no log row follows `through_update_id` it is the document's text, read
     * without loading Yjs: a document of ~100,000 Yjs pieces takes Yjs ~200 ms to load.
     */
    markdown: text('markdown'),
  },
  // Compactions whose log rows are not all cleared yet (a few at most): the store finds them at
  // start without reading every state (columns after a large `state` sit on its overflow pages).
  (t) => [index('document_states_uncleared_idx').on(t.documentId).where(sql`${t.clearedThroughUpdateId} < ${t.throughUpdateId}`)],
);

/**
 * A large compacted state and its Markdown, in parts of a few hundred KiB: each part is written in
 * a short transaction of its own, and the state row names the generation once all are in, so no
 * single write holds the event loop for the whole body. Parts of a generation no state row names
 * (superseded, or left by a stopped process) are deleted a few at a time.
 */
export const documentStateParts = sqliteTable(
  'document_state_parts',
  {
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    generation: text('generation').notNull(),
    /** 'state' (the encoded Yjs state) or 'markdown' (its text, UTF-8). */
    kind: text('kind', { enum: ['state', 'markdown'] }).notNull(),
    part: integer('part').notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    data: blob('data', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.generation, t.kind, t.part] })],
);

export const documentRoles = ['owner', 'editor', 'commenter', 'viewer'] as const;
export type DocumentRole = (typeof documentRoles)[number];

/**
 * A role on a document granted to exactly one user or one group. Two nullable foreign keys rather
 * than a polymorphic id, so that deleting a group takes its grants with it.
 */
export const documentGrants = sqliteTable(
  'document_grants',
  {
    id: text('id').primaryKey(),
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    userId: text('user_id').references(() => users.id),
    groupId: text('group_id').references(() => groups.id, { onDelete: 'cascade' }),
    role: text('role', { enum: documentRoles }).notNull(),
    grantedBy: text('granted_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('document_grants_doc_user_uq').on(t.documentId, t.userId),
    uniqueIndex('document_grants_doc_group_uq').on(t.documentId, t.groupId),
    index('document_grants_user_idx').on(t.userId, t.documentId),
    index('document_grants_group_idx').on(t.groupId, t.documentId),
    index('document_grants_tenant_idx').on(t.tenantId),
    index('document_grants_granted_by_idx').on(t.grantedBy),
    check('document_grants_one_principal', sql`(${t.userId} IS NULL) <> (${t.groupId} IS NULL)`),
  ],
);

/** A named version: the full encoded Yjs state at that moment, and its Markdown (null in rows from before it was kept, filled at first read). */
export const documentVersions = sqliteTable(
  'document_versions',
  {
    id: text('id').primaryKey(),
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    state: blob('state', { mode: 'buffer' }).notNull(),
    createdBy: text('created_by').references(() => users.id),
    markdown: text('markdown'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    index('document_versions_doc_idx').on(t.documentId, t.id),
    index('document_versions_tenant_idx').on(t.tenantId),
    index('document_versions_created_by_idx').on(t.createdBy),
  ],
);

/** A user's favorite documents. */
export const documentFavorites = sqliteTable(
  'document_favorites',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.documentId] }),
    index('document_favorites_doc_idx').on(t.documentId),
    index('document_favorites_tenant_idx').on(t.tenantId),
  ],
);

export const documentContextTypes = ['course', 'module', 'activity'] as const;
export type DocumentContextType = (typeof documentContextTypes)[number];

/**
 * Where a document belongs: a course, a module or an activity. `context_id` names a row of the
 * table its type says, so it carries no foreign key; links are checked when made.
 */
export const documentContexts = sqliteTable(
  'document_contexts',
  {
    documentId: text('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    contextType: text('context_type', { enum: documentContextTypes }).notNull(),
    contextId: text('context_id').notNull(),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.documentId, t.contextType, t.contextId] }),
    index('document_contexts_context_idx').on(t.tenantId, t.contextType, t.contextId),
    index('document_contexts_created_by_idx').on(t.createdBy),
  ],
);

/**
 * The text the FTS5 index `documents_fts` covers (external content): one row per document, its
 * title kept by triggers on `documents`, its body by the search index as the Yjs body changes.
 * `indexed_through` is the last update folded into `body`, so stale rows can be found and redone.
 */
export const documentSearch = sqliteTable(
  'document_search',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    documentId: text('document_id')
      .notNull()
      .unique()
      .references(() => documents.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    indexedThrough: integer('indexed_through').notNull().default(0),
  },
  (t) => [index('document_search_tenant_idx').on(t.tenantId)],
);
