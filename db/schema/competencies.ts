// Competencies: frameworks of a tenant (authored here or imported from an IMS CASE 1.0 package),
// their competencies as a tree, and the alignments that say which course content (an activity, a
// module or a gradebook assignment) evidences a competency, with a weight. Mastery is not stored:
// it is computed from live grades and completions (src/competencies/mastery.ts).
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';
import { courses } from './courses';

export const competencyFrameworks = sqliteTable(
  'competency_frameworks',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    title: text('title').notNull(),
    description: text('description'),
    /** CASE `creator`: the body that publishes the framework. */
    creator: text('creator'),
    version: text('version'),
    /** CASE `CFDocument.identifier` of an imported framework: a re-import finds it by this. */
    caseIdentifier: text('case_identifier'),
    caseUri: text('case_uri'),
    /** CASE `lastChangeDateTime` of the imported document, as the package said it. */
    caseLastChangeAt: text('case_last_change_at'),
    /**
     * The imported CFDocument as given (JSON): its fields without a column here (subject, language,
     * adoptionStatus, …) leave again as they came, and those with one leave as given unless changed here.
     */
    caseDocument: text('case_document'),
    /** The rest of the imported package as given (JSON object): CFDefinitions, CFRubrics and any other top-level member. */
    casePackage: text('case_package'),
    /**
     * The import whose CFItems and CFAssociations as given (competency_case_items, _associations)
     * are the framework's: an import writes its own beside the last one's, a few at a time, and
     * makes them the framework's by changing this in the transaction that stores the competencies.
     */
    caseImportId: text('case_import_id'),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('competency_frameworks_tenant_case_uq').on(t.tenantId, t.caseIdentifier),
    index('competency_frameworks_tenant_title_idx').on(t.tenantId, t.title),
    index('competency_frameworks_created_by_idx').on(t.createdBy),
  ],
);

export const DEFAULT_MASTERY_THRESHOLD = 0.8;

/** A competency (CASE CFItem); `parent_id` makes the framework a forest. */
export const competencies = sqliteTable(
  'competencies',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    frameworkId: text('framework_id')
      .notNull()
      .references(() => competencyFrameworks.id),
    parentId: text('parent_id'),
    /** CASE `humanCodingScheme`; unique within the framework. */
    code: text('code').notNull(),
    /** CASE `fullStatement`. */
    title: text('title').notNull(),
    description: text('description'),
    /** CASE `CFItemType` (Standard, Domain, Cluster …). */
    itemType: text('item_type'),
    caseIdentifier: text('case_identifier'),
    caseUri: text('case_uri'),
    caseLastChangeAt: text('case_last_change_at'),
    masteryThreshold: real('mastery_threshold').notNull().default(DEFAULT_MASTERY_THRESHOLD),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('competencies_framework_code_uq').on(t.frameworkId, t.code),
    uniqueIndex('competencies_framework_case_uq').on(t.frameworkId, t.caseIdentifier),
    index('competencies_parent_idx').on(t.parentId),
    // Search ranks by code within the tenant.
    index('competencies_tenant_code_idx').on(t.tenantId, t.code),
  ],
);

/**
 * The CFItems of an imported framework as given (JSON), by import (see
 * competency_frameworks.case_import_id): educationalLevel, language, listEnumeration,
 * CFItemTypeURI, … leave as they came.
 */
export const competencyCaseItems = sqliteTable(
  'competency_case_items',
  {
    /** No foreign key: an import writes these before the transaction that creates a new framework's row. */
    frameworkId: text('framework_id').notNull(),
    importId: text('import_id').notNull(),
    identifier: text('identifier').notNull(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    body: text('body').notNull(),
  },
  (t) => [primaryKey({ columns: [t.frameworkId, t.importId, t.identifier] }), index('competency_case_items_tenant_idx').on(t.tenantId)],
);

/**
 * The CFAssociations of an imported framework, as given and in the package's order: every type
 * (isChildOf, precedes, isRelatedTo, exactMatchOf, …) with its own identifier. The tree itself is
 * `competencies.parent_id`; an isChildOf association here leaves again only while it still says
 * what the tree says (a competency moved or authored here gets one made for it).
 */
export const competencyCaseAssociations = sqliteTable(
  'competency_case_associations',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    /** No foreign key: an import writes these before the transaction that creates a new framework's row. */
    frameworkId: text('framework_id').notNull(),
    /** The import that gave it (see competency_frameworks.case_import_id). */
    importId: text('import_id').notNull(),
    /** The association's place in the package. */
    position: integer('position').notNull(),
    identifier: text('identifier').notNull(),
    associationType: text('association_type').notNull(),
    originIdentifier: text('origin_identifier').notNull(),
    destinationIdentifier: text('destination_identifier').notNull(),
    /** The association as given (JSON). */
    body: text('body').notNull(),
  },
  (t) => [
    index('competency_case_associations_framework_idx').on(t.frameworkId, t.importId, t.position),
    index('competency_case_associations_origin_idx').on(t.frameworkId, t.originIdentifier),
    index('competency_case_associations_destination_idx').on(t.frameworkId, t.destinationIdentifier),
    index('competency_case_associations_tenant_idx').on(t.tenantId),
  ],
);

export const alignmentTargetTypes = ['activity', 'module', 'assignment'] as const;
export type AlignmentTargetType = (typeof alignmentTargetTypes)[number];

/** What evidences a competency. `course_id` is the target's course, so a course's alignments are one index range. */
export const competencyAlignments = sqliteTable(
  'competency_alignments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    competencyId: text('competency_id')
      .notNull()
      .references(() => competencies.id),
    courseId: text('course_id')
      .notNull()
      .references(() => courses.id),
    targetType: text('target_type', { enum: alignmentTargetTypes }).notNull(),
    targetId: text('target_id').notNull(),
    weight: real('weight').notNull().default(1),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('competency_alignments_competency_target_uq').on(t.competencyId, t.targetId),
    // Covers the mastery engine's read of a course's alignments.
    index('competency_alignments_course_cover_idx').on(t.courseId, t.tenantId, t.competencyId, t.targetType, t.targetId, t.weight),
    index('competency_alignments_target_idx').on(t.targetId),
    index('competency_alignments_tenant_idx').on(t.tenantId),
    index('competency_alignments_created_by_idx').on(t.createdBy),
  ],
);
