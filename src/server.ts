// Entry point: config, database, migrations, first-start bootstrap, HTTP server, graceful shutdown.
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { openDatabase } from '../db/client';
import { createApp } from './app';
import { systemClock } from './clock';
import { ConfigError, loadConfig, type Config } from './config';
import { buildDeps } from './deps';
import { createLogger } from './logger';

export const DATABASE_FILE = 'lms.sqlite';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const database = openDatabase(path.join(config.dataDir, DATABASE_FILE));
  const deps = await buildDeps({ database, config, clock: systemClock, logger });
  const app = createApp(deps);

  const server: ServerType = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    logger.info({ port: info.port, host: config.host, dataDir: config.dataDir }, `listening on http://${config.host}:${info.port}`);
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      logger.warn('shutdown timed out; closing remaining connections');
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    }, config.shutdownTimeoutMs);
    force.unref();
    server.close(() => {
      database.close();
      logger.info('stopped');
      process.exit(0);
    });
    (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
