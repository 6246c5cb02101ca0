// The small pages people see on the browser-facing endpoints outside /api (SSO, LTI): no script but
// the one auto-submitting form, a Content-Security-Policy that allows nothing else, no referrer, never cached.
import type { Context } from 'hono';
import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html';

export function setPageHeaders(c: Context): void {
  c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'");
  c.header('Referrer-Policy', 'no-referrer');
  c.header('Cache-Control', 'no-store');
  c.header('X-Content-Type-Options', 'nosniff');
}

export function refusalPage(title: string, message: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`
  );
}

/** The one inline script a page may run: it submits the page's only form. */
const AUTO_SUBMIT_SCRIPT = 'document.forms[0].submit();';
const AUTO_SUBMIT_HASH = `'sha256-${createHash('sha256').update(AUTO_SUBMIT_SCRIPT).digest('base64')}'`;

/**
 * Headers of a page that form-posts to `action` on load (LTI launches): the same as a refusal
 * page's, but the CSP runs the one auto-submit script (by its hash) and lets the form go to
 * `action`'s origin only (and to this server, which the tool sends the browser back to).
 */
export function setAutoSubmitHeaders(c: Context, action: string): void {
  setPageHeaders(c);
  const origin = new URL(action).origin;
  c.header('Content-Security-Policy', `default-src 'none'; script-src ${AUTO_SUBMIT_HASH}; style-src 'unsafe-inline'; form-action ${origin} 'self'; frame-ancestors 'none'; base-uri 'none'`);
}

/** A page whose form posts `fields` to `action` at once (a button for browsers without script). */
export function autoSubmitPage(title: string, action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body><form method="post" action="${escapeHtml(action)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form>` +
    `<script>${AUTO_SUBMIT_SCRIPT}</script></body></html>`
  );
}
