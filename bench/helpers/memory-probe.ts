// Bench helper, preloaded (`node --expose-gc --import ./bench/helpers/memory-probe.ts`) into every
// server process that bench/collab.ts measures, ours and the peers alike, so that memory is read
// the same way in each without touching the servers: on SIGUSR2 the process runs two full garbage
// collections and writes its process.memoryUsage() (with a sequence number) to
// $BENCH_MEMORY_DIR/<pid>.json. When the file <pid>.snapshot-next is there, it also writes a heap
// snapshot after the reading (and removes the request). RSS itself is read from /proc/<pid>/status.
// With the reading, each V8 heap space's committed size (`spaces`, bytes by space name): the new
// space, emptied by the collections but kept committed at the size it grew to, is part of heapTotal.
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

const dir = process.env.BENCH_MEMORY_DIR;
let sequence = 0;

if (dir) {
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    sequence += 1;
    const usage = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_size]));
    const request = path.join(dir, `${process.pid}.snapshot-next`);
    let snapshot: string | null = null;
    if (existsSync(request)) {
      rmSync(request);
      snapshot = writeHeapSnapshot(path.join(dir, `${process.pid}-${sequence}.heapsnapshot`));
    }
    const file = path.join(dir, `${process.pid}.json`);
    // Written whole, then renamed, so the reader never sees half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ sequence, collected: Boolean(gc), snapshot, spaces, ...usage }));
    renameSync(`${file}.tmp`, file);
  });
}
