// Markdown → HTML and plain text, for every export and for template previews. One markdown-it
// with raw HTML disabled: a `<script>`, `<iframe>` or `<link>` typed into a document is text, never
// markup, and `javascript:` links are refused by markdown-it's link check.
import MarkdownIt from 'markdown-it';
import { escapeHtml } from '../src/lib/html';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

export type Token = ReturnType<typeof md.parse>[number];

/** markdown-it's block tokens of a body (the Word export walks them). */
export const parseMarkdown = (markdown: string): Token[] => md.parse(markdown, {});

export interface HtmlOptions {
  /**
   * An image that is not a `data:` URI shown as its alt text: the exported pages load nothing from
   * elsewhere (their Content-Security-Policy, and the PDF renderer's refusals), and a broken-image
   * icon would say less than the alt text does.
   */
  outsideImagesAsText?: boolean;
}

const renderImage = md.renderer.rules.image!;
// markdown-it hands the render call's env to every rule.
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet('src') ?? '');
  if (!(env as HtmlOptions | undefined)?.outsideImagesAsText || src.startsWith('data:')) return renderImage(tokens, idx, options, env, self);
  const alt = self.renderInlineAsText(token.children ?? [], options, env).trim();
  return `<span class="image-alt" title="${escapeHtml(src)}">${escapeHtml(alt || 'image')}</span>`;
};

/** The body's HTML fragment. */
export const markdownToHtml = (markdown: string, options: HtmlOptions = {}): string => md.render(markdown, { ...options });

/** The complete page of a document, as exported to HTML and printed to PDF. */
export const documentPage = (title: string, markdown: string): string =>
  standalonePage(title, markdownToHtml(markdown, { outsideImagesAsText: true }));

export { escapeHtml };

/** Shared by the HTML export and the PDF: readable on screen, paginated cleanly on paper. */
const stylesheet = `
:root { color-scheme: light; }
body {
  font: 11pt/1.5 "DejaVu Sans", "Liberation Sans", Arial, "Noto Sans", "Noto Sans CJK SC", "Noto Sans Arabic", "Noto Sans Hebrew",
    "Noto Sans Devanagari", "Noto Color Emoji", sans-serif;
  color: #1a1a1a; max-width: 46rem; margin: 2rem auto; padding: 0 1rem;
}
/* Each paragraph takes its direction from its own text: Arabic and Hebrew ones read right to left. */
p, li, h1, h2, h3, h4, h5, h6, blockquote, th, td { unicode-bidi: plaintext; text-align: start; }
.image-alt { border: 1px dashed #999; padding: 0 0.3em; color: #555; font-style: italic; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.4em 0 0.5em; }
pre, code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 0.92em; }
pre { background: #f5f5f5; padding: 0.75em; overflow-x: auto; white-space: pre-wrap; word-break: break-word; }
code { background: #f5f5f5; padding: 0 0.2em; }
pre code { background: none; padding: 0; }
blockquote { margin: 0 0 1em; padding-left: 1em; border-left: 3px solid #ccc; color: #444; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.6em; vertical-align: top; }
img { max-width: 100%; }
a { color: #0645ad; }
@media print {
  @page { size: A4; margin: 20mm 16mm; }
  body { max-width: none; margin: 0; padding: 0; font-size: 10.5pt; }
  a { color: inherit; text-decoration: underline; }
  h1, h2, h3, h4, h5, h6 { break-after: avoid; page-break-after: avoid; }
  pre, blockquote, table, img, tr { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
}
`;

/**
 * A complete standalone page. Its Content-Security-Policy lets nothing load but inline styles and
 * `data:` images, so even a browser opening the file fetches nothing from an address in the text.
 */
export function standalonePage(title: string, bodyHtml: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${stylesheet}</style>
</head>
<body>
<article>
${bodyHtml}</article>
</body>
</html>
`;
}

/** The text a reader sees, without Markdown's marks: headings, paragraphs, list items, code, table rows. */
export function markdownToText(markdown: string): string {
  const tokens = md.parse(markdown, {});
  const out: string[] = [];
  const lists: { ordered: boolean; next: number }[] = [];
  let line = '';
  let cellIndex = 0;
  const endLine = () => {
    out.push(line.trimEnd());
    line = '';
  };
  const inline = (children: Token[] | null): string =>
    (children ?? [])
      .map((t) => {
        if (t.type === 'text' || t.type === 'code_inline') return t.content;
        if (t.type === 'softbreak' || t.type === 'hardbreak') return '\n';
        if (t.type === 'image') return inline(t.children);
        return '';
      })
      .join('');
  for (const token of tokens) {
    switch (token.type) {
      case 'bullet_list_open':
        lists.push({ ordered: false, next: 0 });
        break;
      case 'ordered_list_open':
        lists.push({ ordered: true, next: Number(token.attrGet('start') ?? 1) });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        if (lists.length === 0) out.push('');
        break;
      case 'list_item_open': {
        const list = lists[lists.length - 1]!;
        line = `${'  '.repeat(lists.length - 1)}${list.ordered ? `${list.next++}. ` : '- '}`;
        break;
      }
      case 'inline':
        line += inline(token.children);
        break;
      case 'paragraph_close':
        endLine();
        if (lists.length === 0) out.push('');
        break;
      case 'heading_close':
        endLine();
        out.push('');
        break;
      case 'fence':
      case 'code_block':
        if (line) endLine();
        out.push(token.content.replace(/\n$/, ''), '');
        break;
      case 'hr':
        out.push('---', '');
        break;
      case 'tr_open':
        cellIndex = 0;
        break;
      case 'th_open':
      case 'td_open':
        if (cellIndex++ > 0) line += '\t';
        break;
      case 'tr_close':
        endLine();
        break;
      case 'table_close':
        out.push('');
        break;
    }
  }
  if (line) endLine();
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`;
}
