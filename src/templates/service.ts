// Templates of a tenant: create, list (by category), read, replace, delete, category counts,
// render, and instantiate (a new document made through the documents service, `template_id`
// recorded). A body is checked against its variables whenever it is written (engine.ts).
import { and, asc, eq } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { documentTemplates, documents, type TemplateVariable } from '../../db/schema';
import { notFound, unprocessable } from '../http/errors';
import { pageBounds, sqlPageBounds, type PageQuery } from '../http/pagination';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { countByCategory } from '../lib/category-counts';
import { selectPage } from '../lib/sql';
import type { ContextRef } from '../documents/contexts';
import { DocumentTooLargeError } from '../../collab/store';
import { createDocument, type DocumentActor, type DocumentRow, type DocumentServices } from '../documents/service';
import { checkBody, renderTemplate, type VariableValue } from './engine';

export type TemplateRow = typeof documentTemplates.$inferSelect;

export interface TemplateInput {
  name: string;
  category?: string | null;
  description?: string | null;
  body: string;
  variables: TemplateVariable[];
}

function checkInput(input: TemplateInput): void {
  const seen = new Set<string>();
  const duplicates = input.variables.filter((v) => (seen.has(v.name) ? true : (seen.add(v.name), false)));
  if (duplicates.length > 0) {
    throw unprocessable(
      `variables must have distinct names: ${duplicates.map((v) => v.name).join(', ')}`,
      duplicates.map((v) => ({ path: 'variables', message: `"${v.name}" is declared twice` })),
    );
  }
  checkBody(input.body, input.variables);
}

const normalizedVariables = (variables: TemplateVariable[]): TemplateVariable[] =>
  variables.map((v) => ({ name: v.name, label: v.label ?? null, required: v.required ?? false, default: v.default ?? null }));

export function createTemplate(db: Db, clock: Clock, actor: DocumentActor, input: TemplateInput): TemplateRow {
  checkInput(input);
  const now = clock.now().toISOString();
  return db
    .insert(documentTemplates)
    .values({
      id: newId(),
      tenantId: actor.tenantId,
      name: input.name,
      category: input.category ?? null,
      description: input.description ?? null,
      body: input.body,
      variables: normalizedVariables(input.variables),
      createdBy: actor.userId,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}

export function replaceTemplate(db: Db, clock: Clock, template: TemplateRow, input: TemplateInput): TemplateRow {
  checkInput(input);
  return db
    .update(documentTemplates)
    .set({
      name: input.name,
      category: input.category ?? null,
      description: input.description ?? null,
      body: input.body,
      variables: normalizedVariables(input.variables),
      updatedAt: clock.now().toISOString(),
    })
    .where(eq(documentTemplates.id, template.id))
    .returning()
    .get()!;
}

/**
 * Documents made from it keep their body; their `template_id` becomes null. Nulled here, not by the
 * database: db/schema says ON DELETE SET NULL, but migration 0021 added the column with a plain
 * REFERENCES (SQLite's ADD COLUMN, as drizzle-kit writes it), so the database's action is NO ACTION,
 * and SQLite cannot change a foreign key short of rebuilding `documents`. That rebuild is not worth
 * it: drizzle runs migrations in one transaction with foreign keys on (a PRAGMA foreign_keys=OFF in
 * it does nothing), so its DROP TABLE would cascade-delete the rows of every table that references
 * documents (updates, states, versions, grants, contexts, comments...), and the FTS triggers on
 * documents would need recreating. Without this update, deleting a used template fails (FOREIGN KEY).
 */
export function deleteTemplate(db: Db, template: TemplateRow): void {
  inTransaction(db, (tx) => {
    tx.update(documents).set({ templateId: null }).where(eq(documents.templateId, template.id)).run();
    tx.delete(documentTemplates).where(eq(documentTemplates.id, template.id)).run();
  });
}

/** A template of the caller's tenant; another tenant's is 404 as if it did not exist. */
export function getTemplate(db: Db, tenantId: string, id: string): TemplateRow {
  const row = db
    .select()
    .from(documentTemplates)
    .where(and(eq(documentTemplates.id, id), eq(documentTemplates.tenantId, tenantId)))
    .get();
  if (!row) throw notFound('Template');
  return row;
}

/** By name; `category` filters (an empty one: the uncategorised). */
export function listTemplates(db: Db, tenantId: string, filter: { category?: string }, page: PageQuery) {
  const where = and(
    eq(documentTemplates.tenantId, tenantId),
    filter.category !== undefined ? eq(documentTemplates.category, filter.category) : undefined,
  );
  const { rows, total } = selectPage(db, documentTemplates, where, [asc(documentTemplates.name), asc(documentTemplates.id)], pageBounds(page));
  return { rows, total };
}

/** `[{category, count}]` over the tenant's templates; uncategorised as null, last. */
export function templateCategories(db: Db, tenantId: string, page: PageQuery) {
  return countByCategory(db, documentTemplates, documentTemplates.category, eq(documentTemplates.tenantId, tenantId), sqlPageBounds(page));
}

export const render = (template: TemplateRow, values: Record<string, VariableValue>) => renderTemplate(template, values);

/** A new document owned by the caller: the rendered Markdown as its body, the template's category, `template_id` set. */
export function instantiateTemplate(
  svc: DocumentServices,
  actor: DocumentActor,
  template: TemplateRow,
  input: { title?: string; variables: Record<string, VariableValue>; context?: ContextRef | null },
): Promise<DocumentRow> {
  const { content } = renderTemplate(template, input.variables);
  return createDocument(svc, actor, {
    title: input.title ?? template.name,
    category: template.category,
    content,
    context: input.context,
    templateId: template.id,
  }).catch((err: unknown) => {
    if (err instanceof DocumentTooLargeError) {
      throw new DocumentTooLargeError(err.bytes, err.limit, `The rendered document would be about ${err.bytes} bytes encoded, above the limit of ${err.limit} bytes (DOCUMENT_MAX_BYTES)`);
    }
    throw err;
  });
}
