// Bench helper, preloaded (`node --import ./bench/helpers/sqlite-cache.ts`) into our server by
// bench/collab/idle.ts when BENCH_SQLITE_CACHE_SIZE is set: every `PRAGMA cache_size = …` the
// process runs through better-sqlite3 sets that value instead (e.g. -64 for 64 KiB), so that two
// runs, with and without it, tell how much of the memory per open document is SQLite's page cache,
// without a knob for it in the server.
import { createRequire } from 'node:module';
import path from 'node:path';

const size = process.env.BENCH_SQLITE_CACHE_SIZE;

if (size !== undefined) {
  if (!/^-?\d+$/.test(size)) throw new Error(`BENCH_SQLITE_CACHE_SIZE must be a whole number, not ${size}`);
  // The server's own copy of the module (one per process: the CommonJS cache).
  const require = createRequire(path.join(process.cwd(), 'package.json'));
  const Database = require('better-sqlite3') as { prototype: { pragma(source: string, options?: object): unknown } };
  const pragma = Database.prototype.pragma;
  Database.prototype.pragma = function (source: string, options?: object) {
    return pragma.call(this, /^\s*cache_size\s*=/i.test(source) ? `cache_size = ${size}` : source, options);
  };
}
