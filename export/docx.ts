// Markdown → Word (.docx) through the `docx` library, built from markdown-it's tokens: headings,
// paragraphs, bold/italic/struck runs, inline and block code, hyperlinks, bullet and numbered
// lists (nested), block quotes, rules and tables become Word's own structures and styles.
// (docx/html's HTML converter gives the same from the HTML, at ten times the cost: the tokens are
// already structured.) Nothing is downloaded: an image is kept as its alt text.
import {
  AlignmentType,
  Document,
  ExternalHyperlink,
  Footer,
  HeadingLevel,
  LevelFormat,
  Packer,
  PageNumber,
  Paragraph,
  ShadingType,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
  BorderStyle,
  type ParagraphChild,
} from 'docx';
import { parseMarkdown, type Token } from './markdown';

const headings = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4, HeadingLevel.HEADING_5, HeadingLevel.HEADING_6];
const MONO = 'Courier New';
const NUMBERED = 'numbered';

interface RunStyle {
  bold?: boolean;
  italics?: boolean;
  strike?: boolean;
}

/** Runs of one inline token's children, with emphasis, code and links. */
function runsOf(children: Token[] | null): ParagraphChild[] {
  const out: ParagraphChild[] = [];
  const style: RunStyle = {};
  let link: { href: string; runs: TextRun[] } | null = null;
  const push = (run: TextRun) => (link ? link.runs.push(run) : out.push(run));
  for (const t of children ?? []) {
    switch (t.type) {
      case 'text':
        push(new TextRun({ text: t.content, ...style, ...(link ? { style: 'Hyperlink' } : {}) }));
        break;
      case 'code_inline':
        push(new TextRun({ text: t.content, ...style, font: MONO, shading: { type: ShadingType.CLEAR, fill: 'F2F2F2', color: 'auto' } }));
        break;
      case 'softbreak':
        push(new TextRun({ text: ' ' }));
        break;
      case 'hardbreak':
        push(new TextRun({ break: 1 }));
        break;
      case 'strong_open':
        style.bold = true;
        break;
      case 'strong_close':
        style.bold = false;
        break;
      case 'em_open':
        style.italics = true;
        break;
      case 'em_close':
        style.italics = false;
        break;
      case 's_open':
        style.strike = true;
        break;
      case 's_close':
        style.strike = false;
        break;
      case 'link_open':
        link = { href: String(t.attrGet('href') ?? ''), runs: [] };
        break;
      case 'link_close':
        if (link) out.push(new ExternalHyperlink({ link: link.href, children: link.runs }));
        link = null;
        break;
      case 'image':
        push(new TextRun({ text: `[${t.content || 'image'}]`, ...style }));
        break;
    }
  }
  return out;
}

/** The Word content of a Markdown body. */
function blocksOf(tokens: Token[]): (Paragraph | Table)[] {
  const out: (Paragraph | Table)[] = [];
  const lists: { ordered: boolean; instance: number }[] = [];
  let listInstances = 0;
  let quoteDepth = 0;
  let heading: number | null = null;
  // Within a list item, the first paragraph carries the bullet; later ones are indented only.
  let itemOpened = false;
  let table: { rows: TableRow[]; cells: TableCell[]; header: boolean } | null = null;
  let cellRuns: ParagraphChild[] | null = null;

  const paragraph = (children: ParagraphChild[]) => {
    const list = lists[lists.length - 1];
    const level = Math.min(lists.length - 1, 8);
    if (heading !== null) return new Paragraph({ heading: headings[heading - 1], children });
    const indent = quoteDepth > 0 ? { indent: { left: 567 * quoteDepth } } : {};
    if (list && itemOpened) {
      itemOpened = false;
      return list.ordered
        ? new Paragraph({ children, numbering: { reference: NUMBERED, level, instance: list.instance } })
        : new Paragraph({ children, bullet: { level } });
    }
    if (list) return new Paragraph({ children, indent: { left: 720 * (level + 1) } });
    return new Paragraph({ children, ...indent, ...(quoteDepth > 0 ? { style: 'Quote' } : {}) });
  };

  for (const t of tokens) {
    switch (t.type) {
      case 'heading_open':
        heading = Number(t.tag.slice(1));
        break;
      case 'heading_close':
        heading = null;
        break;
      case 'inline':
        if (cellRuns) cellRuns.push(...runsOf(t.children));
        else out.push(paragraph(runsOf(t.children)));
        break;
      case 'bullet_list_open':
        lists.push({ ordered: false, instance: 0 });
        break;
      case 'ordered_list_open':
        lists.push({ ordered: true, instance: ++listInstances });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'list_item_open':
        itemOpened = true;
        break;
      case 'blockquote_open':
        quoteDepth += 1;
        break;
      case 'blockquote_close':
        quoteDepth -= 1;
        break;
      case 'fence':
      case 'code_block': {
        const lines = t.content.replace(/\n$/, '').split('\n');
        out.push(
          new Paragraph({
            shading: { type: ShadingType.CLEAR, fill: 'F2F2F2', color: 'auto' },
            children: lines.map((line, i) => new TextRun({ text: line, font: MONO, ...(i > 0 ? { break: 1 } : {}) })),
          }),
        );
        break;
      }
      case 'hr':
        out.push(new Paragraph({ border: { bottom: { style: BorderStyle.SINGLE, size: 6, color: '999999', space: 1 } }, children: [] }));
        break;
      case 'table_open':
        table = { rows: [], cells: [], header: false };
        break;
      case 'thead_open':
        if (table) table.header = true;
        break;
      case 'tbody_open':
        if (table) table.header = false;
        break;
      case 'th_open':
      case 'td_open':
        cellRuns = [];
        break;
      case 'th_close':
      case 'td_close':
        if (table && cellRuns) {
          const bold = t.type === 'th_close';
          const align = /text-align:(\w+)/.exec(String(t.attrGet('style') ?? ''))?.[1];
          table.cells.push(
            new TableCell({
              children: [
                new Paragraph({
                  alignment: align === 'center' ? AlignmentType.CENTER : align === 'right' ? AlignmentType.RIGHT : AlignmentType.LEFT,
                  children: cellRuns,
                  ...(bold ? { style: 'Strong' } : {}),
                }),
              ],
            }),
          );
        }
        cellRuns = null;
        break;
      case 'tr_close':
        if (table) {
          table.rows.push(new TableRow({ children: table.cells, tableHeader: table.header }));
          table.cells = [];
        }
        break;
      case 'table_close':
        if (table) out.push(new Table({ rows: table.rows, width: { size: 100, type: WidthType.PERCENTAGE } }));
        table = null;
        break;
    }
  }
  return out;
}

const numberedLevels = Array.from({ length: 9 }, (_, level) => ({
  level,
  format: LevelFormat.DECIMAL,
  text: `%${level + 1}.`,
  alignment: AlignmentType.START,
  style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
}));

/** The title heads the first page; page numbers go in the footer. */
export async function markdownToDocx(title: string, markdown: string): Promise<Uint8Array> {
  const doc = new Document({
    title,
    creator: 'lms-server',
    numbering: { config: [{ reference: NUMBERED, levels: numberedLevels }] },
    styles: { paragraphStyles: [{ id: 'Strong', name: 'Strong', run: { bold: true } }] },
    sections: [
      {
        footers: {
          default: new Footer({
            children: [
              new Paragraph({
                alignment: AlignmentType.CENTER,
                children: [new TextRun({ children: [PageNumber.CURRENT, ' / ', PageNumber.TOTAL_PAGES] })],
              }),
            ],
          }),
        },
        children: [new Paragraph({ text: title, heading: HeadingLevel.TITLE }), ...blocksOf(parseMarkdown(markdown))],
      },
    ],
  });
  return Packer.toBuffer(doc);
}
