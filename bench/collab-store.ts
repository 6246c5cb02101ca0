// Document store benchmark (issue 6): cold load of a document with 10,000 logged updates, and
// single-character updates applied through the store with durable logging, on a real SQLite file.
// Issue 21 adds what checking an update costs before it is applied (collab/update-check.ts): for
// the same keystrokes, for a 64 KiB paste, and for a sync step 2 carrying a whole document.
//   npx tsx bench/collab-store.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as Y from 'yjs';
import { openDatabase } from '../db/client';
import { documents, users } from '../db/schema';
import { CONTENT_FIELD, DocumentStore } from '../collab/store';
import { checkUpdate, UpdateProblem } from '../collab/update-check';
import { systemClock } from '../src/lib/clock';
import { newId } from '../src/lib/ids';
import { benchDeps, percentile } from './helpers/common';

const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-store-'));
const database = openDatabase(path.join(dir, 'bench.sqlite'));

async function main() {
  const deps = await benchDeps(database);
  const user = database.db.select().from(users).get()!;
  const newDocument = () => {
    const id = newId();
    const now = new Date().toISOString();
    database.db.insert(documents).values({ id, tenantId: user.tenantId, title: 'bench', createdBy: user.id, createdAt: now, updatedAt: now }).run();
    return id;
  };

  // 1. Write 10,000 single-character updates to one document, as a live editor would.
  const writer = new DocumentStore({ db: database.db, clock: systemClock, compactAfter: Number.MAX_SAFE_INTEGER });
  const docId = newDocument();
  writer.acquire(docId);
  const client = new Y.Doc();
  const text = client.getText(CONTENT_FIELD);
  const pending: Uint8Array[] = [];
  client.on('update', (u: Uint8Array) => pending.push(u));
  const applyTimes: number[] = [];
  const typed: Uint8Array[] = [];
  const started = performance.now();
  for (let i = 0; i < 10_000; i++) {
    text.insert(text.length, String.fromCharCode(97 + (i % 26)));
    const t0 = performance.now();
    const update = pending.pop()!;
    writer.applyUpdate(docId, update, user.id);
    applyTimes.push(performance.now() - t0);
    typed.push(update);
  }
  const elapsed = (performance.now() - started) / 1000;
  applyTimes.sort((a, b) => a - b);

  // 2. Cold loads of that document with its 10,000 log rows uncompacted (the worst case: normally
  //    the store folds the log every 500 updates), by fresh stores that do not compact.
  const loadTimes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const cold = new DocumentStore({ db: database.db, clock: systemClock, compactAfter: Number.MAX_SAFE_INTEGER });
    const t0 = performance.now();
    const loaded = cold.getText(docId);
    loadTimes.push(performance.now() - t0);
    if (loaded.length !== 10_000) throw new Error('wrong text after load');
  }
  loadTimes.sort((a, b) => a - b);

  // 3. The same document as the store normally keeps it: compacted state plus a short log.
  deps.documents.compact(docId);
  const compactedTimes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const cold = new DocumentStore({ db: database.db, clock: systemClock });
    const t0 = performance.now();
    cold.getText(docId);
    compactedTimes.push(performance.now() - t0);
  }
  compactedTimes.sort((a, b) => a - b);

  // 4. The check alone, on the same keystrokes replayed into a bare Y.Doc (and Yjs's own apply beside it).
  const mirror = new Y.Doc();
  const checkTimes: number[] = [];
  const yjsTimes: number[] = [];
  for (const update of typed) {
    const t0 = performance.now();
    if (checkUpdate(update, mirror) instanceof UpdateProblem) throw new Error('a keystroke was refused');
    const t1 = performance.now();
    Y.applyUpdate(mirror, update);
    checkTimes.push(t1 - t0);
    yjsTimes.push(performance.now() - t1);
  }
  checkTimes.sort((a, b) => a - b);
  yjsTimes.sort((a, b) => a - b);
  const timed = (label: string, update: Uint8Array) => {
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      if (checkUpdate(update, mirror) instanceof UpdateProblem) throw new Error(`${label} was refused`);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return `${label} (${(update.byteLength / 1024).toFixed(0)} KiB): check median ${percentile(times, 50).toFixed(2)} ms (200 runs)`;
  };
  const paster = new Y.Doc();
  Y.applyUpdate(paster, Y.encodeStateAsUpdate(mirror));
  const pasteVector = Y.encodeStateVector(paster);
  paster.getText(CONTENT_FIELD).insert(5_000, 'Lorem ipsum dolor sit amet. '.repeat(64 * 1024 / 28));
  const paste = Y.encodeStateAsUpdate(paster, pasteVector);
  // A reconnecting client's step 2 after 2,000 edits of its own at random places (many structs).
  const offline = new Y.Doc();
  Y.applyUpdate(offline, Y.encodeStateAsUpdate(mirror));
  const offlineVector = Y.encodeStateVector(offline);
  for (let i = 0; i < 2_000; i++) offline.getText(CONTENT_FIELD).insert((i * 7919) % offline.getText(CONTENT_FIELD).length, `w${i} `);
  const stepTwo = Y.encodeStateAsUpdate(offline, offlineVector);

  const lines = [
    `apply (durable log, live doc): ${(10_000 / elapsed).toFixed(0)} updates/s over 10,000 single-character updates; per update p50 ${percentile(applyTimes, 50).toFixed(3)} ms, p99 ${percentile(applyTimes, 99).toFixed(3)} ms`,
    `cold load, 10,000 uncompacted updates: median ${percentile(loadTimes, 50).toFixed(1)} ms, max ${loadTimes.at(-1)!.toFixed(1)} ms (20 loads)`,
    `cold load, same document compacted (the normal case): median ${percentile(compactedTimes, 50).toFixed(2)} ms (20 loads)`,
    `update check, per keystroke: p50 ${percentile(checkTimes, 50).toFixed(4)} ms, p99 ${percentile(checkTimes, 99).toFixed(4)} ms (Y.applyUpdate of the same: p50 ${percentile(yjsTimes, 50).toFixed(4)} ms, p99 ${percentile(yjsTimes, 99).toFixed(4)} ms)`,
    timed('update check, a 64 KiB paste', paste),
    timed('update check, a step 2 of 2,000 scattered edits', stepTwo),
  ];
  console.log(lines.join('\n'));
  writer.release(docId);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });
