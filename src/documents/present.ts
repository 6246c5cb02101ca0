// Document rows → public JSON (snake_case). Yjs states never leave as bytes.
import type { DocumentRole } from '../../db/schema';
import type { ChangeRow } from '../../collab/store';
import type { Suggestion } from './search';
import type { AvailableContext, LinkedContext } from './contexts';
import type { DocumentRow } from './types';
import type { Collaborator } from './sharing';
import type { VersionSummary } from './versions';

export const presentDocument = (row: DocumentRow, viewer: { role: DocumentRole; favorite: boolean }) => ({
  id: row.id,
  title: row.title,
  category: row.category,
  created_by: row.createdBy,
  forked_from: row.forkedFrom,
  template_id: row.templateId,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  trashed_at: row.trashedAt,
  role: viewer.role,
  favorite: viewer.favorite,
});

export const presentCollaborator = (c: Collaborator) => ({
  principal_type: c.principalType,
  principal_id: c.principalId,
  name: c.name,
  email: c.email,
  role: c.role,
  granted_by: c.grantedBy,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const presentAvailableContext = (c: AvailableContext) => ({
  context_type: c.type,
  context_id: c.id,
  title: c.title,
  course_role: c.courseRole,
});

export const presentLinkedContext = (c: LinkedContext) => ({
  context_type: c.type,
  context_id: c.id,
  title: c.title,
  course_id: c.courseId,
  created_by: c.createdBy,
  created_at: c.createdAt,
});

export const presentChange = (c: ChangeRow) => ({ id: c.id, user_id: c.userId, created_at: c.createdAt, bytes: c.bytes });

export const presentVersion = (v: VersionSummary) => ({
  id: v.id,
  document_id: v.documentId,
  name: v.name,
  created_by: v.createdBy,
  created_at: v.createdAt,
  bytes: v.bytes,
});

export const presentSuggestion = (s: Suggestion) => ({
  id: s.id,
  title: s.title,
  category: s.category,
  updated_at: s.updatedAt,
  snippet: s.snippet,
});
