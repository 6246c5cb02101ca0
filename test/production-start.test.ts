// `npm start` as an administrator's service manager runs it: the built server (dist/, built first
// when missing or stale) under plain node, and a SIGTERM sent to the npm process itself ends in the
// server's graceful shutdown: no process of the tree is left, and every acknowledged write survives.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectEditor, eventually, synced, type Editor } from './helpers/collab';
import { killChildren, root, signIn, startServer } from './helpers/server-process';

const ADMIN = { email: 'ops@example.org', password: 'ops-password-1' };
const env = { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, SCRYPT_COST: '1024' };
const dataDir = mkdtempSync(path.join(tmpdir(), 'lms-npm-start-'));
const editors: Editor[] = [];

afterAll(() => {
  for (const editor of editors) editor.destroy();
  killChildren();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every process now running, by pid: its parent and its command line. */
function processTable(): Map<number, { ppid: number; cmdline: string }> {
  const table = new Map<number, { ppid: number; cmdline: string }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields after it are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue; // exited, waiting to be reaped
      table.set(Number(name), { ppid: Number(fields[1]), cmdline: readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

function descendantsOf(pid: number): number[] {
  const table = processTable();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const [child, { ppid }] of table) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

async function api(baseUrl: string, method: string, route: string, token: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

describe('npm start', { timeout: 120_000 }, () => {
  it('runs the built server with plain node, and a SIGTERM to npm stops the whole tree cleanly with nothing lost', async () => {
    const npm = await startServer(dataDir, env, { command: ['npm', 'start', '--silent', '--'] });
    expect(existsSync(path.join(root, 'dist', 'src', 'server.js'))).toBe(true);
    const tree = descendantsOf(npm.child.pid!);
    const table = processTable();
    const commands = tree.map((pid) => table.get(pid)?.cmdline ?? '');
    // npm's child is node itself (the script execs it), running the build, not tsx.
    expect(commands.some((c) => /^node --v8-pool-size=0 scripts\/start\.mjs /.test(c))).toBe(true);
    expect(commands.join('\n')).not.toMatch(/tsx|sh -c/);

    const token = ((await (await signIn(npm.baseUrl, ADMIN.email, ADMIN.password)).json()) as { access_token: string }).access_token;
    const created = await api(npm.baseUrl, 'POST', '/api/documents', token, { title: 'Survives SIGTERM', content: '# Kept\n' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const port = Number(new URL(npm.baseUrl).port);
    const writer = connectEditor(port, id, token);
    const observer = connectEditor(port, id, token);
    editors.push(writer, observer);
    await Promise.all([synced(writer), synced(observer)]);
    for (let i = 0; i < 20; i++) writer.text.insert(writer.text.length, `line ${i}\n`);
    const written = writer.text.toString();
    await eventually(() => observer.text.toString() === written, 10_000, 'the observer received every edit');

    npm.child.kill('SIGTERM');
    const exit = await npm.exited;
    expect(exit.code).toBe(0);
    // The server's own shutdown ran to its end: documents closed, database closed, last line written.
    expect(npm.logs.some((l) => l.signal === 'SIGTERM' && /shutting down/.test(l.msg))).toBe(true);
    expect(npm.logs.at(-1)?.msg).toBe('stopped');
    await eventually(() => {
      const now = processTable();
      return tree.every((pid) => !now.has(pid));
    }, 10_000, 'every process of the tree to end');

    // Started again (through tsx, as the tests run it): the REST write and the live edits are there.
    const again = await startServer(dataDir, env);
    try {
      const token2 = ((await (await signIn(again.baseUrl, ADMIN.email, ADMIN.password)).json()) as { access_token: string }).access_token;
      const read = await api(again.baseUrl, 'GET', `/api/documents/${id}?include=content`, token2);
      expect(read.status).toBe(200);
      expect(read.body.content).toBe(written);
      expect(written.startsWith('# Kept\n')).toBe(true);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });
});
