// Health (public) and the feature list (authenticated).
import { z } from '@hono/zod-openapi';
import { type ApiTag, authedRoute, jsonContent, newRouter, publicRoute, timestamp } from '../http/openapi';
import { features, health } from './service';

const tags: [ApiTag] = ['System'];
const checkState = z.enum(['ok', 'error', 'unavailable', 'disabled']);

const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    checks: z.object({ database: checkState, collab: checkState, pdf_export: checkState }),
  })
  .openapi('Health');

export const systemRouter = newRouter()
  .openapi(
    publicRoute({
      method: 'get',
      path: '/api/health',
      operationId: 'getHealth',
      tags,
      summary: 'Health check; 503 when the database is unreachable',
      responses: { 200: jsonContent(healthSchema, 'Healthy or degraded'), 503: jsonContent(healthSchema, 'Database unreachable') },
    }),
    async (c) => {
      const result = await health(c.get('deps'));
      c.header('Cache-Control', 'no-store');
      return result.checks.database === 'ok' ? c.json(result, 200) : c.json(result, 503);
    },
  )
  .openapi(
    publicRoute({
      method: 'get',
      path: '/api/health/uptime',
      operationId: 'getUptime',
      tags,
      summary: 'Uptime check',
      responses: {
        200: jsonContent(z.object({ started_at: timestamp, uptime_seconds: z.number() }), 'Since when the server runs'),
      },
    }),
    (c) => {
      const { startedAt, clock } = c.get('deps');
      const uptime = Math.max(0, (clock.now().getTime() - startedAt.getTime()) / 1000);
      return c.json({ started_at: startedAt.toISOString(), uptime_seconds: Math.floor(uptime) }, 200);
    },
  )
  .openapi(
    authedRoute({
      method: 'get',
      path: '/api/system/features',
      operationId: 'getSystemFeatures',
      tags,
      summary: 'Enabled features; each is true only when it works on this server',
      responses: {
        200: jsonContent(
          z.object({ version: z.string(), features: z.record(z.string(), z.boolean()) }).openapi('Features'),
          'Features',
        ),
      },
    }),
    async (c) => c.json(await features(c.var.deps), 200),
  );
