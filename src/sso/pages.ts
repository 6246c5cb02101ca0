// The small pages people see on the browser-facing SSO endpoints (outside /api): no script, a
// Content-Security-Policy that allows nothing but the inline style, no referrer, never cached.
import type { Context } from 'hono';
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
