// Request and response shapes of the competencies area.
import { z } from '@hono/zod-openapi';
import { alignmentTargetTypes } from '../../db/schema';
import { booleanQuery, timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, searchTerm, singleLineText } from '../http/text';

export const frameworkSchema = z
  .object({
    id: uuid(),
    title: z.string(),
    description: z.string().nullable(),
    creator: z.string().nullable(),
    version: z.string().nullable(),
    case_identifier: z.string().nullable().openapi({ description: 'CFDocument identifier of an imported framework; a re-import updates this framework' }),
    case_uri: z.string().nullable(),
    competency_count: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('CompetencyFramework');

const title = singleLineText().trim().min(1).max(500);
const description = multiLineText().max(10_000).nullable().optional();
const shortText = singleLineText().trim().max(500).nullable().optional();

export const frameworkBody = z.object({ title, description, creator: shortText, version: shortText }).strict();
export const frameworkPatch = frameworkBody.partial().refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' });

export const competencySchema = z
  .object({
    id: uuid(),
    framework_id: uuid(),
    parent_id: uuid().nullable(),
    code: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    item_type: z.string().nullable().openapi({ description: 'CASE CFItemType' }),
    case_identifier: z.string().nullable(),
    mastery_threshold: z.number(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Competency');

const threshold = z.number().min(0).max(1).openapi({ description: 'Score (0..1) at or above which the competency is mastered; default 0.8' });
const code = singleLineText().trim().min(1).max(200);

export const competencyBody = z
  .object({ code, title: singleLineText().trim().min(1).max(2000), description, parent_id: uuid().nullable().optional(), mastery_threshold: threshold.optional() })
  .strict();
export const competencyPatch = competencyBody.partial().refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' });

export interface TreeJson extends z.infer<typeof competencySchema> {
  children: TreeJson[];
}
export const treeNodeSchema: z.ZodType<TreeJson> = competencySchema
  .extend({ children: z.array(z.lazy(() => treeNodeSchema)) })
  .openapi('CompetencyTreeNode') as unknown as z.ZodType<TreeJson>;

export const treeSchema = z.object({ framework: frameworkSchema, competencies: z.array(treeNodeSchema) }).openapi('CompetencyTree');

export const cascadeQuery = z.object({
  cascade: booleanQuery.openapi({ param: { name: 'cascade', in: 'query' }, description: 'Also delete what it holds (children, competencies, alignments)' }),
});

export const searchQuery = paginationQuery.extend({
  q: searchTerm().openapi({ param: { name: 'q', in: 'query' }, description: 'Part of a code or title (case ignored)' }),
  framework_id: uuid().optional().openapi({ param: { name: 'framework_id', in: 'query' } }),
});

export const searchHitSchema = competencySchema
  .extend({ rank: z.number().int().openapi({ description: '0 exact code, 1 code prefix, 2 title prefix, 3 contains' }) })
  .openapi('CompetencySearchHit');

const nodeRef = z.looseObject({ identifier: z.string(), uri: z.string(), title: z.string().optional() });
const given = 'and every other member the imported package gave it, as given';
export const casePackageSchema = z
  .looseObject({
    CFDocument: z
      .looseObject({
        identifier: z.string(),
        uri: z.string(),
        creator: z.string(),
        title: z.string(),
        lastChangeDateTime: z.string(),
        version: z.string().optional(),
        description: z.string().optional(),
        CFPackageURI: nodeRef,
      })
      .openapi({ description: `The framework, ${given} (subject, language, adoptionStatus, …)` }),
    CFItems: z.array(
      z
        .looseObject({
          identifier: z.string(),
          uri: z.string(),
          fullStatement: z.string(),
          humanCodingScheme: z.string().optional(),
          CFItemType: z.string().optional(),
          notes: z.string().optional(),
          CFDocumentURI: nodeRef,
          lastChangeDateTime: z.string(),
        })
        .openapi({ description: `A competency, ${given} (educationalLevel, language, listEnumeration, CFItemTypeURI, …)` }),
    ),
    CFAssociations: z.array(
      z
        .looseObject({
          identifier: z.string(),
          associationType: z.string().openapi({ description: 'isChildOf, precedes, isRelatedTo, exactMatchOf, isPartOf, replacedBy, exemplar, hasSkillLevel, isPeerOf, …' }),
          originNodeURI: nodeRef,
          destinationNodeURI: nodeRef,
        })
        .openapi({
          description:
            'Every association the imported package gave, as given with its identifier (an isChildOf while the tree still says the same), and an isChildOf for each competency placed here',
        }),
    ),
    CFDefinitions: z.record(z.string(), z.unknown()).optional().openapi({ description: 'As the imported package gave it (CFConcepts, CFSubjects, CFLicenses, CFItemTypes, CFAssociationGroupings)' }),
  })
  .openapi('CasePackage');

/**
 * The package as sent, for the OpenAPI document only: the body is read and checked item by item
 * off the event loop (case-parse.ts), so that a 422 names the offending one; no zod schema would
 * parse it on the event loop first.
 */
export const caseImportBody = {
  type: 'object' as const,
  required: ['CFDocument', 'CFItems'],
  additionalProperties: true,
  properties: {
    CFDocument: {
      type: 'object' as const,
      additionalProperties: true,
      description: 'identifier, title (required), uri, creator, version, description, lastChangeDateTime; every other member kept as given',
    },
    CFItems: {
      type: 'array' as const,
      maxItems: 20_000,
      items: {},
      description: 'identifier and fullStatement required; humanCodingScheme (the code), CFItemType, notes, uri, lastChangeDateTime; every other member kept as given',
    },
    CFAssociations: {
      type: 'array' as const,
      items: {},
      description:
        'Every type is kept as given, with its identifier. isChildOf associations give the tree: originNodeURI.identifier (the child) under destinationNodeURI.identifier (an item or the CFDocument)',
    },
    CFDefinitions: { type: 'object' as const, additionalProperties: true, description: 'Kept as given' },
  },
};

export const importResultSchema = z
  .object({
    framework: frameworkSchema,
    created: z.number().int(),
    updated: z.number().int(),
    not_in_package: z.number().int().openapi({ description: 'Competencies of an earlier import that this package no longer lists; kept' }),
  })
  .openapi('CaseImportResult');

export const alignmentSchema = z
  .object({
    id: uuid(),
    competency_id: uuid(),
    course_id: uuid(),
    target_type: z.enum(alignmentTargetTypes),
    target_id: uuid(),
    target_title: z.string().nullable(),
    weight: z.number(),
    created_at: timestamp,
  })
  .openapi('CompetencyAlignment');

export const alignmentBody = z
  .object({
    target_type: z.enum(alignmentTargetTypes),
    target_id: uuid(),
    weight: z.number().gt(0).max(100).optional().openapi({ description: 'Weight of this evidence in the mean, default 1' }),
  })
  .strict();

export const alignmentParams = z.object({ id: uuidParam('id'), alignment_id: uuidParam('alignment_id') });

export const masteryStatus = z.enum(['mastered', 'in_progress', 'not_started']);

/** What every per-competency figure starts with: which competency, where it sits, its threshold. */
const competencyHead = z.object({
  competency_id: uuid(),
  framework_id: uuid(),
  parent_id: uuid().nullable(),
  code: z.string(),
  title: z.string(),
  mastery_threshold: z.number(),
});

export const progressItemSchema = competencyHead
  .extend({
    score: z.number().nullable().openapi({ description: '0..1; null without evidence' }),
    status: masteryStatus,
    mastered: z.boolean(),
    evidence_count: z.number().int().openapi({ description: 'Pieces of evidence present: aligned items with evidence and children with a score' }),
    alignment_count: z.number().int(),
  })
  .openapi('CompetencyProgress');

export const progressQuery = paginationQuery.extend({
  framework_id: uuid()
    .optional()
    .openapi({ param: { name: 'framework_id', in: 'query' }, description: 'Only this framework (404 when there is no such framework)' }),
  status: masteryStatus.optional().openapi({ param: { name: 'status', in: 'query' } }),
});

export const courseProgressQuery = paginationQuery.extend({
  user_id: uuid()
    .optional()
    .openapi({ param: { name: 'user_id', in: 'query' }, description: "Whose progress (the course's instructors); default the caller's" }),
});

export const frameworkSummarySchema = z
  .object({
    framework_id: uuid(),
    title: z.string(),
    total: z.number().int(),
    mastered: z.number().int(),
    in_progress: z.number().int(),
    not_started: z.number().int(),
  })
  .openapi('CompetencyFrameworkSummary');

export const courseMasterySchema = competencyHead
  .extend({
    alignment_count: z.number().int(),
    learners: z.number().int(),
    mastered: z.number().int(),
    in_progress: z.number().int(),
    not_started: z.number().int(),
    percent_mastered: z.number().openapi({ description: 'mastered / learners × 100 (0 without learners)' }),
    mean_score: z.number().nullable(),
  })
  .openapi('CourseCompetencyMastery');
