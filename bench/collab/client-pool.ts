// The client processes of the live-editing benchmarks (bench/collab/run.ts, bench/collab/idle.ts):
// each a forked bench/collab/client-process.ts holding many clients, asked one question at a time
// over its IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FromClient, ToClient } from './client-process';
import { root } from './options';
import { children, type ServerProcess } from './servers';

export class ClientProcess {
  readonly child: ChildProcess;
  private waiting: ((msg: FromClient) => void) | null = null;

  constructor() {
    this.child = fork(path.join(import.meta.dirname, 'client-process.ts'), [], {
      execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    children.add(this.child);
    this.child.once('exit', () => children.delete(this.child));
    this.child.on('message', (msg: FromClient) => {
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.(msg);
    });
  }

  ask<T extends FromClient>(msg: ToClient): Promise<T> {
    if (this.waiting) throw new Error('one question at a time');
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`client process exited (${code}) before answering ${msg.type}`));
      this.child.once('exit', onExit);
      this.waiting = (answer) => {
        this.child.off('exit', onExit);
        if (answer.type === 'error') reject(new Error(`client process: ${answer.message}`));
        else resolve(answer as T);
      };
      this.child.send(msg);
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.ask({ type: 'close' }).catch(() => this.child.kill('SIGKILL'));
    await Promise.race([exited, sleep(5_000).then(() => this.child.kill('SIGKILL'))]);
  }
}

/** `docs` split in contiguous shares over `procs` processes (all clients of a document in one). */
export function shares<T>(items: T[], procs: number): T[][] {
  const out: T[][] = Array.from({ length: procs }, () => []);
  items.forEach((item, i) => out[Math.floor((i * procs) / items.length)]!.push(item));
  return out;
}

/** Clients connected at once by all client processes together, and how long each may take to sync. */
const CONNECT_CONCURRENCY = 64;
const SYNC_TIMEOUT_MS = 60_000;

export function wsUrl(server: ServerProcess): string {
  return server.kind === 'ours' ? `ws://127.0.0.1:${server.port}/collab` : `ws://127.0.0.1:${server.port}`;
}

/** Connects `clientsPerDoc` clients to each of `names`, the names shared out over the processes; the seconds it took. */
export async function connectShare(
  procs: ClientProcess[],
  server: ServerProcess,
  names: string[],
  clientsPerDoc: number,
  token?: string,
): Promise<number> {
  const started = performance.now();
  await Promise.all(
    shares(names, procs.length).map((share, i) =>
      share.length === 0
        ? Promise.resolve()
        : procs[i]!.ask({
            type: 'connect',
            kind: server.kind,
            url: wsUrl(server),
            token,
            docs: share,
            clientsPerDoc,
            concurrency: Math.ceil(CONNECT_CONCURRENCY / procs.length),
            syncTimeoutMs: SYNC_TIMEOUT_MS,
          }),
    ),
  );
  return (performance.now() - started) / 1000;
}
