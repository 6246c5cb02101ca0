// Entry point: config, database, migrations, the port, then first-start bootstrap and the app
// (HTTP + WebSocket), graceful shutdown on SIGINT/SIGTERM. Nothing imports this file.
import { openDatabase, startBackgroundCheckpoints, type Database_ } from '../db/client';
import { createApp } from './app';
import { startSeatTimeSweep } from './compliance/sweep';
import { systemClock } from './lib/clock';
import { ConfigError, databaseFile, loadConfig, type Config } from './config';
import type { Deps } from './context';
import { buildDeps, createCollabHub, flushPendingWrites } from './deps';
import { startHttpServer, type RunningServer } from './http-server';
import { closeLog, createLogger } from './logger';
import { StartFailure, databaseFailure, listenFailure, otherFailure } from './start-failure';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new StartFailure(err.message, 2);
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const file = databaseFile(config);
  let database: Database_;
  try {
    database = openDatabase(file);
  } catch (err) {
    throw databaseFailure(err, file);
  }
  // The port first, the first admin after: a start that cannot listen must not create the admin
  // and print its one-time password, only to die and never show it again.
  let running: RunningServer;
  try {
    running = await startHttpServer({ port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
  } catch (err) {
    database.close();
    throw listenFailure(err, config.host, config.port);
  }
  let deps: Deps;
  try {
    deps = await buildDeps({ database, config, clock: systemClock, logger });
  } catch (err) {
    await running.close();
    database.close();
    throw /^SQLITE_/.test(String((err as { code?: unknown }).code)) ? databaseFailure(err, file) : err;
  }
  const checkpoints = startBackgroundCheckpoints(database, { logger });
  running.attach(createApp(deps), createCollabHub(deps));
  const seatTimeSweep = startSeatTimeSweep(deps);
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
    seatTimeSweep.stop();
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
  const failure = otherFailure(err);
  process.stderr.write(`${failure.message}\n`);
  process.exit(failure.exitCode);
});
