// One structured log line per request: request id, user, method, path, status, duration.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context';

export const requestLogging: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  const logger = c.var.deps.logger.child({ requestId: c.var.requestId });
  c.set('logger', logger);
  await next();
  if (!logger.isLevelEnabled('info')) return;
  logger.info(
    {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      userId: c.var.actor?.userId,
    },
    'request',
  );
};
