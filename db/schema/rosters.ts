// OneRoster roster imports (src/rosters): the import itself is a background job (`jobs`, kind
// `rosters.import`); this table links each OneRoster record, by its `sourcedId`, to what it became
// here, per tenant and type: a user, a course (a OneRoster class), an enrollment; or, for the
// records kept only as metadata (orgs, academic sessions, OneRoster courses), to nothing but their
// fields. A later import finds its records through these links (idempotent by sourcedId), and a bulk
// import removes only what has a link: a user, course or enrollment made by hand is never touched.
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants } from './core';

export const rosterRecordTypes = ['org', 'academicSession', 'course', 'class', 'user', 'enrollment'] as const;
export type RosterRecordType = (typeof rosterRecordTypes)[number];

export const rosterLinks = sqliteTable(
  'roster_links',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    type: text('type', { enum: rosterRecordTypes }).notNull(),
    sourcedId: text('sourced_id').notNull(),
    /** The user, course or enrollment id; null for the records kept as metadata only. */
    localId: text('local_id'),
    /**
     * True when an import created the local record; false when it adopted one that existed (a user
     * found by email, an enrollment made by hand): an adopted user is never deleted by a roster.
     */
    owned: integer('owned', { mode: 'boolean' }).notNull(),
    /** JSON: the record's OneRoster fields as last imported (titles, codes, types, dates, references). */
    data: text('data').notNull(),
    /** The import (job id) that last wrote it. */
    importId: text('import_id').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    /** Set when the record was marked `tobedeleted` or left out of a bulk file; cleared if it comes back. */
    deletedAt: text('deleted_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.type, t.sourcedId] }), index('roster_links_local_idx').on(t.tenantId, t.type, t.localId)],
);
