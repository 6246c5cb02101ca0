// Course migration (src/imports): what each Common Cartridge identifier became in a course, so that
// importing the same cartridge into the same course again updates those rows instead of adding
// copies. The imports themselves are jobs (db/schema/jobs.ts, kind `imports.cartridge`).
import { index, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants } from './core';
import { courses } from './courses';

export const importTargetKinds = ['section', 'module', 'activity', 'document', 'file', 'assignment'] as const;
export type ImportTargetKind = (typeof importTargetKinds)[number];

export const importMappings = sqliteTable(
  'import_mappings',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    kind: text('kind', { enum: importTargetKinds }).notNull(),
    /** The cartridge's identifier (an item's or resource's), or a file's path in the package. */
    identifier: text('identifier').notNull(),
    /** The row it became (a section, module, activity, document, course file or gradebook assignment). */
    targetId: text('target_id').notNull(),
    /** SHA-256 of what was imported last (a page's Markdown): unchanged content is left as it is. */
    sourceHash: text('source_hash'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('import_mappings_course_identifier_uq').on(t.courseId, t.kind, t.identifier),
    index('import_mappings_tenant_idx').on(t.tenantId),
  ],
);

/**
 * A course an import is still writing: created hidden (deleted_at set) and filled in slices of small
 * transactions, made visible in one short final transaction that removes this row. A job that
 * fails or is abandoned while its row is here has its course removed whole (the job's onFailed).
 */
export const importDrafts = sqliteTable(
  'import_drafts',
  {
    jobId: text('job_id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [index('import_drafts_course_idx').on(t.courseId), index('import_drafts_tenant_idx').on(t.tenantId)],
);
