// createApp(deps): the whole REST surface as one Hono app, built from explicit dependencies so
// that tests run it on a temporary database with app.request() and the server runs the same app.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { areas } from './areas';
import type { AppEnv, Deps } from './context';
import { mountApiDocs } from './http/api-docs';
import { authenticate } from './auth/middleware';
import { scopeGuard } from './auth/scopes';
import { requestBodies } from './http/body';
import type { BodyLimitRule } from './http/body-rules';
import { handleError, problemResponse } from './http/errors';
import { apiTags, newRouter } from './http/openapi';
import { requestContext } from './http/request-context';
import { urlText } from './http/url-text';
import { publicOrigin } from './http/public-url';
import { utf8JsonBodies } from './http/utf8';
import { serverVersion } from './system/service';

export function createApp(deps: Deps): OpenAPIHono<AppEnv> {
  const app = newRouter();

  app.use('*', requestContext(deps));
  if (deps.config.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: deps.config.corsOrigins,
        allowHeaders: ['Authorization', 'Content-Type', 'X-API-Key', 'X-Request-Id'],
        allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        exposeHeaders: ['Link', 'Location', 'Retry-After', 'X-Request-Id'],
        maxAge: 600,
      }),
    );
  }
  const documentBodies: BodyLimitRule[] = [
    { method: 'POST', pattern: /^\/api\/documents\/?$/, maxBytes: deps.config.documentBodyLimitBytes },
    { method: 'PUT', pattern: /^\/api\/documents\/[^/]+\/content$/, maxBytes: deps.config.documentBodyLimitBytes },
    // A published CASE framework runs to thousands of items.
    { method: 'POST', pattern: /^\/api\/competencies\/frameworks\/import$/, maxBytes: deps.config.documentBodyLimitBytes },
  ];
  const areaBodies = areas.flatMap((area) => area.bodies?.(deps.config) ?? []);
  app.use('*', requestBodies(deps.config.bodyLimitBytes, [...documentBodies, ...areaBodies]));
  app.use('/api/*', authenticate);
  app.use('/competencies/*', authenticate);
  // After the caller is known: an API key's scopes against the route's (src/auth/scopes.ts).
  app.use('/api/*', scopeGuard(deps.scopes));
  app.use('/competencies/*', scopeGuard(deps.scopes));
  // The CASE import decodes its body strictly itself, in a worker thread when large (src/competencies/case-parse.ts).
  app.use('*', utf8JsonBodies([{ method: 'POST', pattern: /^\/api\/competencies\/frameworks\/import$/ }]));
  app.use('*', urlText());

  for (const area of areas) app.route('/', area.router);
  for (const area of areas) area.document?.(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT or API key (lms_…)',
    description: 'An access token from POST /api/auth/token, or an API key',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'metricsToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The METRICS_TOKEN the server was started with (GET /metrics only)',
  });
  app.doc31('/api/openapi.json', (c) => ({
    openapi: '3.1.0',
    info: {
      title: 'Learning platform API',
      version: serverVersion,
      description:
        'Courses, enrollments, gradebook and collaborative documents. Errors are RFC 9457 problem+json; ' +
        'lists take page and per_page (max 100) and answer {data, pagination} with a Link header. Text fields ' +
        'refuse control characters (tab and line breaks are allowed in multi-line text) and lone surrogates ' +
        'with a 422 naming the field; a JSON body that is not UTF-8 is a 400.',
      license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' },
    },
    // PUBLIC_URL when set; otherwise relative: the API is wherever this document was fetched from.
    servers: [{ url: c.var.deps.config.publicUrlSet ? `${publicOrigin(c)}/` : '/', description: 'This server' }],
    tags: apiTags.map((tag) => ({ ...tag })),
  }));
  mountApiDocs(app, { documentUrl: '/api/openapi.json', title: 'Learning platform API' });

  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0) {
      return problemResponse(405, 'method_not_allowed', `${c.req.method} is not allowed here; use ${allowed.join(', ')}`, undefined, {
        Allow: allowed.join(', '),
      });
    }
    return problemResponse(404, 'not_found', `No route for ${c.req.method} ${c.req.path}`);
  });
  app.onError(handleError);
  return app;
}

const routePatterns = new WeakMap<object, { method: string; pattern: RegExp }[]>();

/** Methods that some route answers at this path; used to tell 405 from 404. */
function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  let patterns = routePatterns.get(app);
  if (!patterns) {
    patterns = app.routes
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => ({
        method: r.method,
        // Exactly as the router matches (strict: a trailing slash is another path).
        pattern: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+')}$`),
      }));
    routePatterns.set(app, patterns);
  }
  const methods = new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
