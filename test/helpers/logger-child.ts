// Child process for test/logger.test.ts: logs through the app's default destination (stdout),
// some lines within one turn, some across turns while writes are in flight, one line longer than
// a write chunk, then exits as the server's shutdown does (closeLog, then process.exit) while the
// last writes may still be in flight. Every line must arrive whole and in order.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { accessLoggerOf, closeLog, createLogger, LOG_CHUNK_BYTES } from '../../src/logger';

const logger = createLogger('info');
const access = accessLoggerOf(logger);
const perTurn = Number(process.argv[2]);
const turns = Number(process.argv[3]);
let n = 0;
for (let turn = 0; turn < turns; turn++) {
  for (let i = 0; i < perTurn; i++) access.info({ n: n++, path: '/api/users/me', status: 200 }, 'request');
  if (turn === 1) logger.info({ n: n++, long: 'é'.repeat(LOG_CHUNK_BYTES * 3) }, 'long line');
  await nextTurn();
}
await closeLog(logger);
process.exit(0);
