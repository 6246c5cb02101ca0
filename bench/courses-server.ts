// Bench helper, not a benchmark: the real app over an existing SQLite file (argv[2]), in its own
// process on 127.0.0.1, port 0, logging off; prints `{"port":N}` once listening, exits on SIGTERM.
// bench/courses.ts seeds the file first and reads this process's CPU time around each run.
import { openDatabase } from '../db/client';
import { createApp } from '../src/app';
import { startHttpServer } from '../src/http-server';
import { benchDeps } from './helpers/common';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: courses-server.ts <database file>\n');
  process.exit(2);
}

const database = openDatabase(file);
const deps = await benchDeps(database);
const running = await startHttpServer({ app: createApp(deps), port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);

process.on('SIGTERM', () => {
  void running.close().finally(() => {
    database.close();
    process.exit(0);
  });
});
