// The real server (and the admin command) as child processes: start one on a port, read its JSON
// log lines, stop it with a signal, or run a command to its end and keep what it wrote.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { SERVER_NODE_FLAGS } from '../../src/node-flags';

export const root = path.resolve(import.meta.dirname, '..', '..');
export const tsx = path.join(root, 'node_modules', '.bin', 'tsx');

export interface RunningServer {
  child: ChildProcess;
  baseUrl: string;
  logs: Record<string, any>[];
  /** What the server wrote to stdout that is not a log line (the first start's password). */
  printed: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Children still running; a suite's afterAll kills them. */
export const children = new Set<ChildProcess>();

export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}

/**
 * The server as `npm start` runs it: node itself with the server's flags, the TypeScript sources
 * loaded by tsx's loader (`--import tsx`), not through the `tsx` command. That command is a second
 * process that relays a signal to the server and, when the server has not reported it back within
 * 30 ms (its event loop busy for that long, as after a burst of edits on a loaded machine), kills
 * it with SIGKILL and exits 143 (128 + SIGTERM): a graceful stop a test cannot count on.
 */
export const serverCommand = [process.execPath, ...SERVER_NODE_FLAGS, '--import', 'tsx', 'src/server.ts'] as const;

/**
 * Starts the server (serverCommand), or through `command` (e.g. `npm start --`), which is given
 * the server's flags after its own arguments. A signal sent to `child` is the server's own.
 */
export function startServer(
  dataDir: string,
  env: Record<string, string>,
  opts: { port?: number; command?: readonly [string, ...string[]] } = {},
): Promise<RunningServer> {
  const [command, ...args] = opts.command ?? serverCommand;
  const child = spawn(command, [...args, '--port', String(opts.port ?? 0), '--data-dir', dataDir], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const logs: Record<string, any>[] = [];
  let stderr = '';
  let other = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': by then the child's stdout has been read to the end.
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in time; stderr: ${stderr}`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      buffered += String(chunk);
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (!line.trim().startsWith('{')) {
          other += `${line}\n`;
          continue;
        }
        const entry = JSON.parse(line) as Record<string, any>;
        logs.push(entry);
        if (typeof entry.port === 'number' && /listening/.test(entry.msg)) {
          clearTimeout(timer);
          resolve({ child, baseUrl: `http://127.0.0.1:${entry.port}`, logs, printed: () => other, exited });
        }
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in the repository to its end. */
export function runToEnd(command: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

export function signIn(baseUrl: string, email: string, password: string) {
  return fetch(`${baseUrl}/api/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

/** What a failed start or command writes: one line on stderr, no stack trace. */
export function expectOneLine(stderr: string): void {
  expect(stderr.endsWith('\n'), stderr).toBe(true);
  expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
}
