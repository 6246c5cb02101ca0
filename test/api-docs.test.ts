// The browsable API reference (/api/docs): served whole by this server, with no asset from a CDN,
// and rendered by a real browser (headless Chromium through puppeteer-core) from the real server.
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../src/http-server';
import { makeTestApp, type TestApp } from './helpers/app';
import { CHROMIUM_ARGS, findChromium } from './helpers/chromium';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

/** The URLs the page loads (`<script src>` and `<link href>`). */
const assetUrls = (html: string): string[] => [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);

describe('GET /api/docs', () => {
  it('loads its script and stylesheet from this server, not from a CDN', async () => {
    const page = await t.call('GET', '/api/docs');
    expect(page.status).toBe(200);
    const urls = assetUrls(page.text);
    expect(urls.map((url) => url.replace(/@[\d.]+\//, '@VERSION/')).sort()).toEqual([
      '/api/docs/assets/swagger-ui-dist@VERSION/favicon-32x32.png',
      '/api/docs/assets/swagger-ui-dist@VERSION/swagger-ui-bundle.js',
      '/api/docs/assets/swagger-ui-dist@VERSION/swagger-ui.css',
    ]);
    expect(page.text).not.toMatch(/https?:\/\//);
    // No outside validator (Swagger UI's default sends the document to validator.swagger.io).
    expect(page.text).toContain("validatorUrl: 'none'");
  });

  it('serves the assets to anyone, typed, for good (the path names the version)', async () => {
    const urls = assetUrls((await t.call('GET', '/api/docs')).text);
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };
    for (const url of urls) {
      // No credential: the reference is public, as the page itself is.
      const res = await t.call('GET', url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type'), url).toBe(types[url.split('.').pop()!]);
      expect(res.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(res.text.length, url).toBeGreaterThan(url.endsWith('.png') ? 200 : 10_000);
    }
    expect((await t.call('GET', '/api/docs/assets/swagger-ui-dist@0.0.0/swagger-ui.css')).status).toBe(404);
  });
});

describe('the reference in a browser', () => {
  const chromium = findChromium();
  let server: RunningServer;
  let browser: Browser;
  beforeAll(async () => {
    if (!chromium) return;
    server = await startHttpServer({ app: t.app, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 });
    browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  // CI must have Chromium (.ci/run installs it): there a missing browser fails instead of skipping.
  it.runIf(chromium || process.env.CI === 'true')('renders every operation of the OpenAPI document, loading nothing from elsewhere', async () => {
    if (!chromium) throw new Error('No Chromium found (PUPPETEER_EXECUTABLE_PATH, /usr/bin/chromium, …); CI installs it');
    const base = `http://127.0.0.1:${server.port}`;
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });

    // Swagger UI renders only what is in view once tags and operations number 150 or more (and
    // schemas 100 or more): a window tall enough for the whole list shows every operation.
    await page.setViewport({ width: 1280, height: 30_000 });
    await page.goto(`${base}/api/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 15_000 });
    const title = await page.$eval('.swagger-ui .info .title', (element) => element.textContent ?? '');
    expect(title).toContain('Learning platform API');

    // One block per operation, each showing its method and path.
    const shown = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method.toLowerCase()} ${path}`;
      }),
    );
    const doc = (await t.call('GET', '/api/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
      webhooks?: Record<string, Record<string, unknown>>;
    };
    // The messages the server sends (OpenAPI webhooks) are shown too, named by event type.
    const operations = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})].flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(shown.sort()).toEqual(operations.sort());

    expect(failed).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('data:'))).toEqual([]);
    await page.close();
  });
});
