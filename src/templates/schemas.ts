// zod schemas of the templates API.
import { z } from '@hono/zod-openapi';
import { contextRef } from '../documents/schemas';
import { timestamp, uuid } from '../http/openapi';
import { paginationQuery } from '../http/pagination';
import { multiLineText, singleLineText } from '../http/text';

export const MAX_TEMPLATE_BODY = 500_000;
const MAX_VARIABLES = 100;
const MAX_VALUE_LENGTH = 100_000;

const name = singleLineText().trim().min(1, 'name must not be empty').max(200);
const category = singleLineText().trim().min(1, 'category must not be empty').max(100);

export const variableSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a variable name is a letter or _ then letters, digits or _ (at most 64)'),
    label: singleLineText().max(200).nullable().optional(),
    required: z.boolean().optional().openapi({ description: 'Rendering without it (and without a default) is 422; false by default' }),
    default: multiLineText().max(MAX_VALUE_LENGTH).nullable().optional(),
  })
  .strict()
  .openapi('TemplateVariable');

export const templateBody = z
  .object({
    name,
    category: category.nullable().optional(),
    description: multiLineText().max(2000).nullable().optional(),
    body: multiLineText()
      .min(1, 'body must not be empty')
      .max(MAX_TEMPLATE_BODY)
      .openapi({ description: 'Markdown with mustache placeholders ({{name}}, {{#name}}…{{/name}}, {{^name}}…{{/name}}); every name declared in `variables`' }),
    variables: z.array(variableSchema).max(MAX_VARIABLES).default([]),
  })
  .strict()
  .openapi('TemplateInput');

const value = z.union([multiLineText().max(MAX_VALUE_LENGTH), z.number(), z.boolean()]);
const values = z.record(z.string(), value).default({}).openapi({ description: 'Values by variable name: strings, numbers or booleans' });

export const renderBody = z.object({ variables: values }).strict().openapi('RenderTemplate');

export const instantiateBody = z
  .object({
    title: singleLineText().trim().min(1, 'title must not be empty').max(500).optional().openapi({ description: "The template's name by default" }),
    variables: values,
    context: contextRef.nullable().optional(),
  })
  .strict()
  .openapi('InstantiateTemplate');

export const listTemplatesQuery = paginationQuery.extend({ category: singleLineText().max(100).optional() });

export const templateSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    category: z.string().nullable(),
    description: z.string().nullable(),
    body: z.string(),
    variables: z.array(
      z.object({ name: z.string(), label: z.string().nullable(), required: z.boolean(), default: z.string().nullable() }),
    ),
    created_by: uuid(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Template');

export const renderedSchema = z
  .object({
    content: z.string().openapi({ description: 'The Markdown, values as given' }),
    html: z.string().openapi({ description: 'The Markdown rendered to HTML, values HTML-escaped, raw HTML disabled' }),
  })
  .openapi('RenderedTemplate');

export const templateCategorySchema = z.object({ category: z.string().nullable(), count: z.number().int() }).openapi('TemplateCategoryCount');
