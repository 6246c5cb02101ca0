// The live-editing benchmark's server processes (ours and the peers, each in a child process with
// the memory probe preloaded) and the readings of their memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN, dataDir, memoryDir, profileDir, root, workDir, type Kind } from './options';
import { SERVER_NODE_FLAGS } from '../../src/node-flags';

export const children = new Set<ChildProcess>();

export interface ServerProcess {
  kind: Kind;
  child: ChildProcess;
  pid: number;
  port: number;
}

/**
 * node itself with tsx as a loader (not the tsx CLI, which adds a process), so the pid is the
 * server's; every server also gets the memory probe (bench/helpers/memory-probe.ts).
 */
function spawnNode(nodeArgs: string[], args: string[], env: Record<string, string>, stdout: 'pipe' | number, cwd = root): ChildProcess {
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--expose-gc', '--import', 'tsx', '--import', './bench/helpers/memory-probe.ts', '--import', './bench/helpers/cpu-probe.ts', ...args],
    {
      cwd,
      env: { ...process.env, BENCH_MEMORY_DIR: memoryDir, ...env },
      // The IPC channel carries the CPU probe's readings (bench/helpers/cpu-probe.ts).
      stdio: ['ignore', stdout, stdout === 'pipe' ? 'inherit' : stdout, 'ipc'],
    },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * `sqliteCacheSize`: every `PRAGMA cache_size` of the server set to this instead
 * (bench/helpers/sqlite-cache.ts), to tell its page cache from the rest of its memory. `tree`: the
 * server of another checkout (with node_modules), e.g. the main branch's beside a change.
 */
export async function startOurs(label: string, opts: { profile?: boolean; sqliteCacheSize?: number; tree?: string } = {}): Promise<ServerProcess> {
  const logFile = path.join(workDir, `ours-${label}.log`);
  const fd = openSync(logFile, 'a');
  // With the Node flags `npm start` gives it (src/node-flags.ts): the server as it runs.
  const nodeArgs: string[] = [...SERVER_NODE_FLAGS, ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  // BENCH_OURS_NODE_ARGS (e.g. "--trace-gc") adds node flags to our server, for diagnosis.
  nodeArgs.push(...(process.env.BENCH_OURS_NODE_ARGS?.split(' ').filter(Boolean) ?? []));
  const child = spawnNode(
    nodeArgs,
    [
      ...(opts.sqliteCacheSize === undefined ? [] : ['--import', './bench/helpers/sqlite-cache.ts']),
      'src/server.ts',
      '--port',
      '0',
      '--data-dir',
      dataDir,
    ],
    {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...(opts.sqliteCacheSize === undefined ? {} : { BENCH_SQLITE_CACHE_SIZE: String(opts.sqliteCacheSize) }),
    },
    fd,
    opts.tree,
  );
  closeSync(fd);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const match = /"port":(\d+)[^\n]*listening/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { kind: 'ours', child, pid: child.pid!, port: Number(match[1]) };
    await sleep(50);
  }
  throw new Error(`our server did not start; its log:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
}

export function startPeer(kind: 'yws' | 'hocuspocus' | 'floor'): Promise<ServerProcess> {
  const child = spawnNode([], ['bench/collab-peer-server.ts', kind], {}, 'pipe');
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${kind} did not start`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      buffered += String(chunk);
      const match = /"port":(\d+)/.exec(buffered);
      if (match) {
        clearTimeout(timer);
        resolve({ kind, child, pid: child.pid!, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

let probeRequests = 0;

/** Asks the server's preloaded CPU probe (bench/helpers/cpu-probe.ts) over its IPC channel, and waits for the answer. */
function askProbe<T>(child: ChildProcess, message: Record<string, unknown>, answer: string): Promise<T> {
  const id = ++probeRequests;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`process ${child.pid} did not answer the CPU probe`));
    }, 60_000);
    const onMessage = (msg: { type?: string; id?: number }) => {
      if (msg?.type !== answer || msg.id !== id) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(msg as T);
    };
    child.on('message', onMessage);
    child.send({ ...message, id });
  });
}

/**
 * The server process's own process.cpuUsage() (user + system, ms), asked over its IPC channel:
 * exact, where /proc's figure counts in 10 ms ticks.
 */
export async function serverCpuMs(child: ChildProcess): Promise<number> {
  const usage = await askProbe<{ user: number; system: number }>(child, { type: 'cpu-usage' }, 'cpu-usage');
  return (usage.user + usage.system) / 1000;
}

/** Starts V8's CPU profiler in the server process (the probe's inspector session). */
export async function startServerProfile(child: ChildProcess): Promise<void> {
  await askProbe(child, { type: 'profile-start' }, 'profile-started');
}

/** Stops it and has the profile written to `file` (.cpuprofile, for DevTools). */
export async function stopServerProfile(child: ChildProcess, file: string): Promise<void> {
  const answer = await askProbe<{ error?: string }>(child, { type: 'profile-stop', file }, 'profile-stopped');
  if (answer.error) throw new Error(`profile: ${answer.error}`);
}

/** Readings (a second apart) that must agree before a memory figure counts as settled. */
const SETTLED_READINGS = 11;

export interface MemoryReading {
  rssKiB: number;
  /** The anonymous part of RSS (RssAnon): what the process allocated, without mapped files. */
  anonKiB: number;
  heapUsedKiB: number;
  /** The V8 heap's committed size (what of anonymous RSS is the JS heap, free space in it included). */
  heapTotalKiB: number;
  /** Memory outside the V8 heap that V8 knows of (Buffers, ArrayBuffers). */
  externalKiB: number;
  /** The ArrayBuffers (Buffers included) among `external`. */
  arrayBuffersKiB: number;
  /** The committed size of V8's new space (semi-spaces), within heapTotal: emptied by a full GC, not given back. */
  newSpaceKiB: number;
  snapshot?: string;
}

/** Full GC in the server (its memory probe), then its VmRSS and V8 heap figures. */
export async function collectAndMeasure(pid: number, opts: { snapshot?: boolean } = {}): Promise<MemoryReading> {
  const file = path.join(memoryDir, `${pid}.json`);
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { sequence: number }).sequence : 0;
  if (opts.snapshot) writeFileSync(path.join(memoryDir, `${pid}.snapshot-next`), '');
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (existsSync(file)) {
      const usage = JSON.parse(readFileSync(file, 'utf8')) as {
        sequence: number;
        collected: boolean;
        heapUsed: number;
        heapTotal: number;
        external: number;
        arrayBuffers: number;
        spaces?: Record<string, number>;
        snapshot: string | null;
      };
      if (usage.sequence > before) {
        if (!usage.collected) throw new Error('the memory probe could not run the garbage collector');
        // Freed pages go back to the system shortly after a collection.
        await sleep(500);
        const reading = {
          ...residentKiB(pid),
          heapUsedKiB: usage.heapUsed / 1024,
          heapTotalKiB: usage.heapTotal / 1024,
          externalKiB: usage.external / 1024,
          arrayBuffersKiB: usage.arrayBuffers / 1024,
          newSpaceKiB: (usage.spaces?.new_space ?? NaN) / 1024,
        };
        return usage.snapshot ? { ...reading, snapshot: usage.snapshot } : reading;
      }
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} did not answer the memory probe`);
    await sleep(50);
  }
}

/**
 * Readings a second apart until anonymous RSS has stayed within 512 KiB for ten seconds (at most a
 * minute): a process keeps returning memory to the system, in steps seconds apart, for a while
 * after start-up or a burst of work (the figures: bench/RESULTS.md, as for BASELINE_QUIET_MS).
 */
export async function settledReading(pid: number): Promise<MemoryReading> {
  const window: MemoryReading[] = [await collectAndMeasure(pid)];
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await sleep(1_000);
    window.push(await collectAndMeasure(pid));
    if (window.length > SETTLED_READINGS) window.shift();
    const anon = window.map((r) => r.anonKiB);
    if (window.length === SETTLED_READINGS && Math.max(...anon) - Math.min(...anon) < 512) break;
  }
  return window.at(-1)!;
}

/**
 * VmRSS, and its anonymous part RssAnon: what the process allocated. The rest of RSS is mapped
 * files (the node binary, shared libraries, SQLite's WAL index): shared with the page cache,
 * reclaimable, and not what an open document costs.
 */
function residentKiB(pid: number): { rssKiB: number; anonKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status);
    if (!match) throw new Error(`no ${name} for ${pid}`);
    return Number(match[1]);
  };
  return { rssKiB: field('VmRSS'), anonKiB: field('RssAnon') };
}


/**
 * Runs a benchmark's `main` with its server processes and work folder always cleaned up: after
 * `main`, on SIGINT/SIGTERM, and past `limitMs` (the run is then given up). Exits when done: the
 * providers keep timers (awareness renewal, reconnects) that would hold the process.
 */
export function runWithServers(name: string, main: () => Promise<void>, limitMs: number): void {
  const killAll = () => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(workDir, { recursive: true, force: true });
  };
  const limit = setTimeout(() => {
    console.error(`${name}: over ${limitMs / 60_000} minutes, giving up`);
    killAll();
    process.exit(1);
  }, limitMs);
  limit.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  main()
    .catch((err) => {
      console.error(err);
      process.exitCode = 1;
    })
    .finally(async () => {
      await Promise.all([...children].map((child) => stopChild(child)));
      rmSync(workDir, { recursive: true, force: true });
      clearTimeout(limit);
      process.exit(process.exitCode ?? 0);
    });
}
