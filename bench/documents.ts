// Documents benchmark (issue 6): search suggestions over 10,000 documents.
//
// 10,000 documents (title + ~150-word Markdown body each) are created through the real document
// service (rows, owner grant, Yjs body through the store, FTS index) in a real SQLite file. Then
// `GET /api/documents/suggestions?q=` is measured for a broad prefix (every document matches), a
// medium one (~2%), a rare word (~10 documents) and two words, for three callers: one who sees all
// 10,000, one who sees 100 through a group grant, one who sees none (every match is filtered out).
// Two figures per case: the query alone (the service function, 200 runs), and the whole HTTP
// round trip on 127.0.0.1 (autocannon, 1 connection, 3 s). Target: under 20 ms.
//   npx tsx bench/documents.ts
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { analyze, openDatabase } from '../db/client';
import { documentGrants, groupMembers, groups, users } from '../db/schema';
import { createApp } from '../src/app';
import { documentServices, insertDocument, suggest } from '../src/documents/service';
import { newId } from '../src/lib/ids';
import { benchDeps } from './helpers/common';

const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 10_000);
const BODY_WORDS = 150;
const QUERY_RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 200);
const HTTP_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 3);
const TARGET_MS = 20;

const dir = mkdtempSync(path.join(tmpdir(), 'lms-bench-documents-'));
const database = openDatabase(path.join(dir, 'bench.sqlite'));

/** A deterministic pseudo-random stream, so every run searches the same corpus. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const syllables = ['ka', 'lo', 'mi', 'ren', 'sa', 'tor', 'vu', 'zel', 'qua', 'nix', 'pe', 'dra', 'os', 'fin', 'gul', 'bey'];
const rand = random(42);
const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)]!;
// 4,000 invented words with a skewed (Zipf-like) frequency, plus common English glue words.
const vocabulary = Array.from({ length: 4000 }, (_, i) => {
  let w = '';
  for (let n = 2 + (i % 3), k = i + 1; n > 0; n--, k = Math.floor(k / 7) + n * 13) w += syllables[k % syllables.length];
  return w;
});
const glue = ['the', 'and', 'of', 'to', 'in', 'is', 'for', 'with'];
const word = () => (rand() < 0.3 ? pick(glue) : vocabulary[Math.floor(vocabulary.length * rand() ** 3)]!);

function markdown(i: number): string {
  const words = Array.from({ length: BODY_WORDS }, word);
  // A word that only ten documents contain, and one that 2% contain (some of them visible to the group).
  if (i % 1000 === 0) words.push('xylophone');
  if (i % 50 === 0) words.push('marmalade');
  return `# Notes ${i}\n\n${words.slice(0, 70).join(' ')}.\n\n${words.slice(70).join(' ')}.\n`;
}

async function main() {
  const deps = await benchDeps(database);
  const db = database.db;
  const tenantId = db.select().from(users).get()!.tenantId;
  const now = new Date().toISOString();
  const person = (name: string) =>
    db.insert(users).values({ id: newId(), tenantId, email: `${name}@bench.example.com`, name, createdAt: now, updatedAt: now }).returning().get();
  const alice = person('alice');
  const bob = person('bob');
  const carol = person('carol');
  const readers = db.insert(groups).values({ id: newId(), tenantId, name: 'readers', createdAt: now, updatedAt: now }).returning().get();
  db.insert(groupMembers).values({ groupId: readers.id, userId: bob.id, tenantId, createdAt: now }).run();

  const seedStarted = performance.now();
  const svc = documentServices(deps);
  const actor = { userId: alice.id, tenantId, role: 'member' as const };
  db.transaction((tx) => {
    for (let i = 0; i < DOCUMENTS; i++) {
      const content = markdown(i);
      const doc = insertDocument(svc, actor, { title: `${pick(vocabulary)} ${pick(vocabulary)} ${i}`, content });
      svc.search.write(doc.id, content);
      if (i % 100 === 0) {
        tx.insert(documentGrants)
          .values({ id: newId(), documentId: doc.id, tenantId, groupId: readers.id, role: 'viewer', grantedBy: alice.id, createdAt: now, updatedAt: now })
          .run();
      }
    }
  });
  analyze(database.sqlite, true);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const callers = [
    { name: 'sees 10,000', user: alice },
    { name: 'sees 100 (group)', user: bob },
    { name: 'sees none', user: carol },
  ];
  const queries = [
    { name: 'broad prefix "th"', q: 'th' },
    { name: 'medium "marma"', q: 'marma' },
    { name: 'rare "xylo"', q: 'xylo' },
    { name: 'two words "the marm"', q: 'the marm' },
  ];

  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;

  const rows: string[] = [];
  let failed = false;
  try {
    for (const caller of callers) {
      const token = await deps.signer.sign({ id: caller.user.id, tenantId, role: 'member' });
      const callerActor = { userId: caller.user.id, tenantId, role: 'member' as const };
      for (const query of queries) {
        const times: number[] = [];
        let hits = 0;
        for (let i = 0; i < QUERY_RUNS; i++) {
          const started = performance.now();
          hits = suggest(db, callerActor, query.q).length;
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;

        const url = `http://127.0.0.1:${port}/api/documents/suggestions?q=${encodeURIComponent(query.q)}`;
        const probe = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
        if (probe.status !== 200) throw new Error(`${url}: ${probe.status} ${await probe.text()}`);
        await probe.arrayBuffer();
        const http = await autocannon({ url, connections: 1, duration: HTTP_SECONDS, headers: { Authorization: `Bearer ${token}` }, workers: 1 });
        const errors = http.errors + http.non2xx + http.timeouts;
        const ok = at(0.5) < TARGET_MS && http.latency.p50 < TARGET_MS && errors === 0;
        failed ||= !ok;
        rows.push(
          `| ${caller.name} | ${query.name} | ${hits} | ${at(0.5).toFixed(2)} | ${at(0.99).toFixed(2)} | ${http.latency.p50} | ${http.latency.p99} | ` +
            `${Math.round(http.requests.average)} | ${errors} | ${ok ? 'met' : 'MISSED'} |`,
        );
      }
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }

  console.log(`Documents: search suggestions over ${DOCUMENTS} documents of ~${BODY_WORDS} words (seeded through the store in ${seedSeconds.toFixed(1)} s)`);
  console.log(`query: ${QUERY_RUNS} runs of the service call; HTTP: autocannon, 1 connection × ${HTTP_SECONDS} s on 127.0.0.1; Node ${process.version}, ${cpus().length} CPUs`);
  console.log('| caller | query | results | query p50 ms | query p99 ms | HTTP p50 ms | HTTP p99 ms | req/s | errors | < 20 ms |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
