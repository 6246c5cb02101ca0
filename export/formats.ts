// A document (its title, Markdown and metadata) in each download format but PDF (pdf.ts): the
// Markdown as it is, a standalone HTML page, plain text, a Word document and JSON. The HTML of
// every format comes from markdown-it with raw HTML disabled.
import { documentPage, markdownToText } from './markdown';

export const exportFormats = ['markdown', 'html', 'txt', 'docx', 'json'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export interface ExportSource {
  id: string;
  title: string;
  category: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  markdown: string;
  /** Set when a named version is exported rather than the current body. */
  version: { id: string; name: string; createdAt: string } | null;
}

export interface ExportFile {
  body: Uint8Array | string;
  contentType: string;
  extension: string;
}

export const formatInfo: Record<ExportFormat | 'pdf', { contentType: string; extension: string }> = {
  markdown: { contentType: 'text/markdown; charset=utf-8', extension: 'md' },
  html: { contentType: 'text/html; charset=utf-8', extension: 'html' },
  txt: { contentType: 'text/plain; charset=utf-8', extension: 'txt' },
  docx: { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', extension: 'docx' },
  json: { contentType: 'application/json; charset=utf-8', extension: 'json' },
  pdf: { contentType: 'application/pdf', extension: 'pdf' },
};

export async function exportDocument(source: ExportSource, format: ExportFormat): Promise<ExportFile> {
  const info = formatInfo[format];
  switch (format) {
    case 'markdown':
      return { ...info, body: source.markdown };
    case 'html':
      return { ...info, body: documentPage(source.title, source.markdown) };
    case 'txt':
      return { ...info, body: markdownToText(source.markdown) };
    case 'docx': {
      // Loaded on the first Word export, as the PDF path loads Chromium's driver: the docx library
      // is some 3 MiB of heap that a server which never exports Word would carry for nothing.
      const { markdownToDocx } = await import('./docx');
      return { ...info, body: await markdownToDocx(source.title, source.markdown) };
    }
    case 'json':
      return {
        ...info,
        body: JSON.stringify({
          id: source.id,
          title: source.title,
          category: source.category,
          created_by: source.createdBy,
          created_at: source.createdAt,
          updated_at: source.updatedAt,
          version: source.version ? { id: source.version.id, name: source.version.name, created_at: source.version.createdAt } : null,
          format: 'markdown',
          content: source.markdown,
        }),
      };
  }
}

