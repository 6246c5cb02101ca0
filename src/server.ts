// Entry point: config, the data directory's lock, database, migrations, the port, then first-start
// bootstrap and the app (HTTP + WebSocket), graceful shutdown on SIGINT/SIGTERM. The first log line
// says what runs: version, port, data folder, database size and the features on. Nothing imports
// this file.
import { mkdirSync, statSync } from 'node:fs';
import { openDatabase, startBackgroundCheckpoints, type Database_ } from '../db/client';
import { DataDirectoryBusyError, lockDataDirectory, type DataDirectoryLock } from '../db/data-dir-lock';
import { createApp } from './app';
import { startSeatTimeSweep } from './compliance/sweep';
import { systemClock } from './lib/clock';
import { ConfigError, databaseFile, loadConfig, type Config } from './config';
import type { Deps } from './context';
import type { Logger } from 'pino';
import { buildDeps, createCollabHub, flushPendingWrites } from './deps';
import { startHttpServer, type RunningServer } from './http-server';
import { closeLog, createHeldLogger } from './logger';
import { StartFailure, databaseFailure, listenFailure, otherFailure } from './start-failure';
import { FONT_PACKAGES, scriptsWithoutFonts } from '../export/fonts';
import { features, serverVersion } from './system/service';

/** Lets the held log lines out if the start fails before the first line. */
let releaseLog: (() => void) | undefined;

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new StartFailure(err.message, 2);
    throw err;
  }
  const held = createHeldLogger(config.logLevel);
  const logger = held.logger;
  releaseLog = () => held.release();
  const file = databaseFile(config);
  // The data folder is this server's until it exits (a restore refuses to run meanwhile, and a
  // second server on the same folder refuses to start). Taking it creates the folder's first file.
  let lock: DataDirectoryLock;
  try {
    mkdirSync(config.dataDir, { recursive: true });
    lock = lockDataDirectory(config.dataDir, 'a server');
  } catch (err) {
    if (err instanceof DataDirectoryBusyError) {
      throw new StartFailure(`Cannot start: ${err.message}; stop it first, or set DATA_DIR or --data-dir to another folder`);
    }
    throw databaseFailure(err, file);
  }
  let database: Database_;
  try {
    database = openDatabase(file);
  } catch (err) {
    lock.release();
    throw databaseFailure(err, file);
  }
  // The port first, the first admin after: a start that cannot listen must not create the admin
  // and print its one-time password, only to die and never show it again.
  let running: RunningServer;
  try {
    running = await startHttpServer({ port: config.port, host: config.host, shutdownTimeoutMs: config.shutdownTimeoutMs });
  } catch (err) {
    database.close();
    lock.release();
    throw listenFailure(err, config.host, config.port);
  }
  // PUBLIC_URL unset: the links and the tokens' issuer name the port taken (PORT=0 picks one).
  if (!config.publicUrlSet) config = { ...config, publicUrl: `http://localhost:${running.port}` };
  let deps: Deps;
  try {
    deps = await buildDeps({ database, config, clock: systemClock, logger });
  } catch (err) {
    await running.close();
    database.close();
    lock.release();
    throw /^SQLITE_/.test(String((err as { code?: unknown }).code)) ? databaseFailure(err, file) : err;
  }
  const checkpoints = startBackgroundCheckpoints(database, {
    logger,
    onCheckpoint: deps.metrics.enabled ? (seconds) => deps.metrics.checkpointed(seconds) : undefined,
  });
  running.attach(createApp(deps), createCollabHub(deps));
  const seatTimeSweep = startSeatTimeSweep(deps);
  // Pending deliveries (a crash mid-delivery included) are due again from the first pass.
  deps.webhooks.start();
  // Jobs a previous process left running are taken again (or failed) once their lease runs out.
  deps.jobs.start();
  // The signal handlers before the first log line: a supervisor (or a test) that stops the server
  // as soon as it says it listens gets the graceful shutdown, never the default action of SIGTERM.
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
      void deps.webhooks.stop();
      void deps.jobs.stop();
      flushPendingWrites(deps);
      deps.documents.close();
      void deps.workers.close();
      database.close();
      void closeLog(logger).then(() => process.exit(1));
    }, config.shutdownTimeoutMs + 5_000);
    seatTimeSweep.stop();
    try {
      // A backup in progress is stopped, its partial file removed: never a truncated backup.
      await deps.backups.stop();
      await running.close();
      // Attempts in flight are abandoned, not lost: their deliveries stay pending for the next start.
      await deps.webhooks.stop();
      // Jobs are asked to end; one cut short runs again (or fails, if it cannot resume) after a restart.
      await deps.jobs.stop();
      await checkpoints.stop();
      await deps.pdf.close();
      // Folds still running in the worker threads are dropped (the log holds what they would fold);
      // the threads end within the shutdown's deadline.
      deps.documents.close();
      await deps.workers.close();
    } finally {
      if (!timedOut) {
        clearTimeout(deadline);
        // Live edits that arrived during the close may still be queued for the next turn.
        flushPendingWrites(deps);
        database.close();
        lock.release();
        logger.info('stopped');
        await closeLog(logger);
        process.exit(0);
      }
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  const enabled = (await features(deps)).features;
  held.release(() =>
    logger.info(
      {
        version: serverVersion,
        port: running.port,
        host: config.host,
        dataDir: config.dataDir,
        databaseBytes: sizeOf(file) + sizeOf(`${file}-wal`),
        features: { collab: enabled.collab, pdf_export: enabled.pdf_export, pdf_fonts: enabled.pdf_fonts, metrics: deps.metrics.enabled },
      },
      `listening on http://${config.host}:${running.port} (version ${serverVersion})`,
    ),
  );
  if (enabled.pdf_export && !enabled.pdf_fonts) {
    const missing = await scriptsWithoutFonts();
    logger.warn({ missing, packages: FONT_PACKAGES }, `PDFs will show empty boxes for ${missing.join(', ')}: install fonts (Debian/Ubuntu: apt-get install ${FONT_PACKAGES.join(' ')})`);
  }
  warnOfUnsafeSettings(config, logger);

}

/** Settings that are right for tests and a receiver on the same machine, and risky in production. */
function warnOfUnsafeSettings(config: Config, logger: Logger): void {
  if (config.outboundAllowPrivateTargets) {
    logger.warn({ setting: 'OUTBOUND_ALLOW_PRIVATE_TARGETS' }, 'OUTBOUND_ALLOW_PRIVATE_TARGETS (or WEBHOOK_ALLOW_PRIVATE_TARGETS) is on: tenant admins can make this server send requests to loopback and private addresses (internal services)');
  }
  if (config.outboundAllowHttp) {
    logger.warn({ setting: 'OUTBOUND_ALLOW_HTTP' }, 'OUTBOUND_ALLOW_HTTP (or WEBHOOK_ALLOW_HTTP) is on: webhook messages and sign-in exchanges may be sent unencrypted (http://)');
  }
  if (config.smtpUrl && !config.publicUrlSet && (!config.invitationUrl || !config.passwordResetUrl)) {
    logger.warn({ setting: 'PUBLIC_URL' }, `SMTP_URL is set but PUBLIC_URL is not: invitation and password-reset mails will link to ${config.publicUrl}; set PUBLIC_URL (or INVITATION_URL and PASSWORD_RESET_URL)`);
  }
}

main().catch((err) => {
  releaseLog?.();
  const failure = otherFailure(err);
  process.stderr.write(`${failure.message}\n`);
  process.exit(failure.exitCode);
});
