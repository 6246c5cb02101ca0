// The small pieces of an import that the event loop shares with the worker-thread tasks
// (tasks.ts, html.ts), kept apart from them: the server loads sanitize-html, turndown and the XML
// parser only in the threads that run an import, not at start.

/** The platform our own export names in the extensions of the LTI links it writes (export.ts), and looks for on import. */
export const EXPORT_PLATFORM = 'lms-server';

const TITLE_MAX = 200;

/** A title fit for a single-line field: no control characters, at most 200 characters, never empty. */
export function cleanTitle(value: string | undefined, fallback: string): string {
  const cleaned = (value ?? '')
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/[\ud800-\udfff]/g, (ch, at: number, all: string) => {
      const code = ch.charCodeAt(0);
      const next = all.charCodeAt(at + 1);
      const prev = all.charCodeAt(at - 1);
      const paired = code < 0xdc00 ? next >= 0xdc00 && next <= 0xdfff : prev >= 0xd800 && prev < 0xdc00;
      return paired ? ch : '';
    })
    .replace(/\s+/g, ' ')
    .trim();
  const text = cleaned || fallback.trim() || 'Untitled';
  return [...text].slice(0, TITLE_MAX).join('').trim();
}

/** A link to something of the package, until the import knows what it became: `lms-import:page:<path>` or `lms-import:file:<path>`. */
export const PLACEHOLDER_SCHEME = 'lms-import';
export const placeholder = (kind: 'page' | 'file', path: string) =>
  `${PLACEHOLDER_SCHEME}:${kind}:${encodeURIComponent(path).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)}`;
/** A placeholder in Markdown: its path is percent-encoded, parentheses included, so it never swallows the link's closing one. */
export const PLACEHOLDER_PATTERN = /lms-import:(page|file):([A-Za-z0-9%._~-]+)/g;
