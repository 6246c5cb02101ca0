// The browsable API reference: Swagger UI at /api/docs, reading the OpenAPI document. Its script
// and stylesheet come from the swagger-ui-dist package and are served by this server, so the page
// works where browsers cannot reach a CDN (a school's intranet, an offline install) and loads
// nothing from anywhere else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SwaggerUI } from '@hono/swagger-ui';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { documentSecurityHeaders } from './request-context';

export const API_DOCS_PATH = '/api/docs';
const ASSETS_BASE = `${API_DOCS_PATH}/assets`;

const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const distVersion = (JSON.parse(readFileSync(path.join(distDir, 'package.json'), 'utf8')) as { version: string }).version;

/** The files the page loads, with their types. */
const ASSETS: ReadonlyArray<readonly [file: string, contentType: string]> = [
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
];

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * Mounts the page and its assets. The assets' paths name the package version (the form
 * @hono/swagger-ui builds from `baseUrl` and `version`), so browsers may keep them for good.
 */
export function mountApiDocs(app: OpenAPIHono<AppEnv>, opts: { documentUrl: string; title: string }): void {
  const assets = `${ASSETS_BASE}/swagger-ui-dist@${distVersion}`;
  // Swagger UI would send the document to an outside validator (validator.swagger.io) and show its
  // badge: `none` turns that off. The icon is named, so that browsers do not ask for /favicon.ico.
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(opts.title)}</title>
    <link rel="icon" type="image/png" href="${assets}/favicon-32x32.png" />
  </head>
  <body>
    ${SwaggerUI({ url: opts.documentUrl, baseUrl: ASSETS_BASE, version: distVersion, validatorUrl: 'none' })}
  </body>
</html>
`;
  app.get(API_DOCS_PATH, documentSecurityHeaders, (c) => c.html(page));
  for (const [file, contentType] of ASSETS) {
    // Read on first use: most processes never serve the reference.
    let body: Buffer | undefined;
    app.get(`${assets}/${file}`, (c) => {
      body ??= readFileSync(path.join(distDir, file));
      return c.body(new Uint8Array(body), 200, { 'Content-Type': contentType, 'Cache-Control': 'public, max-age=31536000, immutable' });
    });
  }
}
