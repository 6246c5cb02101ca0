// Documents: metadata, sharing, contexts, favorites, versions, diffs and full-text search.
import type { Area } from '../context';
import { DOCUMENTS_SCOPE, permissions } from './policy';
import { documentsRouter } from './routes';

export const documentsArea: Area = { router: documentsRouter, permissions, scope: DOCUMENTS_SCOPE };
