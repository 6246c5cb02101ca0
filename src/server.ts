// Entry point: config, database, migrations, first-start bootstrap, HTTP + WebSocket server,
// graceful shutdown on SIGINT/SIGTERM. Nothing imports this file.
import path from 'node:path';
import { openDatabase, startBackgroundCheckpoints } from '../db/client';
import { createApp } from './app';
import { systemClock } from './lib/clock';
import { ConfigError, loadConfig, type Config } from './config';
import { buildDeps, createCollabHub, flushPendingWrites } from './deps';
import { startHttpServer } from './http-server';
import { closeLog, createLogger } from './logger';

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
  const checkpoints = startBackgroundCheckpoints(database, { logger });
  const deps = await buildDeps({ database, config, clock: systemClock, logger });
  const hub = createCollabHub(deps);
  const app = createApp(deps);
  const running = await startHttpServer({ app, hub, port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
  logger.info({ port: running.port, host: config.host, dataDir: config.dataDir }, `listening on http://${config.host}:${running.port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    // A referenced timer keeps the event loop alive until the close completes. Without it a
    // connection whose socket is paused (an unread request body) holds the server open while
    // nothing keeps the loop running, and node exits early: no database close, no final log.
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      logger.warn('shutdown did not finish in time; stopping anyway');
      flushPendingWrites(deps);
      database.close();
      void closeLog(logger).then(() => process.exit(1));
    }, config.shutdownTimeoutMs + 5_000);
    try {
      await running.close();
      await checkpoints.stop();
    } finally {
      if (!timedOut) {
        clearTimeout(deadline);
        // Live edits that arrived during the close may still be queued for the next turn.
        flushPendingWrites(deps);
        database.close();
        logger.info('stopped');
        await closeLog(logger);
        process.exit(0);
      }
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
