// The default log destination batches lines into bounded chunks (src/logger.ts): under a burst,
// across turns, with a line longer than a chunk and an exit right after (through closeLog, as the
// server's shutdown exits), every line arrives whole and in order.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeLog, createLogger, LOG_CHUNK_BYTES } from '../src/logger';

const root = path.resolve(import.meta.dirname, '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');

function runChild(perTurn: number, turns: number): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(tsx, [path.join(root, 'test/helpers/logger-child.ts'), String(perTurn), String(turns)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  // A slow reader: the pipe fills, so the child's writes meet EAGAIN and are retried, and some are
  // still in flight when it exits (out of order, or lost, unless the exit waits for them).
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), 2);
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout })));
}

describe('the default log destination', () => {
  it('delivers every line whole, in order, through a burst, a long line and the exit right after', async () => {
    const perTurn = 500;
    const turns = 6;
    const { code, stdout } = await runChild(perTurn, turns);
    expect(code).toBe(0);

    const lines = stdout.split('\n');
    expect(lines.pop()).toBe('');
    const entries = lines.map((line) => JSON.parse(line) as { n: number; msg: string; long?: string });
    expect(entries).toHaveLength(perTurn * turns + 1);
    expect(entries.map((e) => e.n)).toEqual(entries.map((_, i) => i));
    const long = entries.find((e) => e.msg === 'long line');
    expect(long?.long).toBe('é'.repeat(LOG_CHUNK_BYTES * 3));
    expect(entries.filter((e) => e.msg === 'request')).toHaveLength(perTurn * turns);
  });

  it('closeLog does not hold an exit: a destination that never closes times out, one that cannot end resolves at once', async () => {
    const written: string[] = [];
    const stuck = { write: (line: string) => void written.push(line), end: () => {}, once: () => {} };
    const logger = createLogger('info', stuck);
    logger.info('last words');
    const started = performance.now();
    await closeLog(logger, 50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(written.some((l) => l.includes('last words'))).toBe(true);

    const plain = createLogger('info', { write: () => {} });
    const before = performance.now();
    await closeLog(plain, 5_000);
    expect(performance.now() - before).toBeLessThan(1_000);
  });
});
