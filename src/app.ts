// createApp(deps): the whole REST surface as one Hono app, built from explicit dependencies so
// that tests run it on a temporary database with app.request() and the server runs the same app.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { collabRouter } from '../collab';
import { apiKeysRouter } from './api-keys';
import { authRouter } from './auth';
import type { AppEnv, Deps } from './context';
import { gradebookRouter } from './gradebook';
import { coursesRouter } from './courses';
import { enrollmentsRouter } from './enrollments';
import { documentsRouter } from './documents';
import { groupsRouter } from './groups';
import { mountApiDocs } from './http/api-docs';
import { authenticate } from './auth/middleware';
import { requestBodies, type BodyLimitRule } from './http/body';
import { handleError, problemResponse } from './http/errors';
import { newRouter } from './http/openapi';
import { requestContext } from './http/request-context';
import { serverVersion } from './system/service';
import { systemRouter } from './system';
import { tenantsRouter } from './tenants';
import { usersRouter } from './users';

/** Every area's router, mounted in this order; a new area is one more line. */
const areaRouters: OpenAPIHono<AppEnv>[] = [
  systemRouter,
  authRouter,
  usersRouter,
  tenantsRouter,
  groupsRouter,
  apiKeysRouter,
  collabRouter,
  gradebookRouter,
  coursesRouter,
  enrollmentsRouter,
  documentsRouter,
];

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
  ];
  app.use('*', requestBodies(deps.config.bodyLimitBytes, documentBodies));
  app.use('/api/*', authenticate);
  app.use('/competencies/*', authenticate);

  for (const router of areaRouters) app.route('/', router);

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
  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Learning platform API',
      version: serverVersion,
      description:
        'Courses, enrollments, gradebook and collaborative documents. Errors are RFC 9457 problem+json; ' +
        'lists take page and per_page (max 100) and answer {data, pagination} with a Link header.',
    },
  });
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
