// Document templates of a tenant: a Markdown body with logic-less (mustache) placeholders and the
// variables it declares. Documents made from one keep its id (`documents.template_id`).
import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { tenants, users } from './core';

/** A declared placeholder of a template's body. */
export interface TemplateVariable {
  name: string;
  label?: string | null;
  required?: boolean;
  default?: string | null;
}

export const documentTemplates = sqliteTable(
  'document_templates',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    category: text('category'),
    description: text('description'),
    body: text('body').notNull(),
    /** The declared variables, a JSON array of TemplateVariable in their given order. */
    variables: text('variables', { mode: 'json' }).$type<TemplateVariable[]>().notNull(),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    index('document_templates_tenant_category_idx').on(t.tenantId, t.category),
    index('document_templates_created_by_idx').on(t.createdBy),
  ],
);
