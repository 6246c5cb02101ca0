// Template rows → public JSON (snake_case).
import type { TemplateRow } from './service';

export const presentTemplate = (t: TemplateRow) => ({
  id: t.id,
  name: t.name,
  category: t.category,
  description: t.description,
  body: t.body,
  variables: t.variables.map((v) => ({ name: v.name, label: v.label ?? null, required: v.required ?? false, default: v.default ?? null })),
  created_by: t.createdBy,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});
