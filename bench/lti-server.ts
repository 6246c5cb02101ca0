// Bench helper, not a benchmark: the real app over an existing SQLite file (argv[2]) with the LTI
// benchmark's settings (bench/lti.ts: its PUBLIC_URL, the issuer of every LTI message, and the
// key sealing the platform's signing key), in its own process on 127.0.0.1, port 0, logging off;
// WAL checkpoints in a worker as the server has them; prints `{"port":N}` once listening, its loop delay on SIGUSR2, exits on SIGTERM.
import { openDatabase, startBackgroundCheckpoints } from '../db/client';
import { createApp } from '../src/app';
import { startHttpServer } from '../src/http-server';
import { benchDeps, stallProbe } from './helpers/common';
import { loopDelay } from './helpers/loop-delay';
import { LTI_BENCH_CONFIG } from './helpers/lti';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: lti-server.ts <database file>\n');
  process.exit(2);
}

const database = openDatabase(file);
// As the server runs (src/server.ts): WAL checkpoints in a worker thread, not on the serving connection.
const checkpoints = startBackgroundCheckpoints(database);
const deps = await benchDeps(database, LTI_BENCH_CONFIG);
const running = await startHttpServer({ app: createApp(deps), port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);

// SIGUSR2: prints this process's event loop delay since the last one ({"loop":{p99,max}} in ms) and starts over.
const loop = loopDelay();
// BENCH_TRACE_STALLS_MS: a 1 ms probe traces this process's longer stalls (bench/helpers/common.ts).
if (process.env.BENCH_TRACE_STALLS_MS) stallProbe();
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ loop: { p99: loop.p99(), max: loop.max() } })}\n`);
  loop.reset();
});

process.on('SIGTERM', () => {
  void running.close().then(() => checkpoints.stop()).finally(() => {
    database.close();
    process.exit(0);
  });
});
