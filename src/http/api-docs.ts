// The browsable API reference: Swagger UI at /api/docs, reading the OpenAPI document. Its script
// and stylesheet come from the swagger-ui-dist package and are served by this server, so the page
// works where browsers cannot reach a CDN (a school's intranet, an offline install) and loads
// nothing from anywhere else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { swaggerUI } from '@hono/swagger-ui';
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
];

/**
 * Mounts the page and its assets. The assets' paths name the package version (the form
 * @hono/swagger-ui builds from `baseUrl` and `version`), so browsers may keep them for good.
 */
export function mountApiDocs(app: OpenAPIHono<AppEnv>, opts: { documentUrl: string; title: string }): void {
  app.get(API_DOCS_PATH, documentSecurityHeaders, swaggerUI({ url: opts.documentUrl, title: opts.title, baseUrl: ASSETS_BASE, version: distVersion }));
  for (const [file, contentType] of ASSETS) {
    // Read on first use: most processes never serve the reference.
    let body: string | undefined;
    app.get(`${ASSETS_BASE}/swagger-ui-dist@${distVersion}/${file}`, (c) => {
      body ??= readFileSync(path.join(distDir, file), 'utf8');
      return c.body(body, 200, { 'Content-Type': contentType, 'Cache-Control': 'public, max-age=31536000, immutable' });
    });
  }
}
