// Bench helper, not a benchmark: the real app and its webhook worker over a SQLite file (argv[2]),
// in its own process on 127.0.0.1, port 0, logging off, http:// and private targets allowed (the
// receiver is local); prints `{"port":N}` once listening, exits on SIGTERM. bench/webhooks.ts
// appends events to the same file and receives the deliveries.
import { openDatabase } from '../db/client';
import { createApp } from '../src/app';
import { buildConfig } from '../src/config';
import { buildDeps } from '../src/deps';
import { startHttpServer } from '../src/http-server';
import { systemClock } from '../src/lib/clock';
import { createLogger } from '../src/logger';
import { BENCH_ADMIN } from './helpers/common';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: webhooks-server.ts <database file>\n');
  process.exit(2);
}

const database = openDatabase(file);
const deps = await buildDeps({
  database,
  config: buildConfig({
    adminEmail: BENCH_ADMIN.email,
    adminPassword: BENCH_ADMIN.password,
    scryptCost: 1024,
    logLevel: 'silent',
    webhookAllowHttp: 'true',
    webhookAllowPrivateTargets: 'true',
  }),
  clock: systemClock,
  logger: createLogger('silent'),
});
const running = await startHttpServer({ app: createApp(deps), port: 0, host: '127.0.0.1' });
deps.webhooks.start();
process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);

process.on('SIGTERM', () => {
  void deps.webhooks
    .stop()
    .then(() => running.close())
    .finally(() => {
      database.close();
      process.exit(0);
    });
});
