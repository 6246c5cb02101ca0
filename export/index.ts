// Export: a document as Markdown, HTML, plain text, Word, JSON (formats.ts) and PDF through a
// pooled, sandboxed headless Chromium (pdf.ts); the routes read bodies through the document store.
import type { Area } from '../src/context';
import { exportRouter } from './routes';

export const exportArea: Area = { router: exportRouter, scope: { name: 'documents', description: 'documents: bodies, versions, sharing, contexts, favorites, exports' } };
