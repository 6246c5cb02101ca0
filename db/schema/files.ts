// Course files: PDFs, images, slides that courses and documents refer to. The bytes live once per
// content under DATA_DIR/files/ by SHA-256 (src/files/blobs.ts); a row here is one file of one
// course, by folder and name, pointing at its blob. A blob goes when no row refers to it.
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courses } from './courses';

export const courseFiles = sqliteTable(
  'course_files',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    /** Slash-separated, no leading or trailing slash; '' is the course's top folder. */
    folder: text('folder').notNull().default(''),
    name: text('name').notNull(),
    /** As sniffed from the bytes, never as the uploader declared it. */
    contentType: text('content_type').notNull(),
    bytes: integer('bytes').notNull(),
    sha256: text('sha256').notNull(),
    createdBy: text('created_by').references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('course_files_path_idx').on(t.courseId, t.folder, t.name),
    index('course_files_tenant_idx').on(t.tenantId),
    index('course_files_sha256_idx').on(t.sha256),
    index('course_files_created_by_idx').on(t.createdBy),
  ],
);
