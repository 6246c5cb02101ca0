// zod schemas of the documents API: requests, responses and path/query parameters.
import { z } from '@hono/zod-openapi';
import { documentContextTypes, documentRoles } from '../../db/schema';
import { booleanQuery, timestamp, uuid, uuidParam } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, searchTerm, singleLineText } from '../http/text';
import { MAX_TITLE_LENGTH } from './service';
import { MAX_VERSION_NAME_LENGTH, diffGranularities } from './versions';

export const documentRole = z.enum(documentRoles).openapi('DocumentRole');
export const contextType = z.enum(documentContextTypes).openapi('DocumentContextType');
export const principalType = z.enum(['user', 'group']);

const title = singleLineText().trim().min(1, 'title must not be empty').max(MAX_TITLE_LENGTH);
const category = singleLineText().trim().min(1, 'category must not be empty').max(100);

export const documentSchema = z
  .object({
    id: uuid(),
    title: z.string(),
    category: z.string().nullable(),
    created_by: uuid(),
    forked_from: uuid().nullable(),
    template_id: uuid().nullable().openapi({ description: 'The template it was made from (null once that template is deleted)' }),
    created_at: timestamp,
    updated_at: timestamp.openapi({ description: 'Last change of the metadata or the body' }),
    trashed_at: timestamp.nullable(),
    role: documentRole.openapi({ description: "The caller's effective role: the strongest of their own and their groups' grants" }),
    favorite: z.boolean().openapi({ description: "In the caller's favorites" }),
  })
  .openapi('Document');

export const documentWithContent = documentSchema
  .extend({ content: z.string().optional().openapi({ description: 'The Markdown body, with ?include=content' }) })
  .openapi('DocumentWithContent');

export const contextRef = z
  .object({
    context_type: z.enum([...documentContextTypes, 'personal']),
    context_id: uuid().nullable().optional(),
  })
  .strict()
  .superRefine((ctx, issues) => {
    if (ctx.context_type === 'personal' && ctx.context_id) {
      issues.addIssue({ code: 'custom', path: ['context_id'], message: 'the personal context takes no context_id' });
    }
    if (ctx.context_type !== 'personal' && !ctx.context_id) {
      issues.addIssue({ code: 'custom', path: ['context_id'], message: `a ${ctx.context_type} context needs a context_id` });
    }
  })
  .openapi('DocumentContextRef', { description: 'Where the document goes; any item of GET /api/documents/contexts' });

export const createDocumentBody = z
  .object({
    title,
    category: category.nullable().optional(),
    content: multiLineText().optional().openapi({ description: 'Initial Markdown body' }),
    context: contextRef.nullable().optional(),
  })
  .strict()
  .openapi('CreateDocument');

export const updateDocumentBody = z
  .object({ title: title.optional(), category: category.nullable().optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('UpdateDocument');

export const copyDocumentBody = z.object({ title: title.optional() }).strict().openapi('CopyDocument');

export const listDocumentsQuery = paginationQuery
  .extend({
    category: category.optional(),
    context_type: z.enum([...documentContextTypes, 'personal']).optional(),
    context_id: uuid().optional(),
    favorite: booleanQuery,
    trashed: booleanQuery.openapi({ description: 'true: the trash instead of the live documents' }),
    q: searchTerm().optional().openapi({ description: 'Words matched as prefixes in titles and bodies (not blank)' }),
  })
  .superRefine((q, issues) => {
    if (q.context_id && !q.context_type) {
      issues.addIssue({ code: 'custom', path: ['context_type'], message: 'context_id needs a context_type' });
    }
    if (q.context_type && q.context_type !== 'personal' && !q.context_id) {
      issues.addIssue({ code: 'custom', path: ['context_id'], message: `context_type ${q.context_type} needs a context_id` });
    }
    if (q.context_type === 'personal' && q.context_id) {
      issues.addIssue({ code: 'custom', path: ['context_id'], message: 'the personal context takes no context_id' });
    }
  });

export const getDocumentQuery = z.object({
  include: z.enum(['content']).optional().openapi({ description: '`content` adds the Markdown body' }),
});

export const deleteDocumentQuery = z.object({
  permanent: booleanQuery.openapi({ description: 'true: erase a document already in the trash (owner)' }),
});

// ---- collaborators ----

export const collaboratorSchema = z
  .object({
    principal_type: principalType,
    principal_id: uuid(),
    name: z.string(),
    email: z.string().nullable().openapi({ description: 'Users only' }),
    role: documentRole,
    granted_by: uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Collaborator');

export const shareBody = z
  .object({ principal_type: principalType, principal_id: uuid(), role: documentRole })
  .strict()
  .openapi('ShareDocument');

export const collaboratorParams = z.object({
  id: uuidParam('id'),
  principal_type: principalType.openapi({ param: { name: 'principal_type', in: 'path' } }),
  principal_id: uuidParam('principal_id'),
});

// ---- contexts ----

export const availableContextSchema = z
  .object({
    context_type: z.enum(['personal', 'course']),
    context_id: uuid().nullable(),
    title: z.string(),
    course_role: z.enum(['instructor', 'ta', 'student']).nullable().openapi({ description: "The caller's role in the course" }),
  })
  .openapi('AvailableDocumentContext');

export const linkedContextSchema = z
  .object({
    context_type: contextType,
    context_id: uuid(),
    title: z.string(),
    course_id: uuid(),
    created_by: uuid().nullable(),
    created_at: timestamp,
  })
  .openapi('LinkedDocumentContext');

export const linkContextBody = z.object({ context_type: contextType, context_id: uuid() }).strict().openapi('LinkDocumentContext');

export const contextParams = z.object({
  id: uuidParam('id'),
  context_type: contextType.openapi({ param: { name: 'context_type', in: 'path' } }),
  context_id: uuidParam('context_id'),
});

export const categoryCountSchema = z.object({ category: z.string().nullable(), count: z.number().int() }).openapi('DocumentCategoryCount');

export const courseCountSchema = z
  .object({ course_id: uuid(), title: z.string(), slug: z.string(), count: z.number().int() })
  .openapi('DocumentCourseCount');

export const favoriteSchema = z.object({ favorite: z.boolean() }).openapi('DocumentFavorite');

// ---- search ----

export const suggestionsQuery = z.object({
  q: searchTerm().openapi({ description: 'Words matched as prefixes (not blank)' }),
});

export const suggestionSchema = z
  .object({
    id: uuid(),
    title: z.string(),
    category: z.string().nullable(),
    updated_at: timestamp,
    snippet: z.string().openapi({ description: 'Safe HTML: escaped body text around the hits, each hit in <mark>' }),
  })
  .openapi('DocumentSuggestion');

export const suggestionsSchema = z.object({ data: z.array(suggestionSchema) }).openapi('DocumentSuggestions');

// ---- history, versions, diffs ----

export const changeSchema = z
  .object({ id: z.number().int(), user_id: uuid().nullable(), created_at: timestamp, bytes: z.number().int() })
  .openapi('DocumentChange');

export const versionSchema = z
  .object({
    id: uuid(),
    document_id: uuid(),
    name: z.string(),
    created_by: uuid().nullable(),
    created_at: timestamp,
    bytes: z.number().int().openapi({ description: 'Size of the stored Yjs state' }),
  })
  .openapi('DocumentVersion');

export const versionWithContent = versionSchema.extend({ content: z.string() }).openapi('DocumentVersionWithContent');

export const saveVersionBody = z
  .object({ name: singleLineText().trim().min(1, 'name must not be empty').max(MAX_VERSION_NAME_LENGTH) })
  .strict()
  .openapi('SaveDocumentVersion');

export const versionParams = z.object({ id: uuidParam('id'), version_id: uuidParam('version_id') });

export const revertResultSchema = z
  .object({
    document: documentWithContent,
    before_revert_version: versionSchema.openapi({ description: 'The state just before the revert, saved as a version' }),
  })
  .openapi('DocumentRevert');

const versionRef = z
  .union([z.literal('current'), uuid()])
  .openapi({ description: 'A version id of this document, or `current` for the live body' });

export const diffQuery = z.object({
  from: versionRef,
  to: versionRef,
  format: z.enum(['json', 'unified']).default('json').openapi({ description: '`unified`: a unified diff as text/plain' }),
  granularity: z
    .enum(diffGranularities)
    .default('word')
    .openapi({ description: 'Runs of lines, words or characters (json format); stats count the same units' }),
});

export const diffSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    granularity: z.enum(diffGranularities),
    stats: z.object({ insertions: z.number().int(), deletions: z.number().int() }),
    changes: z.array(z.object({ op: z.enum(['equal', 'insert', 'delete']), text: z.string() })),
  })
  .openapi('DocumentDiff');

// ---- body ----

export const replaceContentBody = z
  .object({
    // A missing content is named like every missing value ('content is required').
    content: multiLineText({ error: (issue) => (issue.input === undefined ? undefined : 'content must be a string of Markdown') }).openapi({
      description: 'The new Markdown body',
    }),
  })
  .strict()
  .openapi('ReplaceDocumentContent');
