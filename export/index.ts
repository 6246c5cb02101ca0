// Export: a document as Markdown, HTML, plain text, Word, JSON (formats.ts) and PDF through a
// pooled, sandboxed headless Chromium (pdf.ts); the routes read bodies through the document store.
import type { Area } from '../src/context';
import { DOCUMENTS_SCOPE } from '../src/documents/policy';
import { exportRouter } from './routes';

export const exportArea: Area = { router: exportRouter, scope: DOCUMENTS_SCOPE };
