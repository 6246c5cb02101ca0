// Documents: metadata, sharing, contexts, favorites, versions, diffs and full-text search.
export { documentsRouter } from './routes';
