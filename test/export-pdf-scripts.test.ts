// PDFs print every script: Chinese, Japanese, Korean, Arabic and Hebrew (right to left),
// Devanagari, Cyrillic, Greek and emoji come back from the PDF as text, drawn with fonts that have
// their glyphs (the fonts embedded in the PDF name them), never the missing-glyph box; the features
// say such fonts are installed; an image that is not fetched shows its alt text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { requireChromium } from './helpers/chromium';
import { createDoc } from './helpers/documents';
import { pdfText } from './helpers/files';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  requireChromium();
  t = await makeTestApp();
  owner = await t.newUser();
});
afterAll(() => t?.close());

/** Each script's line, and the font family (as embedded: `ABCDEF+NotoSansCJKsc-Regular`) that must draw it. */
const SAMPLES: ReadonlyArray<readonly [script: string, text: string, font: RegExp]> = [
  ['chinese', '光合作用发生在叶绿体中', /NotoSansCJK|NotoSerifCJK/],
  ['japanese', 'ひらがなとカタカナの文章', /NotoSansCJK|NotoSerifCJK/],
  ['korean', '한국어 문장입니다', /NotoSansCJK|NotoSerifCJK/],
  // DejaVu Sans, first in the stylesheet's fonts, has Arabic and Hebrew letters.
  ['arabic', 'مرحبا بالعالم', /NotoSansArabic|NotoNaskhArabic|DejaVuSans/],
  ['hebrew', 'שלום עולם', /NotoSansHebrew|NotoSerifHebrew|DejaVuSans/],
  ['devanagari', 'नमस्ते दुनिया', /NotoSansDevanagari|NotoSerifDevanagari/],
  ['cyrillic', 'Привет, мир', /DejaVuSans|NotoSans-/],
  ['greek', 'Γειά σου κόσμε', /DejaVuSans|NotoSans-/],
  ['emoji', '🧑‍🎓📚', /NotoColorEmoji/],
];

/** The names of the fonts a PDF embeds, from their descriptors (Chromium writes them uncompressed). */
const embeddedFonts = (pdf: Uint8Array): string[] =>
  [...new Set([...Buffer.from(pdf).toString('latin1').matchAll(/\/FontName\s*\/(?:[A-Z]{6}\+)?([^\s/<>\[\]()]+)/g)].map((m) => m[1]!))];

/**
 * The letters of a text, as a PDF's text layer gives them back: compatibility forms folded (a CJK
 * glyph maps back to its Kangxi radical, an Arabic one to its presentation form), marks, joiners
 * and spaces dropped (a Devanagari vowel sign is drawn before the consonant it follows).
 */
const letters = (text: string): string => text.normalize('NFKC').replace(/[\p{M}\p{Cf}\p{Cc}\s]/gu, '');

async function exportPdf(markdown: string) {
  const doc = await createDoc(t, owner, { title: 'Scripts', content: markdown });
  const res = await t.app.request(`/api/documents/${doc.id}/export/pdf`, { headers: { Authorization: `Bearer ${owner.token}` } });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

describe('PDF text in every script', () => {
  it('GET /api/system/features reports the fonts installed', async () => {
    const res = await t.call('GET', '/api/system/features', { as: owner });
    expect(res.status).toBe(200);
    expect(res.body.features).toMatchObject({ pdf_export: true, pdf_fonts: true });
  });

  it('reads back each script from the PDF, drawn with a font that has its glyphs', async () => {
    const pdf = await exportPdf(SAMPLES.map(([, text]) => `${text}\n`).join('\n'));
    const { text } = await pdfText(pdf);
    const fonts = embeddedFonts(pdf);
    const read = letters(text);
    for (const [script, sample, font] of SAMPLES) {
      // Right-to-left lines come back in the order they are drawn.
      const rtl = script === 'arabic' || script === 'hebrew';
      const found = read.includes(letters(sample)) || (rtl && read.includes([...letters(sample)].reverse().join('')));
      expect(found, `${script}: ${read}`).toBe(true);
      expect(fonts.some((name) => font.test(name)), `${script}: ${fonts.join(', ')}`).toBe(true);
    }
  });

  it('shows an image that is not fetched as its alt text', async () => {
    const pdf = await exportPdf('Before ![A diagram of the water cycle](https://example.org/cycle.png) after\n');
    const { text } = await pdfText(pdf);
    expect(text).toContain('A diagram of the water cycle');
    // No image drawn at all (a broken-image icon is one).
    expect(Buffer.from(pdf).toString('latin1')).not.toMatch(/\/Subtype\s*\/Image/);
  });

  it('the HTML export shows it as its alt text too; a data: image stays an image', async () => {
    const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const doc = await createDoc(t, owner, { title: 'Images', content: `![Outside <b>alt</b>](https://example.org/x.png)\n\n![Inline](${pixel})\n` });
    const res = await t.call('GET', `/api/documents/${doc.id}/export?format=html`, { as: owner });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<span class="image-alt" title="https://example.org/x.png">Outside &lt;b&gt;alt&lt;/b&gt;</span>');
    expect(res.text).not.toContain('src="https://example.org');
    expect(res.text).toContain(`<img src="${pixel}" alt="Inline">`);
  });
});
