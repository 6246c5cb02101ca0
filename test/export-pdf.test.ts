// PDF export through the real system Chromium: the PDF parsed and its words found, the HTML export
// rendered, nothing fetched (a local server counts requests), the page limit, a killed browser
// replaced, the queue's 503, and what a server without Chromium says. One exporter (one browser)
// serves the whole file. With no Chromium installed these tests fail (CI included), never skip.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PdfExporter, PdfTimeoutError } from '../export/pdf';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { requireChromium } from './helpers/chromium';
import { createDoc, share } from './helpers/documents';
import { pdfText } from './helpers/files';

let t: TestApp;
let owner: TestUser;
let viewer: TestUser;
let outsider: TestUser;

beforeAll(async () => {
  requireChromium();
  t = await makeTestApp({ config: { pdfConcurrency: 2, pdfQueueLimit: 1, pdfMaxPages: 200 } });
  owner = await t.newUser();
  viewer = await t.newUser();
  outsider = await t.newUser();
});
afterAll(() => t?.close());

async function download(as: TestUser, path: string) {
  const res = await t.app.request(path, { headers: { Authorization: `Bearer ${as.token}` } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: Buffer.from(bytes).toString('utf8') };
}

/** A local HTTP server that counts every request it receives. */
async function countingServer(): Promise<{ server: Server; base: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': req.url?.endsWith('.css') ? 'text/css' : 'image/png' });
    res.end(req.url?.endsWith('.css') ? 'body { background: url(/from-css.png) }' : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('GET /api/documents/{id}/export/pdf', () => {
  it('is a real PDF holding the words of the document, the title in the header and page numbers', async () => {
    const doc = await createDoc(t, owner, {
      title: 'Photosynthesis primer',
      content: '# Light reactions\n\nChlorophyll absorbs *photons* in the **thylakoid** membrane.\n\n- water splits\n- oxygen leaves\n\n| Stage | Place |\n|---|---|\n| Calvin cycle | stroma |\n',
    });
    await share(t, owner, doc.id, { user: viewer }, 'viewer');
    const res = await download(viewer, `/api/documents/${doc.id}/export/pdf`);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Photosynthesis primer.pdf"');
    expect(res.text.startsWith('%PDF-')).toBe(true);
    const { text, pages } = await pdfText(res.bytes);
    expect(pages).toBe(1);
    for (const words of ['Light reactions', 'Chlorophyll absorbs photons in the thylakoid membrane.', 'water splits', 'oxygen leaves', 'Calvin cycle', 'stroma']) {
      expect(text, words).toContain(words);
    }
    // Header (the title) and footer (page / pages).
    expect(text).toContain('Photosynthesis primer');
    expect(text).toMatch(/1\s*\/\s*1/);
  });

  it('shows raw HTML as text and runs no script', async () => {
    const doc = await createDoc(t, owner, { title: 'Scripted', content: 'Before\n\n<script>document.body.innerHTML = "SCRIPT RAN"</script>\n\nAfter\n' });
    const res = await download(owner, `/api/documents/${doc.id}/export/pdf`);
    expect(res.status).toBe(200);
    const { text } = await pdfText(res.bytes);
    expect(text).toContain('Before');
    expect(text).toContain('After');
    expect(text).toContain('<script>document.body.innerHTML = "SCRIPT RAN"</script>');
  });

  it('exports a named version with ?version_id=', async () => {
    const doc = await createDoc(t, owner, { title: 'Drafts', content: 'Original wording' });
    const saved = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } });
    expect((await t.call('PUT', `/api/documents/${doc.id}/content`, { as: owner, body: { content: 'Rewritten wording' } })).status).toBe(200);
    const then = await pdfText((await download(owner, `/api/documents/${doc.id}/export/pdf?version_id=${saved.body.id}`)).bytes);
    expect(then.text).toContain('Original wording');
    const now = await pdfText((await download(owner, `/api/documents/${doc.id}/export/pdf`)).bytes);
    expect(now.text).toContain('Rewritten wording');
    expectProblem(await t.call('GET', `/api/documents/${doc.id}/export/pdf?version_id=${MISSING_ID}`, { as: owner }), 404, 'not_found');
  });

  it('is 404 to non-readers and for unknown documents, 401 without a credential', async () => {
    const doc = await createDoc(t, owner, { title: 'Private', content: 'secret' });
    expectProblem(await t.call('GET', `/api/documents/${doc.id}/export/pdf`, { as: outsider }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/documents/${MISSING_ID}/export/pdf`, { as: owner }), 404, 'not_found');
    expectProblem(await t.call('GET', `/api/documents/${doc.id}/export/pdf`), 401, 'unauthorized');
  });

  it('fetches nothing: images, stylesheets, CSS url(), iframes and file:// in a document reach no server', async () => {
    const { server, base, requests } = await countingServer();
    try {
      const markdown = [
        `![tracker](${base}/pixel.png)`,
        '',
        `[stylesheet](${base}/style.css)`,
        '',
        `<link rel="stylesheet" href="${base}/raw.css"><img src="${base}/raw.png"><iframe src="${base}/frame.html"></iframe>`,
        '',
        '![local file](file:///etc/passwd)',
        '',
        'Visible words',
      ].join('\n');
      const doc = await createDoc(t, owner, { title: 'Hostile', content: markdown });
      const res = await download(owner, `/api/documents/${doc.id}/export/pdf`);
      expect(res.status).toBe(200);
      expect((await pdfText(res.bytes)).text).toContain('Visible words');

      // Markdown cannot produce them (raw HTML is off); the page refuses them anyway.
      const hostile = `<!DOCTYPE html><html><head>
        <link rel="stylesheet" href="${base}/head.css">
        <style>@import url("${base}/import.css"); body { background-image: url("${base}/bg.png"); } @font-face { font-family: x; src: url("${base}/font.woff"); } p { font-family: x; }</style>
        </head><body><p>Sandboxed words</p>
        <img src="${base}/img.png"><img src="file:///etc/passwd"><iframe src="${base}/frame.html"></iframe><iframe src="file:///etc/hostname"></iframe>
        <object data="${base}/object.pdf"></object><video src="${base}/video.mp4" poster="${base}/poster.png"></video>
        <script src="${base}/script.js"></script><script>document.body.append("SCRIPT RAN")</script>
        <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
        </body></html>`;
      const pdf = await t.deps.pdf.renderHtml('Hostile page', hostile);
      const { text } = await pdfText(pdf);
      expect(text).toContain('Sandboxed words');
      expect(text).not.toContain('SCRIPT RAN');
      expect(text).not.toMatch(/root:|localhost/);
      expect(requests).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('exports a 200-page document within the limits and refuses a longer one with 422', { timeout: 120_000 }, async () => {
    const paragraph = (i: number) => `Paragraph ${i} of the long document.`;
    const body = (n: number) => Array.from({ length: n }, (_, i) => paragraph(i)).join('\n\n');
    // Paragraphs per page, measured on a sample, so the long documents land where they should.
    const sample = await t.deps.pdf.renderMarkdown('Sample', body(600));
    const perPage = 600 / (await pdfText(sample)).pages;

    const long = await createDoc(t, owner, { title: 'Two hundred pages', content: body(Math.floor(perPage * 199)) });
    const ok = await download(owner, `/api/documents/${long.id}/export/pdf`);
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    const { pages, text } = await pdfText(ok.bytes);
    expect(pages).toBeGreaterThanOrEqual(190);
    expect(pages).toBeLessThanOrEqual(200);
    expect(text).toContain(paragraph(Math.floor(perPage * 199) - 1));

    // A little too long: printed, and refused by its pages.
    const longer = await createDoc(t, owner, { title: 'Too long', content: body(Math.ceil(perPage * 215)) });
    const printed = t.deps.pdf.prints;
    const refused = await t.call('GET', `/api/documents/${longer.id}/export/pdf`, { as: owner });
    expectProblem(refused, 422, 'validation_failed');
    expect(refused.body.detail).toContain('more than 200 pages');
    expect(t.deps.pdf.prints).toBe(printed + 1);
  });

  it('refuses a document laid out far taller than PDF_MAX_PAGES pages with 422 before printing it', async () => {
    const short = await makeTestApp({ config: { pdfMaxPages: 2 } });
    try {
      const member = await short.newUser();
      // 3,000 characters (the length check lets them through) in 300 paragraphs: some 15 pages.
      const tall = await createDoc(short, member, { title: 'Tall', content: Array.from({ length: 300 }, (_, i) => `Line ${i}`).join('\n\n') });
      const refused = await short.call('GET', `/api/documents/${tall.id}/export/pdf`, { as: member });
      expectProblem(refused, 422, 'validation_failed');
      expect(refused.body.detail).toContain('more than 2 pages');
      expect(short.deps.pdf.launches).toBe(1);
      expect(short.deps.pdf.prints).toBe(0);
      // Within twice the limit it is printed, and its pages decide: 5 paragraphs fit in one page.
      const fits = await createDoc(short, member, { title: 'Fits', content: Array.from({ length: 5 }, (_, i) => `Line ${i}`).join('\n\n') });
      const ok = await short.call('GET', `/api/documents/${fits.id}/export/pdf`, { as: member });
      expect(ok.status).toBe(200);
      expect(short.deps.pdf.prints).toBe(1);
    } finally {
      await short.close();
    }
  });

  it('refuses Markdown too long for PDF_MAX_PAGES pages whatever it holds with 422 at once, without rendering it', async () => {
    const short = await makeTestApp({ config: { pdfMaxPages: 1 } });
    try {
      const member = await short.newUser();
      const doc = await createDoc(short, member, { title: 'Far too long', content: 'word '.repeat(4_001) });
      const refused = await short.call('GET', `/api/documents/${doc.id}/export/pdf`, { as: member });
      expectProblem(refused, 422, 'validation_failed');
      expect(refused.body.detail).toContain('more than 1 pages');
      expect(short.deps.pdf.launches).toBe(0);
    } finally {
      await short.close();
    }
  });

  it('replaces a killed Chromium on the next export', async () => {
    const doc = await createDoc(t, owner, { title: 'Resilient', content: 'Still here' });
    expect((await download(owner, `/api/documents/${doc.id}/export/pdf`)).status).toBe(200);
    const pid = await t.deps.pdf.browserPid();
    const launches = t.deps.pdf.launches;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    const again = await download(owner, `/api/documents/${doc.id}/export/pdf`);
    expect(again.status, again.text.slice(0, 300)).toBe(200);
    expect((await pdfText(again.bytes)).text).toContain('Still here');
    expect(t.deps.pdf.launches).toBe(launches + 1);
    expect(await t.deps.pdf.browserPid()).not.toBe(pid);
  });

  it('queues beyond the pool and answers 503 with Retry-After when the queue is full', async () => {
    const doc = await createDoc(t, owner, { title: 'Busy', content: Array.from({ length: 300 }, (_, i) => `Line ${i}`).join('\n\n') });
    // Two render, one waits, the rest are refused at once.
    const results = await Promise.all(Array.from({ length: 6 }, () => t.call('GET', `/api/documents/${doc.id}/export/pdf`, { as: owner })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 503, 503, 503]);
    for (const busy of results.filter((r) => r.status === 503)) {
      expectProblem(busy, 503, 'service_unavailable');
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('the HTML export, rendered', () => {
  it('renders in Chromium as the document reads', async () => {
    const doc = await createDoc(t, owner, { title: 'Rendered page', content: '# Heading one\n\nA paragraph with *emphasis*.\n\n1. first\n2. second\n' });
    const html = (await download(owner, `/api/documents/${doc.id}/export?format=html`)).text;
    const { text } = await pdfText(await t.deps.pdf.renderHtml('Rendered page', html));
    for (const words of ['Heading one', 'A paragraph with emphasis.', 'first', 'second']) expect(text, words).toContain(words);
  });
});

describe('without Chromium', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await makeTestApp({ config: { chromiumPath: '/nonexistent/chromium' } });
  });
  afterAll(() => bare.close());

  it('reports pdf_export false and answers 503 saying how to install Chromium', async () => {
    const features = await bare.call('GET', '/api/system/features', { as: bare.admin });
    expect(features.body.features.pdf_export).toBe(false);
    const health = await bare.call('GET', '/api/health');
    expect(health.body.checks.pdf_export).toBe('unavailable');
    const user = await bare.newUser();
    const doc = await createDoc(bare, user, { title: 'No browser', content: 'x' });
    const res = await bare.call('GET', `/api/documents/${doc.id}/export/pdf`, { as: user });
    expectProblem(res, 503, 'service_unavailable');
    expect(res.body.detail).toMatch(/apt-get install chromium/);
    expect(res.body.detail).toMatch(/PUPPETEER_EXECUTABLE_PATH/);
    // The other formats do not need it.
    expect((await bare.call('GET', `/api/documents/${doc.id}/export?format=txt`, { as: user })).status).toBe(200);
  });

  it('a binary that does not start as Chromium is 503, not 500', async () => {
    const broken = await makeTestApp({ config: { chromiumPath: '/bin/false' } });
    try {
      const user = await broken.newUser();
      const doc = await createDoc(broken, user, { title: 'Broken browser', content: 'x' });
      const res = await broken.call('GET', `/api/documents/${doc.id}/export/pdf`, { as: user });
      expectProblem(res, 503, 'service_unavailable');
      expect(res.body.detail).toMatch(/could not be started/);
    } finally {
      await broken.close();
    }
  });

  it('with Chromium installed, pdf_export is true before any export launched it', async () => {
    const fresh = await makeTestApp();
    try {
      expect((await fresh.call('GET', '/api/system/features', { as: fresh.admin })).body.features.pdf_export).toBe(true);
      expect((await fresh.call('GET', '/api/health')).body.checks.pdf_export).toBe('ok');
      expect(await fresh.deps.pdf.browserPid()).toBeUndefined();
    } finally {
      await fresh.close();
    }
  });
});

describe('the exporter', () => {
  it('gives up on a render past its time limit, and closes its browser', async () => {
    const exporter = new PdfExporter({ executablePath: requireChromium(), concurrency: 1, queueLimit: 0, timeoutMs: 50, maxPages: 200 });
    try {
      const big = Array.from({ length: 3000 }, (_, i) => `Paragraph ${i}`).join('\n\n');
      await expect(exporter.renderMarkdown('Slow', big)).rejects.toBeInstanceOf(PdfTimeoutError);
      const pid = await exporter.browserPid();
      expect(pid).toBeGreaterThan(0);
      await exporter.close();
      expect(() => process.kill(pid!, 0)).toThrow();
      await expect(exporter.renderMarkdown('After', 'x')).rejects.toThrow(/Chromium/);
    } finally {
      await exporter.close();
    }
  });
});
