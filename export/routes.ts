// Export REST: GET /api/documents/{id}/export?format= (markdown, html, txt, docx, json) and
// GET /api/documents/{id}/export/pdf, each optionally of a named version (?version_id=). Whoever may
// read the document may export it; the documents policy decides (404 to anyone without a grant).
import { z } from '@hono/zod-openapi';
import { documentAccess } from '../src/documents/access';
import { authorizeDocument } from '../src/documents/policy';
import { AppError } from '../src/http/errors';
import { type ApiTag, authedRoute, errorResponses, idParams, newRouter, uuid } from '../src/http/openapi';
import { contentDisposition } from './disposition';
import { exportFormats, formatInfo } from './formats';
import { INSTALL_HINT } from './pdf';
import { exportSource } from './source';
import { renderFile, renderPage } from './render';

const tags: [ApiTag] = ['Export'];

const versionQuery = {
  version_id: uuid({ message: 'version_id must be a UUID' })
    .optional()
    .openapi({ description: 'A named version to export instead of the current body' }),
};

const exportQuery = z.object({
  format: z
    .enum(exportFormats, { message: `format must be one of: ${exportFormats.join(', ')}` })
    .openapi({ description: `One of ${exportFormats.join(', ')}` }),
  ...versionQuery,
});

const fileHeaders = (title: string, info: { contentType: string; extension: string }) => ({
  'Content-Type': info.contentType,
  'Content-Disposition': contentDisposition(title, info.extension),
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'private, no-store',
});

const router = newRouter();

export const exportRouter = router
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/export/pdf',
      operationId: 'exportDocumentPdf',
      tags,
      summary: 'The document as a PDF (readers of the document)',
      description:
        'Rendered by a sandboxed headless Chromium: Markdown with raw HTML disabled, JavaScript off, nothing fetched ' +
        '(images and stylesheets at addresses are left out), the title in each page header and page numbers in the ' +
        'footer. 422 past PDF_MAX_PAGES pages; 503 when Chromium is not installed (see /api/system/features), or with ' +
        'Retry-After when too many exports are waiting or one runs past PDF_TIMEOUT_MS.',
      request: { params: idParams, query: z.object(versionQuery) },
      responses: {
        200: {
          description: 'The PDF',
          content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } },
        },
        ...errorResponses(404, 409, 422, 503),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { version_id } = c.req.valid('query');
      const { deps } = c.var;
      const { document } = authorizeDocument('read', documentAccess(deps.db, c.var.actor, id));
      if (!deps.pdf?.available()) throw new AppError('service_unavailable', INSTALL_HINT);
      const source = exportSource(deps.db, deps.documents, document, version_id);
      const pdf = await deps.pdf.renderMarkdown(source.title, source.markdown, (title, markdown) => renderPage(deps.workers, title, markdown));
      return c.body(pdf as Uint8Array<ArrayBuffer>, 200, fileHeaders(source.title, formatInfo.pdf));
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/documents/{id}/export',
      operationId: 'exportDocument',
      tags,
      summary: 'The document as Markdown, HTML, plain text, Word or JSON (readers of the document)',
      description:
        '`markdown`: the body as it is (text/markdown). `html`: a complete standalone page with a print stylesheet ' +
        '(raw HTML in the Markdown is shown as text). `txt`: the text without Markdown marks. `docx`: a Word document ' +
        'with headings, lists, emphasis, code, links and tables. `json`: metadata and the Markdown. Each comes as an ' +
        'attachment named after the title (RFC 6266, with `filename*` for non-ASCII titles). An unknown format is 400. ' +
        'Large documents are rendered in a worker thread; 503 with Retry-After when too much such work is waiting.',
      request: { params: idParams, query: exportQuery },
      responses: {
        200: {
          description: 'The file',
          content: {
            'text/markdown': { schema: z.string() },
            'text/html': { schema: z.string() },
            'text/plain': { schema: z.string() },
            [formatInfo.docx.contentType]: { schema: z.string().openapi({ format: 'binary' }) },
            'application/json': {
              schema: z
                .object({
                  id: uuid(),
                  title: z.string(),
                  category: z.string().nullable(),
                  created_by: uuid(),
                  created_at: z.string(),
                  updated_at: z.string(),
                  version: z.object({ id: uuid(), name: z.string(), created_at: z.string() }).nullable(),
                  format: z.literal('markdown'),
                  content: z.string(),
                })
                .openapi('DocumentExport'),
            },
          },
        },
        ...errorResponses(404, 409, 503),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { format, version_id } = c.req.valid('query');
      const { deps } = c.var;
      const { document } = authorizeDocument('read', documentAccess(deps.db, c.var.actor, id));
      const file = await renderFile(deps.workers, exportSource(deps.db, deps.documents, document, version_id), format);
      return c.body(file.body as string, 200, fileHeaders(document.title, file));
    },
  );
