// GET /metrics: the Prometheus text exposition. Answers 404 (as for any unknown path) unless
// METRICS_TOKEN is set; then only to `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { AppError } from '../http/errors';
import { type ApiTag, errorResponses, newRouter, publicRoute } from '../http/openapi';
import { bearerToken } from '../auth/middleware';

const tags: [ApiTag] = ['Operations'];

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Digests of equal length whatever was sent: the comparison takes the same time for every guess.
 * No token configured matches nothing.
 */
export function tokenMatches(header: string | undefined, token: string | undefined): boolean {
  const given = header ? bearerToken(header) : null;
  return token !== undefined && timingSafeEqual(digest(given ?? ''), digest(token)) && given !== null;
}

const route = publicRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'getMetrics',
  tags,
  summary: 'Prometheus metrics (only when METRICS_TOKEN is set)',
  description:
    'The Prometheus text exposition format: HTTP requests by method, route template and status with a latency ' +
    'histogram; live editing (open documents, connections, updates received, bytes persisted, refused messages, ' +
    'awareness entries); the document store (log rows awaiting compaction, compactions); SQLite (database and ' +
    'WAL sizes, checkpoint durations); sign-in failures and rate-limit refusals; Node.js process metrics. ' +
    'Answers 404 unless the server was started with METRICS_TOKEN; then it needs `Authorization: Bearer <METRICS_TOKEN>`.',
  responses: {
    200: {
      description: 'Metrics in the Prometheus text format (version 0.0.4)',
      content: { 'text/plain': { schema: z.string() } },
    },
    ...errorResponses(401, 404),
  },
});

export const metricsRouter = newRouter().openapi({ ...route, security: [{ metricsToken: [] }] }, async (c) => {
  const { metrics, config } = c.var.deps;
  if (!metrics.enabled) {
    // Off (there are metrics only with METRICS_TOKEN, deps.ts): the same answer as a path nothing serves.
    throw new AppError('not_found', `No route for ${c.req.method} ${c.req.path}`);
  }
  if (!tokenMatches(c.req.header('Authorization'), config.metricsToken)) {
    throw new AppError('unauthorized', 'The metrics need Authorization: Bearer <METRICS_TOKEN>', { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
  const body = await metrics.exposition();
  c.header('Cache-Control', 'no-store');
  return c.body(body, 200, { 'Content-Type': metrics.contentType }) as never;
});
