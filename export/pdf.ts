// PDF export through the system Chromium (puppeteer-core), sandboxed and pooled.
//
// One browser for the whole process, launched on the first export (never at start: a server that
// never exports a PDF never runs Chromium) and launched again when it has died. Exports run on a
// bounded pool of pages that are kept and reused (a fresh page costs more than the render); past
// the pool's size exports wait in a queue, and past the queue's size they are refused at once
// (PdfBusyError → 503 with Retry-After) rather than pile up.
//
// A page renders only what it is given: JavaScript is off, and every request it would make is
// refused by request interception except `data:` URIs, so an image, a stylesheet, a CSS url(), an
// iframe or a file:// address in a document fetches nothing, from the network or the disk. The
// HTML carries a Content-Security-Policy saying the same. Each export has a time limit and a page
// limit: Chromium prints at most one page past the limit, and a PDF that has it is refused.
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { AppError } from '../src/http/errors';
import { documentPage, escapeHtml } from './markdown';

/** Headless in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-extensions',
  '--mute-audio',
];

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** PUPPETEER_EXECUTABLE_PATH (as configured), then the usual install paths; undefined when none is there. */
export function findChromium(configured?: string): string | undefined {
  const candidates = configured ? [configured] : CHROMIUM_CANDIDATES;
  return candidates.find((candidate) => existsSync(candidate));
}

export const INSTALL_HINT =
  'PDF export needs Chromium: install it (Debian/Ubuntu: `apt-get install chromium`) or set PUPPETEER_EXECUTABLE_PATH to a Chromium or Chrome binary, then restart the server';

export class PdfUnavailableError extends AppError {
  constructor(message: string) {
    super('service_unavailable', message);
  }
}
export class PdfBusyError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('service_unavailable', 'Too many PDF exports are in progress; try again shortly', {
      message: 'too many PDF exports are waiting',
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}
export class PdfTooLongError extends AppError {
  constructor(readonly maxPages: number) {
    super('validation_failed', `The PDF would have more than ${maxPages} pages (PDF_MAX_PAGES); export it as DOCX or HTML instead`, {
      status: 422,
      message: `the PDF would have more than ${maxPages} pages`,
    });
  }
}
export class PdfTimeoutError extends AppError {
  constructor(readonly timeoutMs: number) {
    super('service_unavailable', `The PDF could not be rendered within ${timeoutMs} ms; try again later`, {
      message: `the PDF was not rendered within ${timeoutMs} ms`,
      headers: { 'Retry-After': '5' },
    });
  }
}

export interface PdfExporterOptions {
  /** The Chromium binary; undefined: PDF export is unavailable. */
  executablePath: string | undefined;
  concurrency: number;
  queueLimit: number;
  timeoutMs: number;
  maxPages: number;
  logger?: Logger;
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * Characters of Markdown that no page can take: an A4 page of the print stylesheet (10.5 pt, 1.5
 * lines) shows at most ~5,000 characters, and Markdown's marks and link addresses seldom more than
 * triple a text.
 */
const MAX_MARKDOWN_PER_PAGE = 20_000;
/**
 * The printable area of an A4 page with the margins below, in CSS pixels (96 per inch): pages are
 * laid out for it (print media, this width) so that their height tells how many pages they take.
 */
const PRINT_WIDTH_PX = Math.round(((210 - 2 * 16) / 25.4) * 96);
const PRINT_HEIGHT_PX = Math.round(((297 - 2 * 20) / 25.4) * 96);
/**
 * Chromium may shrink a page's content to fit the paper, at most by this much: a layout taller than
 * this many times PDF_MAX_PAGES pages cannot print within them.
 */
const MAX_PRINT_SHRINK = 2;

export class PdfExporter {
  readonly executablePath: string | undefined;
  private readonly options: PdfExporterOptions;
  private browser: Promise<Browser> | null = null;
  /** Pages of the current browser, ready for the next export. */
  private idle: Page[] = [];
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private closed = false;
  /** Browsers launched so far (tests and the benchmark watch relaunches). */
  launches = 0;
  /** Documents given to Chromium to print (tests watch those refused before printing). */
  prints = 0;

  constructor(options: PdfExporterOptions) {
    this.options = options;
    this.executablePath = options.executablePath;
  }

  /** A Chromium binary is there (it is launched on the first export). */
  available(): boolean {
    return this.executablePath !== undefined && !this.closed;
  }

  /** The running browser's process id, if one runs. */
  async browserPid(): Promise<number | undefined> {
    if (!this.browser) return undefined;
    try {
      return (await this.browser).process()?.pid;
    } catch {
      return undefined;
    }
  }

  /**
   * A document's Markdown as a PDF: rendered with raw HTML disabled, the title in every page's
   * header. `page` builds the HTML page printed (the API's builds a large one in a worker thread).
   */
  async renderMarkdown(
    title: string,
    markdown: string,
    page: (title: string, markdown: string) => string | Promise<string> = (t, m) => documentPage(t, m),
  ): Promise<Uint8Array> {
    this.checkLength(markdown);
    return this.renderHtml(title, await page(title, markdown));
  }

  /**
   * Refuses (PdfTooLongError) Markdown that cannot fit in PDF_MAX_PAGES pages whatever it holds, before
   * anything is rendered: Chromium would otherwise lay out megabytes (many seconds of its time) only
   * for the export to be refused.
   */
  private checkLength(markdown: string): void {
    if (markdown.length > this.options.maxPages * MAX_MARKDOWN_PER_PAGE) throw new PdfTooLongError(this.options.maxPages);
  }

  /** Any HTML as a PDF in the sandboxed page (the Markdown path above is what the API uses). */
  async renderHtml(title: string, html: string): Promise<Uint8Array> {
    if (!this.available()) throw new PdfUnavailableError(INSTALL_HINT);
    await this.takeSlot();
    try {
      try {
        return await this.renderOnce(title, html);
      } catch (err) {
        // The browser died under this export (killed, crashed): once more on a fresh one.
        if (err instanceof PdfTooLongError || err instanceof PdfTimeoutError || (await this.browserAlive())) throw err;
        this.options.logger?.warn({ err }, 'Chromium died during a PDF export; relaunching it');
        return await this.renderOnce(title, html);
      }
    } finally {
      this.releaseSlot();
    }
  }

  /** Closes the browser; later exports are refused as unavailable. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new PdfUnavailableError('the server is shutting down'));
    const browser = this.browser;
    this.browser = null;
    this.idle = [];
    if (!browser) return;
    try {
      await (await browser).close();
    } catch (err) {
      this.options.logger?.warn({ err }, 'closing Chromium failed');
    }
  }

  // ---- the pool ----

  private takeSlot(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.queueLimit) {
      // About as long as the exports ahead take, at a second or so each.
      const ahead = Math.ceil((this.running + this.waiting.length) / this.options.concurrency);
      throw new PdfBusyError(Math.max(1, Math.min(ahead, 60)));
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private releaseSlot(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.running -= 1;
  }

  private async browserAlive(): Promise<boolean> {
    if (!this.browser) return false;
    try {
      return (await this.browser).connected;
    } catch {
      return false;
    }
  }

  private async currentBrowser(): Promise<Browser> {
    if (this.browser) {
      try {
        const browser = await this.browser;
        if (browser.connected) return browser;
      } catch {
        // The launch failed: try again below.
      }
      this.browser = null;
      this.idle = [];
    }
    if (this.closed) throw new PdfUnavailableError('the server is shutting down');
    const launching = this.launch();
    this.browser = launching;
    try {
      return await launching;
    } catch (err) {
      // A binary that does not start (broken install, missing libraries): unavailable, not a 500.
      this.options.logger?.error({ err, executablePath: this.executablePath }, 'Chromium could not be started');
      if (this.browser === launching) this.browser = null;
      throw new PdfUnavailableError(`Chromium (${this.executablePath}) could not be started; check that it runs, or set PUPPETEER_EXECUTABLE_PATH to one that does`);
    }
  }

  private async launch(): Promise<Browser> {
    this.launches += 1;
    // Loaded on the first launch only: a server that never exports a PDF never loads it.
    const { default: puppeteer } = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: this.executablePath,
      headless: true,
      pipe: true,
      args: CHROMIUM_ARGS,
      // The server handles its own signals and closes the browser at shutdown.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    browser.on('disconnected', () => {
      if (this.browser) {
        void this.browser.then((current) => {
          if (current === browser) {
            this.browser = null;
            this.idle = [];
          }
        });
      }
    });
    return browser;
  }

  private async newPage(browser: Browser): Promise<Page> {
    const page = await browser.newPage();
    // Laid out as printed, so that the layout's height tells how many pages it takes (renderOnce).
    await page.emulateMediaType('print');
    await page.setViewport({ width: PRINT_WIDTH_PX, height: PRINT_HEIGHT_PX });
    await page.setJavaScriptEnabled(false);
    await page.setRequestInterception(true);
    page.on('request', (request: HTTPRequest) => {
      if (request.isInterceptResolutionHandled()) return;
      if (request.url().startsWith('data:')) void request.continue();
      else void request.abort('blockedbyclient');
    });
    return page;
  }

  private async renderOnce(title: string, html: string): Promise<Uint8Array> {
    const browser = await this.currentBrowser();
    const page = this.idle.pop() ?? (await this.newPage(browser));
    const { timeoutMs, maxPages } = this.options;
    let timer: NodeJS.Timeout | undefined;
    let reusable = false;
    try {
      const render = (async () => {
        await page.setContent(html, { waitUntil: 'load', timeout: timeoutMs });
        // Far too tall for the limit, whatever the printing would shrink: refused without printing,
        // which takes Chromium several times as long as the layout.
        const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
        if (height > MAX_PRINT_SHRINK * (maxPages + 1) * PRINT_HEIGHT_PX) return null;
        this.prints += 1;
        const pdf = await page.pdf({
          format: 'A4',
          printBackground: true,
          displayHeaderFooter: true,
          headerTemplate: `<div style="font-size:8px;width:100%;padding:0 16mm;color:#555;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">${escapeHtml(title)}</div>`,
          footerTemplate:
            '<div style="font-size:8px;width:100%;text-align:center;color:#555"><span class="pageNumber"></span> / <span class="totalPages"></span></div>',
          margin: { top: '20mm', bottom: '20mm', left: '16mm', right: '16mm' },
          // One page past the limit is enough to know the document is too long.
          pageRanges: `1-${maxPages + 1}`,
          timeout: timeoutMs,
        });
        return pdf;
      })();
      // Lost to the timer, the render fails later (its page closed): that failure is nobody's.
      render.catch(() => {});
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PdfTimeoutError(timeoutMs)), timeoutMs);
      });
      const pdf = await Promise.race([render, timeout]);
      reusable = true;
      if (pdf === null || pageCount(pdf) > maxPages) throw new PdfTooLongError(maxPages);
      return pdf;
    } catch (err) {
      if (err instanceof Error && err.name === 'TimeoutError') throw new PdfTimeoutError(timeoutMs);
      throw err;
    } finally {
      clearTimeout(timer);
      // A page that timed out or failed may be mid-render: it is closed, not reused.
      if (reusable && browser.connected && this.browser && !this.closed) {
        this.idle.push(page);
      } else {
        page.close().catch(() => {});
      }
    }
  }
}

/** Pages of a PDF as Chromium writes it: the page tree root's /Count (the largest one). */
export function pageCount(pdf: Uint8Array): number {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  let most = 0;
  for (const match of text.matchAll(/\/Count\s+(\d+)/g)) most = Math.max(most, Number(match[1]));
  return most;
}
