// Export in markdown, html, txt, docx and json: each file opened and read, not just its status;
// headers (type, RFC 6266 file names), named versions, unknown formats, and who may export.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { markdownToDocx } from '../export/docx';
import { formatInfo } from '../export/formats';
import { markdownToHtml, markdownToText, standalonePage } from '../export/markdown';
import { WorkersBusyError } from '../src/lib/worker-pool';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { createDoc, liveAppend, share } from './helpers/documents';
import { docxText } from './helpers/files';

let t: TestApp;
let owner: TestUser;
let viewer: TestUser;
let outsider: TestUser;

beforeAll(async () => {
  t = await makeTestApp();
  owner = await t.newUser();
  viewer = await t.newUser();
  outsider = await t.newUser();
});
afterAll(() => t.close());

const RICH = [
  '# Lecture notes',
  '',
  'Some *emphasis*, **strong words** and `inline code`, with a [link to Yjs](https://yjs.dev/).',
  '',
  '## Lists',
  '',
  '- first bullet',
  '- second bullet',
  '  1. nested one',
  '  2. nested two',
  '',
  '```ts',
  'const answer = 42;',
  '```',
  '',
  '| Name | Score |',
  '|------|------:|',
  '| Ada  | 97    |',
  '',
  '<script>alert("owned")</script>',
  '',
].join('\n');

/** The raw answer of an export, its body as bytes. */
async function download(as: TestUser, path: string) {
  const res = await t.app.request(path, { headers: { Authorization: `Bearer ${as.token}` } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: Buffer.from(bytes).toString('utf8') };
}

describe('GET /api/documents/{id}/export?format=', () => {
  let docId: string;
  beforeAll(async () => {
    docId = (await createDoc(t, owner, { title: 'Lecture notes', category: 'notes', content: RICH })).id;
    await share(t, owner, docId, { user: viewer }, 'viewer');
  });

  it('markdown: the body as it is', async () => {
    const res = await download(viewer, `/api/documents/${docId}/export?format=markdown`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Lecture notes.md"');
    expect(res.text).toBe(RICH);
  });

  it('html: a complete standalone page with a print stylesheet; raw HTML is text', async () => {
    const res = await download(viewer, `/api/documents/${docId}/export?format=html`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Lecture notes.html"');
    expect(res.text).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
    expect(res.text).toContain('<title>Lecture notes</title>');
    expect(res.text).toContain('@media print');
    expect(res.text).toContain("Content-Security-Policy\" content=\"default-src 'none'");
    expect(res.text).toContain('<h1>Lecture notes</h1>');
    expect(res.text).toContain('<em>emphasis</em>');
    expect(res.text).toContain('<a href="https://yjs.dev/">link to Yjs</a>');
    expect(res.text).toContain('<table>');
    expect(res.text).not.toContain('<script>');
    expect(res.text).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    expect(res.text.trimEnd()).toMatch(/<\/html>$/);
  });

  it('txt: the words without Markdown marks', async () => {
    const res = await download(viewer, `/api/documents/${docId}/export?format=txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Lecture notes.txt"');
    expect(res.text).toContain('Lecture notes\n\nSome emphasis, strong words and inline code, with a link to Yjs.');
    expect(res.text).toContain('- first bullet\n- second bullet\n  1. nested one\n  2. nested two');
    expect(res.text).toContain('const answer = 42;');
    expect(res.text).toContain('Name\tScore\nAda\t97');
    expect(res.text).not.toMatch(/\*\*|##|```/);
  });

  it('docx: a Word document with headings, lists, emphasis, code, links and tables', async () => {
    const res = await download(viewer, `/api/documents/${docId}/export?format=docx`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Lecture notes.docx"');
    expect(Buffer.from(res.bytes.subarray(0, 2)).toString()).toBe('PK');
    const { text, xml } = docxText(res.bytes);
    for (const words of ['Lecture notes', 'strong words', 'inline code', 'link to Yjs', 'first bullet', 'nested two', 'const answer = 42;', 'Ada', '97']) {
      expect(text, words).toContain(words);
    }
    expect(text).toContain('<script>alert("owned")</script>');
    expect(xml).toMatch(/<w:pStyle w:val="Heading1"\/>/);
    expect(xml).toMatch(/<w:pStyle w:val="Heading2"\/>/);
    expect(xml).toContain('<w:i/>');
    expect(xml).toContain('<w:b/>');
    expect(xml).toContain('<w:numPr>');
    expect(xml).toContain('<w:hyperlink');
    expect(xml).toContain('<w:tbl>');
    expect(xml).toContain('w:ascii="Courier New"');
  });

  it('json: metadata and the Markdown', async () => {
    const res = await download(viewer, `/api/documents/${docId}/export?format=json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Lecture notes.json"');
    expect(JSON.parse(res.text)).toEqual({
      id: docId,
      title: 'Lecture notes',
      category: 'notes',
      created_by: owner.user.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      version: null,
      format: 'markdown',
      content: RICH,
    });
  });

  it('exports the live body, edits included', async () => {
    liveAppend(t, docId, owner.user.id, '\nAppended live.\n');
    const res = await download(viewer, `/api/documents/${docId}/export?format=txt`);
    expect(res.text).toContain('Appended live.');
  });

  it('?version_id= exports a named version', async () => {
    const doc = await createDoc(t, owner, { title: 'Versioned', content: 'First words' });
    const saved = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } });
    expect(saved.status).toBe(201);
    liveAppend(t, doc.id, owner.user.id, ' and later words');
    const now = await download(owner, `/api/documents/${doc.id}/export?format=markdown`);
    expect(now.text).toBe('First words and later words');
    const then = await download(owner, `/api/documents/${doc.id}/export?format=json&version_id=${saved.body.id}`);
    expect(then.status).toBe(200);
    expect(JSON.parse(then.text)).toMatchObject({ content: 'First words', version: { id: saved.body.id, name: 'v1' } });
    const missing = await t.call('GET', `/api/documents/${doc.id}/export?format=markdown&version_id=${MISSING_ID}`, { as: owner });
    expectProblem(missing, 404, 'not_found');
    // A version of another document (the caller's own) is not this document's: 404 too.
    const other = await createDoc(t, owner, { title: 'Other', content: 'Other words' });
    const foreign = await t.call('GET', `/api/documents/${other.id}/export?format=markdown&version_id=${saved.body.id}`, { as: owner });
    expectProblem(foreign, 404, 'not_found');
  });

  it('names files safely (RFC 6266): filename* for non-ASCII titles, an ASCII fallback, no path or quote', async () => {
    const cases: [string, string][] = [
      ['Résumé: "draft"/v2', `attachment; filename="Resume draft v2.md"; filename*=UTF-8''R%C3%A9sum%C3%A9%20draft%20v2.md`],
      ['日本語のノート', `attachment; filename="document.md"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E%E3%81%AE%E3%83%8E%E3%83%BC%E3%83%88.md`],
      ['../../etc/passwd', 'attachment; filename="etc passwd.md"'],
      ['100% done; ok', `attachment; filename="100_ done_ ok.md"; filename*=UTF-8''100%25%20done%3B%20ok.md`],
    ];
    for (const [title, expected] of cases) {
      const doc = await createDoc(t, owner, { title, content: 'x' });
      const res = await download(owner, `/api/documents/${doc.id}/export?format=markdown`);
      expect(res.headers.get('content-disposition'), title).toBe(expected);
    }
  });

  it('an unknown format is 400 listing the formats; a missing one is named', async () => {
    for (const query of ['?format=rtf', '?format=PDF', '?format=']) {
      const res = await t.call('GET', `/api/documents/${docId}/export${query}`, { as: viewer });
      expectProblem(res, 400, 'validation_failed', query);
      expect(res.body.errors, query).toEqual([{ path: 'format', message: 'format must be one of: markdown, html, txt, docx, json' }]);
    }
    const missing = await t.call('GET', `/api/documents/${docId}/export`, { as: viewer });
    expectProblem(missing, 400, 'validation_failed');
    expect(missing.body.errors).toEqual([{ path: 'format', message: 'format is required' }]);
  });

  it('readers export; anyone else is 404, as is an unknown document; no credential is 401', async () => {
    for (const format of ['markdown', 'docx']) {
      expectProblem(await t.call('GET', `/api/documents/${docId}/export?format=${format}`, { as: outsider }), 404, 'not_found');
    }
    expectProblem(await t.call('GET', `/api/documents/${MISSING_ID}/export?format=txt`, { as: owner }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/documents/${docId}/export?format=txt`), 401, 'unauthorized');
    const other = await t.newTenant('export-other');
    expectProblem(await t.call('GET', `/api/documents/${docId}/export?format=txt`, { as: other.admin }), 404, 'not_found');
  });

  it('a trashed document is exported by no one but its owners', async () => {
    const doc = await createDoc(t, owner, { title: 'Binned', content: 'gone' });
    await share(t, owner, doc.id, { user: viewer }, 'viewer');
    expect((await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/documents/${doc.id}/export?format=txt`, { as: viewer }), 404, 'not_found');
  });
});

describe('large documents', () => {
  // The rich sample 600 times (about 200 KiB): past what is rendered on the event loop for html, txt and docx.
  const LARGE = Array.from({ length: 600 }, (_, i) => RICH.replace('# Lecture notes', `# Lecture ${i}`)).join('\n\n');

  it('are rendered in a worker thread, into the same files as on the event loop', async () => {
    expect(LARGE.length).toBeGreaterThan(128 * 1024);
    const doc = await createDoc(t, owner, { title: 'Large notes', content: LARGE });
    const run = vi.spyOn(t.deps.workers, 'run');
    try {
      const html = await download(owner, `/api/documents/${doc.id}/export?format=html`);
      expect(html.status).toBe(200);
      expect(html.text).toBe(standalonePage('Large notes', markdownToHtml(LARGE)));
      const txt = await download(owner, `/api/documents/${doc.id}/export?format=txt`);
      expect(txt.status).toBe(200);
      expect(txt.text).toBe(markdownToText(LARGE));
      const docx = await download(owner, `/api/documents/${doc.id}/export?format=docx`);
      expect(docx.status).toBe(200);
      expect(docx.headers.get('content-type')).toBe(formatInfo.docx.contentType);
      // The same XML but for the relationship ids of links, which docx draws at random.
      const xml = (archive: Uint8Array) => docxText(archive).xml.replace(/r:id="rId[^"]*"/g, 'r:id=""');
      expect(xml(docx.bytes)).toBe(xml(await markdownToDocx('Large notes', LARGE)));
      expect(docxText(docx.bytes).text).toContain('Lecture 599');
      expect(run).toHaveBeenCalledTimes(3);
      // Markdown and JSON need no rendering.
      expect((await download(owner, `/api/documents/${doc.id}/export?format=markdown`)).text).toBe(LARGE);
      expect(run).toHaveBeenCalledTimes(3);
    } finally {
      run.mockRestore();
    }
  });

  it('answer 503 with Retry-After when too much work waits for the worker threads; small ones are still rendered', async () => {
    const doc = await createDoc(t, owner, { title: 'Large notes', content: LARGE });
    const small = await createDoc(t, owner, { title: 'Small notes', content: RICH });
    const run = vi.spyOn(t.deps.workers, 'run').mockRejectedValue(new WorkersBusyError());
    try {
      const res = await t.call('GET', `/api/documents/${doc.id}/export?format=docx`, { as: owner });
      expectProblem(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      expect((await download(owner, `/api/documents/${small.id}/export?format=html`)).status).toBe(200);
    } finally {
      run.mockRestore();
    }
  });
});
