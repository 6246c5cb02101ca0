// Run by test/database.test.ts in a process started with a TypeScript preload (see
// ts-preload.ts): background checkpoints must still run there. Prints one JSON line.
import { openDatabase, startBackgroundCheckpoints } from '../../db/client';
import { fileGrows, fillWal } from './checkpoints';

const file = process.argv[2]!;
const database = openDatabase(file);
fillWal(database.sqlite);
const warnings: string[] = [];
const checkpoints = startBackgroundCheckpoints(database, { intervalMs: 20, logger: { warn: (_obj: unknown, msg?: string) => warnings.push(String(msg)) } });
const grew = await fileGrows(file, 1_000_000, 10_000);
const autocheckpoint = database.sqlite.pragma('wal_autocheckpoint', { simple: true });
await checkpoints.stop();
database.close();
process.stdout.write(`${JSON.stringify({ grew, autocheckpoint, warnings })}\n`);
