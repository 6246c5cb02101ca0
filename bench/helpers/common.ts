// What several benchmarks need alike: the app's dependencies on a bench database, a process's CPU
// time, and percentiles.
import { readFileSync } from 'node:fs';
import type { Database_ } from '../../db/client';
import { systemClock } from '../../src/lib/clock';
import { buildConfig } from '../../src/config';
import { buildDeps } from '../../src/deps';
import { createLogger } from '../../src/logger';

export const BENCH_ADMIN = { email: 'bench@example.com', password: 'bench-password' };

/** The app's dependencies on `database` (bootstrap admin, cheap password hashing, no logging). */
export function benchDeps(database: Database_) {
  return buildDeps({
    database,
    config: buildConfig({ adminEmail: BENCH_ADMIN.email, adminPassword: BENCH_ADMIN.password, scryptCost: 1024, logLevel: 'silent' }),
    clock: systemClock,
    logger: createLogger('silent'),
  });
}

/** User + system CPU milliseconds of a process so far (Linux /proc, 100 ticks/s; 0 elsewhere). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Nearest-rank percentile of ascending values; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
