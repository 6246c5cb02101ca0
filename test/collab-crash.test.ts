// Durability: kill the real server process (SIGKILL) right after edits were broadcast, restart it
// on the same database, and every edit any client observed is still in the document.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectEditor, eventually, synced, type Editor } from './helpers/collab';

const EMAIL = 'crash-admin@example.com';
const PASSWORD = 'crash-password-1';
const dataDir = mkdtempSync(path.join(tmpdir(), 'lms-crash-'));
const children: ChildProcess[] = [];
const editors: Editor[] = [];

/** Starts `src/server.ts` on a free port and resolves with the port it logged. */
function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: { ...process.env, ADMIN_EMAIL: EMAIL, ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'info', SCRYPT_COST: '1024' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${buffered}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const entry = JSON.parse(line) as { msg?: string; port?: number };
          if (entry.msg?.startsWith('listening') && entry.port) {
            clearTimeout(timer);
            resolve({ child, port: entry.port });
          }
        } catch {
          // a partial line; wait for the rest
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (buffered += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`server exited early (${code}): ${buffered}`)));
  });
}

async function api(port: number, method: string, route: string, token?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

afterAll(() => {
  for (const e of editors) e.destroy();
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('crash durability', () => {
  it('keeps every edit a client observed across a SIGKILL and restart', async () => {
    const first = await startServer();
    const signIn = await api(first.port, 'POST', '/api/auth/token', undefined, { email: EMAIL, password: PASSWORD });
    expect(signIn.status).toBe(200);
    const token = signIn.body.access_token as string;
    const created = await api(first.port, 'POST', '/api/documents', token, { title: 'Crash test' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const writer = connectEditor(first.port, id, token);
    const observer = connectEditor(first.port, id, token);
    editors.push(writer, observer);
    await Promise.all([synced(writer), synced(observer)]);
    for (let i = 0; i < 50; i++) writer.text.insert(writer.text.length, `edit ${i};`);
    const written = writer.text.toString();
    // Everything the observer has received was broadcast, so it must already be durable.
    await eventually(() => observer.text.toString() === written, 10_000, 'observer received every edit');

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    writer.destroy();
    observer.destroy();

    const second = await startServer();
    const again = await api(second.port, 'POST', '/api/auth/token', undefined, { email: EMAIL, password: PASSWORD });
    const content = await api(second.port, 'GET', `/api/documents/${id}?include=content`, again.body.access_token);
    expect(content.status).toBe(200);
    expect(content.body.content).toBe(written);
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  }, 60_000);
});
