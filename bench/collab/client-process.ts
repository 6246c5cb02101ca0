// Bench helper, not a benchmark: one client process of bench/collab/run.ts (forked with an IPC
// channel). It holds many stock clients (y-websocket WebsocketProvider over `ws` with disableBc, or
// @hocuspocus/provider for Hocuspocus, or a bare `ws` client for the floor server), every client of one document in this process, so that an
// edit's latency is timed on one clock; or it is the open-loop REST client. It does what the
// parent's messages say and answers each:
//   connect {kind, url, token?, docs, clientsPerDoc}  -> connected {seconds}
//   edit {startInMs, editsPerSecond, seconds, drainMs} -> edited {latencies, edits, ...}
//   rest {url, token, rate, seconds}                   -> rested {latencies, errors, ...}
//   close                                              -> closed (then the process exits)
// Its own event-loop delay (monitorEventLoopDelay) and CPU are reported with each answer, so that a
// saturated client shows beside the figures it skewed. It exits when the parent goes away.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { loopDelay } from '../helpers/loop-delay';
import { bareClient, hocuspocusClient, inBatches, withTimeout, yWebsocketClient, type Client } from './providers';

// Every WebsocketProvider registers a process 'exit' listener.
process.setMaxListeners(0);

type Kind = 'ours' | 'yws' | 'hocuspocus' | 'floor';


export type ToClient =
  | { type: 'connect'; kind: Kind; url: string; token?: string; docs: string[]; clientsPerDoc: number; concurrency: number; syncTimeoutMs: number }
  | { type: 'edit'; startInMs: number; editsPerSecond: number; seconds: number; drainMs: number }
  | { type: 'rest'; url: string; token: string; rate: number; seconds: number; drainMs: number }
  | { type: 'close' };

export interface LoopFigures {
  lagP50: number;
  lagP99: number;
  lagMax: number;
  cpuMs: number;
  wallMs: number;
}

export interface Edited extends LoopFigures {
  type: 'edited';
  latencies: number[];
  edits: number;
  expected: number;
  editsByDoc: number[];
  texts: string[];
  converged: number;
  complete: number;
  unexpectedCloses: number;
}

export interface Rested extends LoopFigures {
  type: 'rested';
  latencies: number[];
  sent: number;
  errors: number;
  /** Requests whose scheduled time this process was late for by more than 5 ms (its own lag). */
  lateSends: number;
}

export type FromClient =
  | { type: 'connected'; seconds: number }
  | Edited
  | Rested
  | { type: 'closed' }
  | { type: 'error'; message: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Measures this process's loop delay and CPU over `work`. */
async function measured<T>(work: () => Promise<T>): Promise<T & LoopFigures> {
  const lag = loopDelay();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const result = await work();
  lag.stop();
  const used = process.cpuUsage(cpu);
  return {
    ...result,
    lagP50: lag.p50(),
    lagP99: lag.p99(),
    lagMax: lag.max(),
    cpuMs: (used.user + used.system) / 1000,
    wallMs: performance.now() - wall,
  };
}

// ---------------------------------------------------------------- live editing

const TOKEN = /\[(\d+)\]/g;
let groups: Client[][] = [];

async function connect(msg: Extract<ToClient, { type: 'connect' }>): Promise<FromClient> {
  const started = performance.now();
  const make = (name: string): Client =>
    msg.kind === 'hocuspocus'
      ? hocuspocusClient(msg.url, name)
      : msg.kind === 'floor'
        ? bareClient(msg.url, name)
        : yWebsocketClient(msg.url, name, msg.token ? { token: msg.token } : {});
  const made = await inBatches(msg.docs, Math.max(1, Math.floor(msg.concurrency / msg.clientsPerDoc)), async (name) => {
    const clients = Array.from({ length: msg.clientsPerDoc }, () => make(name));
    await withTimeout(Promise.all(clients.map((c) => c.synced)), msg.syncTimeoutMs, `sync of ${name}`);
    return clients;
  });
  groups = groups.concat(made);
  return { type: 'connected', seconds: (performance.now() - started) / 1000 };
}

async function edit(msg: Extract<ToClient, { type: 'edit' }>): Promise<Edited> {
  const sentAt: number[] = [];
  const latencies: number[] = [];
  const editsByDoc = new Array<number>(groups.length).fill(0);
  for (const group of groups) {
    for (const client of group) {
      client.text.observe((event) => {
        if (event.transaction.local) return;
        const now = performance.now();
        for (const op of event.delta) {
          if (typeof op.insert !== 'string') continue;
          TOKEN.lastIndex = 0;
          for (let m = TOKEN.exec(op.insert); m; m = TOKEN.exec(op.insert)) {
            const sent = sentAt[Number(m[1])];
            if (sent !== undefined) latencies.push(now - sent);
          }
        }
      });
    }
  }
  const figures = await measured(async () => {
    const period = 1000 / msg.editsPerSecond;
    const editsPerClient = Math.round(msg.editsPerSecond * msg.seconds);
    const t0 = performance.now() + msg.startInMs;
    // Each client edits on its own fixed schedule (random phase), corrected for timer drift.
    await Promise.all(
      groups.flatMap((group, docIndex) =>
        group.map(
          (client) =>
            new Promise<void>((done) => {
              const offset = Math.random() * period;
              let k = 0;
              const tick = () => {
                const id = sentAt.length;
                sentAt.push(performance.now());
                editsByDoc[docIndex]! += 1;
                // Appending never splits another client's token, so each arrives whole in one delta.
                client.text.insert(client.text.length, `[${id}]`);
                k += 1;
                if (k >= editsPerClient) return done();
                setTimeout(tick, Math.max(0, t0 + offset + k * period - performance.now()));
              };
              setTimeout(tick, Math.max(0, t0 + offset - performance.now()));
            }),
        ),
      ),
    );
    const clientsPerDoc = groups[0]?.length ?? 0;
    const expected = sentAt.length * (clientsPerDoc - 1);
    const end = performance.now();
    while (latencies.length < expected && performance.now() - end < msg.drainMs) await sleep(20);
    return { expected };
  });
  let converged = 0;
  let complete = 0;
  const allTexts = groups.map((group) => group.map((c) => c.text.toString()));
  allTexts.forEach((group, i) => {
    if (group.every((t) => t === group[0])) converged += 1;
    if (group.every((t) => (t.match(TOKEN) ?? []).length === editsByDoc[i])) complete += 1;
  });
  return {
    type: 'edited',
    ...figures,
    latencies,
    edits: sentAt.length,
    editsByDoc,
    texts: allTexts.map((g) => g[0] ?? ''),
    converged,
    complete,
    unexpectedCloses: groups.flat().reduce((n, c) => n + c.unexpectedCloses, 0),
  };
}

// ---------------------------------------------------------------- open-loop REST

/**
 * `rate` requests per second on a fixed schedule, sent when due whether or not earlier ones have
 * answered (open loop); each latency runs from its scheduled time, so a stalled server is charged
 * for the requests that queued behind the stall (no coordinated omission).
 */
async function rest(msg: Extract<ToClient, { type: 'rest' }>): Promise<Rested> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(msg.url);
  const latencies: number[] = [];
  let errors = 0;
  let lateSends = 0;
  const total = Math.round(msg.rate * msg.seconds);
  const period = 1000 / msg.rate;
  const result = await measured(async () => {
    let answered = 0;
    let allAnswered!: () => void;
    const done = new Promise<void>((resolve) => (allAnswered = resolve));
    const finish = () => {
      answered += 1;
      if (answered === total) allAnswered();
    };
    const t0 = performance.now() + 50;
    let next = 0;
    const sendDue = () => {
      const now = performance.now();
      while (next < total && t0 + next * period <= now) {
        const scheduled = t0 + next * period;
        if (now - scheduled > 5) lateSends += 1;
        next += 1;
        const req = http.request(
          { agent, host: target.hostname, port: target.port, path: target.pathname, headers: { Authorization: `Bearer ${msg.token}` } },
          (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === 200) latencies.push(performance.now() - scheduled);
              else errors += 1;
              finish();
            });
          },
        );
        req.on('error', () => {
          errors += 1;
          finish();
        });
        req.end();
      }
      if (next < total) setTimeout(sendDue, Math.max(0, t0 + next * period - performance.now()));
    };
    setTimeout(sendDue, Math.max(0, t0 - performance.now()));
    await Promise.race([done, sleep(msg.seconds * 1000 + 50 + msg.drainMs)]);
    return {};
  });
  agent.destroy();
  return { type: 'rested', ...result, latencies, sent: total, errors: total - latencies.length, lateSends };
}

// ---------------------------------------------------------------- the channel

function send(message: FromClient): Promise<void> {
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}

process.on('message', (msg: ToClient) => {
  const answer = async (): Promise<FromClient> => {
    switch (msg.type) {
      case 'connect':
        return connect(msg);
      case 'edit':
        return edit(msg);
      case 'rest':
        return rest(msg);
      case 'close':
        for (const client of groups.flat()) client.destroy();
        groups = [];
        return { type: 'closed' };
    }
  };
  answer()
    .catch((err: Error): FromClient => ({ type: 'error', message: err.stack ?? err.message }))
    .then(send)
    .then(() => {
      // Providers keep timers (awareness renewal, reconnects): leave without waiting for them.
      if (msg.type === 'close') process.exit(0);
    });
});
process.on('disconnect', () => process.exit(0));
