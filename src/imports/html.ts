// An imported HTML page (web content, a discussion's text) → Markdown for a document: cleaned with
// sanitize-html (scripts, styles, frames, forms and event handlers removed, and counted for the
// report), its links into the package rewritten to placeholders that the import replaces with the
// documents and course files they became, then turned into Markdown by turndown. Pure: worker threads.
import sanitizeHtml from 'sanitize-html';
import TurndownService from 'turndown';
import { dirOf, packagePath } from './manifest';
import { PLACEHOLDER_SCHEME, placeholder } from './text';

export interface ConvertedPage {
  title: string | undefined;
  markdown: string;
  scriptsRemoved: number;
  handlersRemoved: number;
  /** Paths in the package that the page links to or shows (pages and files). */
  references: string[];
}

/** How a path of the package will be imported. */
export type PathKind = (path: string) => 'page' | 'file' | undefined;

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
// List items as people write them (`- item`, `1. item`), not turndown's `-   item`: an exported
// document read back gives the Markdown it was written in.
turndown.addRule('listItem', {
  filter: 'li',
  replacement: (content, node) => {
    const parent = node.parentNode as { nodeName: string; getAttribute(name: string): string | null; children: ArrayLike<unknown> } | null;
    let prefix = '- ';
    if (parent?.nodeName === 'OL') {
      const start = Number(parent.getAttribute('start') ?? '1') || 1;
      prefix = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
    }
    const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/gm, `\n${' '.repeat(prefix.length)}`);
    return prefix + body + (node.nextSibling && !/\n$/.test(body) ? '\n' : '');
  },
});

const ALLOWED_TAGS = [
  ...sanitizeHtml.defaults.allowedTags.filter((tag) => tag !== 'style'),
  'img',
  'h1',
  'h2',
  'del',
  's',
  'ins',
  'sub',
  'sup',
];

/** Where a link of the page points in the package: $IMS-CC-FILEBASE$ and Canvas's references resolved, then relative to the page. */
function resolveLink(href: string, pageDir: string, kindOf: PathKind): string | undefined {
  const candidates: string[] = [];
  const fileBase = /^(?:\$IMS-CC-FILEBASE\$|%24IMS-CC-FILEBASE%24|\$IMS_CC_FILEBASE\$)\/?(.*)$/i.exec(href);
  const wiki = /^(?:\$WIKI_REFERENCE\$|%24WIKI_REFERENCE%24)\/pages\/([^?#]+)/.exec(href);
  if (fileBase) {
    const rest = fileBase[1]!;
    candidates.push(`${pageDir}${rest}`, rest, `web_resources/${rest}`);
  } else if (wiki) {
    candidates.push(`wiki_content/${wiki[1]}.html`);
  } else {
    candidates.push(`${pageDir}${href}`);
  }
  for (const candidate of candidates) {
    const path = packagePath('', candidate);
    if (path && kindOf(path)) return path;
  }
  return undefined;
}

/**
 * Cleans and converts one page. `kindOf` says what each path of the package becomes; links to those
 * become placeholders, addresses stay, and anything else (a link to a file the package lacks) is
 * kept as text.
 */
export function convertHtml(html: string, pagePath: string, kindOf: PathKind): ConvertedPage {
  let scriptsRemoved = 0;
  let handlersRemoved = 0;
  const references = new Set<string>();
  const pageDir = dirOf(pagePath);
  const rewrite = (value: string | undefined): string | undefined => {
    if (!value) return value;
    const trimmed = value.trim();
    if (/^(?:https?:|mailto:|tel:|#)/i.test(trimmed)) return trimmed;
    if (/^\s*(?:javascript|vbscript|data):/i.test(trimmed) && !/^data:image\//i.test(trimmed)) return undefined;
    const path = resolveLink(trimmed, pageDir, kindOf);
    if (!path) return undefined;
    references.add(path);
    return placeholder(kindOf(path)!, path);
  };
  let title: string | undefined;
  const titleMatch = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (titleMatch) title = sanitizeHtml(titleMatch[1]!, { allowedTags: [], allowedAttributes: {} }).trim() || undefined;

  const clean = sanitizeHtml(html, {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title', 'width', 'height'], th: ['colspan', 'rowspan'], td: ['colspan', 'rowspan'] },
    allowedSchemes: ['http', 'https', 'mailto', 'tel', PLACEHOLDER_SCHEME],
    allowedSchemesByTag: { img: ['http', 'https', 'data', PLACEHOLDER_SCHEME] },
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'head'],
    onOpenTag: (name, attribs) => {
      if (name === 'script') scriptsRemoved += 1;
      for (const [key, value] of Object.entries(attribs)) {
        if (/^on/i.test(key)) handlersRemoved += 1;
        else if ((key === 'href' || key === 'src') && /^\s*(?:javascript|vbscript):/i.test(value)) handlersRemoved += 1;
      }
    },
    transformTags: {
      a: (tagName, attribs) => {
        const href = rewrite(attribs.href);
        const { href: _drop, ...rest } = attribs;
        return { tagName, attribs: href ? { ...rest, href } : rest };
      },
      img: (tagName, attribs) => {
        const src = rewrite(attribs.src);
        const { src: _drop, ...rest } = attribs;
        return { tagName, attribs: src ? { ...rest, src } : rest };
      },
    },
  });
  const markdown = turndown.turndown(clean).trim();
  return { title, markdown: markdown ? `${markdown}\n` : '', scriptsRemoved, handlersRemoved, references: [...references] };
}
