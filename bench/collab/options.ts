// The live-editing benchmark's options (its command line, see bench/collab.ts), workloads, limits,
// server kinds and working directories, shared by the modules of bench/collab/.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const QUICK = process.argv.includes('--quick');
export const PROFILE = process.argv.includes('--profile');
export const IDLE_ONLY = process.argv.includes('--idle-only');
export const HEAP_SNAPSHOTS = process.argv.includes('--heap-snapshots');
/** `--only=ours,yws`: only these servers (a partial run writes nothing and judges nothing). */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
export const ROUNDS = roundsArgument(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length), QUICK ? 1 : 3);

function roundsArgument(given: string | undefined, fallback: number): number {
  if (given === undefined) return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`--rounds must be a whole number from 1 to 9, not ${given}`);
  return n;
}

export interface Workload {
  name: string;
  docs: number;
  clientsPerDoc: number;
  editsPerSecond: number;
  seconds: number;
}

export const ALL_WORKLOADS: Workload[] = [
  { name: 'A', docs: 100, clientsPerDoc: 4, editsPerSecond: 2, seconds: QUICK ? 5 : 20 },
  { name: 'B', docs: 10, clientsPerDoc: 5, editsPerSecond: 5, seconds: QUICK ? 5 : 20 },
];
/** `--workloads=B`: only these workloads. */
const ONLY_WORKLOADS = process.argv.find((a) => a.startsWith('--workloads='))?.slice('--workloads='.length).split(',');
export const WORKLOADS = ALL_WORKLOADS.filter((w) => !ONLY_WORKLOADS || ONLY_WORKLOADS.includes(w.name));
export const NO_IDLE = process.argv.includes('--no-idle');
export const IDLE_DOCS = QUICK ? 100 : 1_000;
/** Documents opened and closed before the RSS baseline, so one-time costs are not counted per document. */
export const WARMUP_DOCS = 20;
export const CONNECT_CONCURRENCY = 50;
export const SYNC_TIMEOUT_MS = 30_000;
/** After the last edit, how long deliveries may still arrive before the rest count as lost. */
export const DRAIN_MS = 10_000;
export const SETTLE_MS = 5_000;
/**
 * Before the baseline: a fresh process's V8 gives back the heap it committed while starting only
 * after some quiet seconds, which a baseline read earlier counts against nothing (the figures:
 * "Why the benchmark waits and rotates" in bench/RESULTS.md).
 */
export const BASELINE_QUIET_MS = 20_000;
/** The whole run is killed past this, children included: a round takes about nine minutes. */
export const RUN_DEADLINE_MS = (6 + 10 * ROUNDS) * 60_000;
export const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };

/** `floor`: a bare ws echo server (bench/collab/idle.ts's floor), never one of the compared servers. */
export type Kind = 'ours' | 'yws' | 'hocuspocus' | 'floor';
export const LABEL: Record<Kind, string> = {
  ours: 'ours (hub + SQLite log)',
  yws: '@y/websocket-server 0.1.1',
  hocuspocus: 'Hocuspocus 3.4',
  floor: 'floor: bare ws, echo',
};
export const ALL_KINDS: Kind[] = ['ours', 'yws', 'hocuspocus'];
export const KINDS = ALL_KINDS.filter((k) => !ONLY || ONLY.includes(k));
export const PARTIAL = QUICK || IDLE_ONLY || NO_IDLE || HEAP_SNAPSHOTS || KINDS.length < ALL_KINDS.length || WORKLOADS.length < ALL_WORKLOADS.length;

export const root = path.resolve(import.meta.dirname, '../..');
export const workDir = mkdtempSync(path.join(tmpdir(), 'lms-bench-collab-'));
export const dataDir = path.join(workDir, 'data');
export const profileDir = path.join(workDir, 'profile');
export const memoryDir = path.join(workDir, 'memory');
