// Documents: metadata, sharing, contexts, favorites, versions, diffs and full-text search.
import type { Area } from '../context';
import { permissions } from './policy';
import { documentsRouter } from './routes';

export const documentsArea: Area = { router: documentsRouter, permissions, scope: { name: 'documents', description: 'documents: bodies, versions, sharing, contexts, favorites, exports' } };
