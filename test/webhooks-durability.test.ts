// Durability of webhook deliveries: the real server (a child process) is killed with SIGKILL while
// a delivery is in flight and more events wait, events are appended while it is down, and after a
// restart on the same database every event arrives (duplicates allowed, none missing), signed, and
// first seen in log order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { databaseFile } from '../src/config';
import { systemClock } from '../src/lib/clock';
import { spawn, type ChildProcess } from 'node:child_process';
import { root, signIn } from './helpers/server-process';
import { emitEvent, startReceiver, until, type Receiver } from './helpers/webhooks';

const EMAIL = 'webhook-crash@example.com';
const PASSWORD = 'crash-password-1';
const dataDir = mkdtempSync(path.join(tmpdir(), 'lms-webhooks-crash-'));
const env = {
  ADMIN_EMAIL: EMAIL,
  ADMIN_PASSWORD: PASSWORD,
  SCRYPT_COST: '1024',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};
let receiver: Receiver | undefined;
const children: ChildProcess[] = [];

/**
 * The server as node itself (`--import tsx`, no tsx wrapper process), so that SIGKILL reaches the
 * process that serves. Resolves once it logs that it listens.
 */
function startServer(): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<NodeJS.Signals | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${buffered}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const port = /"port":(\d+)[^\n]*listening/.exec(buffered)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve({ child, baseUrl: `http://127.0.0.1:${port}`, exited });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (buffered += chunk.toString()));
    void exited.then(() => reject(new Error(`server exited early: ${buffered}`)));
  });
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhook durability', () => {
  it('resumes pending deliveries after a SIGKILL mid-delivery: every event arrives', async () => {
    receiver = await startReceiver();
    // The first message is never answered: the server is killed while it is in flight.
    receiver.script = [{ hang: true }];
    const first = await startServer();
    const token = ((await (await signIn(first.baseUrl, EMAIL, PASSWORD)).json()) as { access_token: string }).access_token;
    const created = await fetch(`${first.baseUrl}/api/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { secret: string };
    receiver.secrets = [hook.secret];

    // Events appended by another connection to the same file, as another writer would.
    const database = openDatabase(databaseFile({ dataDir }));
    try {
      const tenantId = (database.sqlite.prepare("select id from tenants where slug = 'default'").get() as { id: string }).id;
      const userId = (database.sqlite.prepare('select id from users where email = ?').get(EMAIL) as { id: string }).id;
      const emit = (level: number) => emitEvent(database.db, systemClock, tenantId, 'level.reached', { user_id: userId, level, total_xp: level * 10 });
      const emitted = Array.from({ length: 20 }, (_, i) => emit(i + 1));
      await until(() => receiver!.received.length >= 1, 15_000, 'the first delivery to be in flight');
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');
      // Nothing else got through: the one in flight holds the subscription's queue.
      expect(receiver.received).toHaveLength(1);
      // More happens while the server is down.
      for (let i = 21; i <= 30; i++) emitted.push(emit(i));

      await startServer();
      const ids = emitted.map((e) => e.id);
      await until(() => ids.every((id) => receiver!.received.some((r) => r.headers['webhook-id'] === id)), 20_000, 'every event to arrive');
      expect(receiver.unverified).toEqual([]);
      const firstSeen = [...new Set(receiver.received.map((r) => r.headers['webhook-id']))];
      expect(firstSeen).toEqual(ids);
      // At least once: the message in flight at the kill came again, with the same webhook-id.
      expect(receiver.received.filter((r) => r.headers['webhook-id'] === ids[0])).toHaveLength(2);
    } finally {
      database.close();
    }
  }, 60_000);
});
