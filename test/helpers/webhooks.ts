// A real HTTP receiver on 127.0.0.1 for webhook tests: it verifies every message's signature with
// the `standardwebhooks` package (an independent verifier, not our code) against the secrets it
// is told, records what arrived, and answers as the test scripts it (status, delay, no answer).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { appendEvent } from '../../src/events/log';
import type { EventData, EventType } from '../../src/events/types';
import type { Clock } from '../../src/lib/clock';
import type { Db } from '../../db/client';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Which of the receiver's secrets verified it (indexes into `secrets`). */
  verifiedBy: number[];
  arrivedAt: number;
}

export type Answer = {
  status?: number;
  delayMs?: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  hang?: boolean;
  /** Answer only once this settles (then after `delayMs`, if any): the test decides when an attempt in flight ends. */
  heldUntil?: Promise<unknown>;
};

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Secrets that verify messages (set after creating or rotating a subscription). */
  secrets: string[];
  /** How to answer the next requests (in order); then `fallback`. */
  script: Answer[];
  fallback: Answer;
  /** Messages that no secret verified: must stay empty. */
  unverified: Received[];
  close(): Promise<void>;
}

/**
 * `clock`: the verifier checks the webhook-timestamp against its "now" (5 minutes of tolerance),
 * so it is read from the test's clock, which is the server's.
 */
export async function startReceiver(clock?: Clock): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    secrets: [],
    script: [],
    fallback: { status: 204 },
    unverified: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const verifiedBy: number[] = [];
      receiver.secrets.forEach((secret, i) => {
        const realNow = Date.now;
        if (clock) Date.now = () => clock.now().getTime();
        try {
          new Webhook(secret).verify(body, headers);
          verifiedBy.push(i);
        } catch {
          // not this secret
        } finally {
          Date.now = realNow;
        }
      });
      let json: Received['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: '?', timestamp: '', data: {} };
      }
      const entry: Received = { path: req.url ?? '', headers, body, json, verifiedBy, arrivedAt: performance.now() };
      receiver.received.push(entry);
      if (verifiedBy.length === 0) receiver.unverified.push(entry);
      const answer = receiver.script.shift() ?? receiver.fallback;
      if (answer.hang) return;
      const reply = () => {
        res.writeHead(answer.status ?? 204, answer.headers);
        res.end(answer.body);
      };
      const answerNow = () => (answer.delayMs ? setTimeout(reply, answer.delayMs) : reply());
      if (answer.heldUntil) void answer.heldUntil.finally(answerNow);
      else answerNow();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/**
 * Appends an event to the log the way an area does, in its own transaction. Used where no API
 * action appends this type yet on this branch.
 */
export function emitEvent<T extends EventType>(db: Db, clock: Clock, tenantId: string, type: T, data: EventData<T>, subjectId?: string) {
  return appendEvent(db, clock, { tenantId, type, actorId: null, subject: { type: type.split('.')[0]!, id: subjectId ?? String((data as { user_id?: string }).user_id ?? 'x') }, data });
}

export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
