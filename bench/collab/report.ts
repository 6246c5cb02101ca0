// The live-editing benchmark's report: summaries over the rounds, the tables, the verdict against
// the goal of issue 7, and the generated part of its section of bench/RESULTS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RssResult, WorkloadResult } from './measures';
import { ALL_KINDS, ALL_WORKLOADS, BASELINE_QUIET_MS, IDLE_DOCS, KINDS, LABEL, ROUNDS, SETTLE_MS, WARMUP_DOCS, WORKLOADS, root, type Workload } from './options';

// ---------------------------------------------------------------- report

export const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

export function workloadLine(w: Workload): string {
  return `${w.docs} documents × ${w.clientsPerDoc} clients, ${w.editsPerSecond} edits/s each for ${w.seconds} s`;
}

/**
 * One server on one workload over every round: p50 and p99 are the medians of the rounds', max and
 * the client loop delay the largest, the rates and CPU share means, and the counts sums.
 */
interface WorkloadSummary
  extends Pick<
    WorkloadResult,
    | 'kind'
    | 'workload'
    | 'edits'
    | 'expected'
    | 'observed'
    | 'lost'
    | 'p50'
    | 'p99'
    | 'max'
    | 'deliveriesPerSecond'
    | 'converged'
    | 'complete'
    | 'serverEqualLive'
    | 'serverEqualReloaded'
    | 'logComplete'
    | 'serverCpuPct'
    | 'serverCpuMsPerEdit'
    | 'lagP99'
    | 'lagMax'
  > {
  rounds: WorkloadResult[];
  /** How many documents the rounds held in all (the workload's documents × rounds). */
  docs: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summariseWorkloads(results: WorkloadResult[]): WorkloadSummary[] {
  const summaries: WorkloadSummary[] = [];
  for (const w of WORKLOADS) {
    for (const kind of KINDS) {
      const rounds = results.filter((r) => r.kind === kind && r.workload === w).sort((a, b) => a.round - b.round);
      if (rounds.length === 0) continue;
      const sum = (f: (r: WorkloadResult) => number) => rounds.reduce((n, r) => n + f(r), 0);
      const optionalSum = (f: (r: WorkloadResult) => number | undefined) =>
        rounds.every((r) => f(r) !== undefined) ? sum((r) => f(r)!) : undefined;
      const edits = sum((r) => r.edits);
      summaries.push({
        kind,
        workload: w,
        rounds,
        edits,
        expected: sum((r) => r.expected),
        observed: sum((r) => r.observed),
        lost: sum((r) => r.lost),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        max: Math.max(...rounds.map((r) => r.max)),
        deliveriesPerSecond: sum((r) => r.deliveriesPerSecond) / rounds.length,
        converged: sum((r) => r.converged),
        complete: sum((r) => r.complete),
        docs: w.docs * rounds.length,
        serverEqualLive: optionalSum((r) => r.serverEqualLive),
        serverEqualReloaded: optionalSum((r) => r.serverEqualReloaded),
        logComplete: optionalSum((r) => r.logComplete),
        serverCpuPct: sum((r) => r.serverCpuPct) / rounds.length,
        serverCpuMsPerEdit: sum((r) => r.serverCpuMsPerEdit * r.edits) / edits,
        lagP99: Math.max(...rounds.map((r) => r.lagP99)),
        lagMax: Math.max(...rounds.map((r) => r.lagMax)),
      });
    }
  }
  return summaries;
}

export function workloadTable(summaries: WorkloadSummary[]): string[] {
  const lines = [
    '| Server | Workload | edits | deliveries (expected) | lost | p50 ms | p99 ms | p99 ms by round | max ms | deliveries/s | converged | server CPU (ms per edit) | client loop delay p99 / max ms |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|',
  ];
  for (const r of summaries) {
    const docs = r.docs;
    let converged = `${r.converged}/${docs} identical, ${r.complete}/${docs} complete`;
    if (r.serverEqualLive !== undefined) {
      converged += `; server copy ${r.serverEqualLive}/${docs} live, ${r.serverEqualReloaded}/${docs} reloaded; log ${r.logComplete}/${docs}`;
    }
    lines.push(
      `| ${LABEL[r.kind]} | ${r.workload.name} | ${r.edits} | ${r.observed} (${r.expected}) | ${r.lost} | ${fmt(r.p50)} | ${fmt(r.p99)} | ` +
        `${r.rounds.map((x) => fmt(x.p99)).join(' / ')} | ${fmt(r.max)} | ${Math.round(r.deliveriesPerSecond)} | ${converged} | ` +
        `${Math.round(r.serverCpuPct)}% (${fmt(r.serverCpuMsPerEdit, 2)}) | ${fmt(r.lagP99)} / ${fmt(r.lagMax)} |`,
    );
  }
  return lines;
}

/** One server's idle readings over every round; the figures are the medians of the valid rounds'. */
interface IdleSummary extends Pick<RssResult, 'kind' | 'docs' | 'anonPerDocKiB' | 'perDocKiB' | 'heapPerDocKiB' | 'connectSeconds'> {
  rounds: RssResult[];
  /** The round whose anonymous RSS per document is the median (the lower middle for an even count). */
  middle: RssResult;
}

export function summariseIdle(results: RssResult[]): IdleSummary[] {
  return KINDS.flatMap((kind) => {
    const rounds = results.filter((r) => r.kind === kind).sort((a, b) => a.round - b.round);
    // A baseline above the loaded reading (memory freed meanwhile) says nothing about documents:
    // such a round is listed but left out of the medians.
    const readings = rounds.filter((r) => r.anonPerDocKiB > 0);
    if (readings.length === 0) return [];
    const byAnon = [...readings].sort((a, b) => a.anonPerDocKiB - b.anonPerDocKiB);
    return [
      {
        kind,
        docs: rounds[0]!.docs,
        rounds,
        middle: byAnon[Math.floor((byAnon.length - 1) / 2)]!,
        anonPerDocKiB: median(readings.map((r) => r.anonPerDocKiB)),
        perDocKiB: median(readings.map((r) => r.perDocKiB)),
        heapPerDocKiB: median(readings.map((r) => r.heapPerDocKiB)),
        connectSeconds: median(readings.map((r) => r.connectSeconds)),
      },
    ];
  });
}

export function rssTable(summaries: IdleSummary[]): string[] {
  const mib = (kib: number) => (kib / 1024).toFixed(1);
  return [
    '| Server | idle documents | RSS before → with clients (MiB) | anonymous RSS before → with clients (MiB) | anonymous RSS per document (KiB) | by round | RSS per document (KiB) | V8 heap + external per document (KiB) | connect + sync all (s) |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|',
    ...summaries.map(
      (r) =>
        `| ${LABEL[r.kind]} | ${r.docs} | ${mib(r.middle.baseline.rssKiB)} → ${mib(r.middle.loaded.rssKiB)} | ` +
          `${mib(r.middle.baseline.anonKiB)} → ${mib(r.middle.loaded.anonKiB)} | ${fmt(r.anonPerDocKiB)} | ` +
          `${r.rounds.map((x) => (x.anonPerDocKiB > 0 ? fmt(x.anonPerDocKiB) : `no reading (${fmt(x.anonPerDocKiB)})`)).join(' / ')} | ${fmt(r.perDocKiB)} | ${fmt(r.heapPerDocKiB)} | ${fmt(r.connectSeconds)} |`,
    ),
  ];
}

export interface Verdict {
  ok: boolean;
  lines: string[];
}

export function judge(workloads: WorkloadSummary[], rss: IdleSummary[]): Verdict {
  const lines: string[] = [];
  let ok = true;
  for (const w of WORKLOADS) {
    const ours = workloads.find((r) => r.kind === 'ours' && r.workload === w)!;
    const peers = workloads.filter((r) => r.kind !== 'ours' && r.workload === w);
    const best = peers.reduce((a, b) => (a.p99 <= b.p99 ? a : b));
    const pass = ours.p99 <= best.p99 && ours.lost === 0 && ours.converged === ours.docs;
    ok &&= pass;
    lines.push(
      `${pass ? 'PASS' : 'MISS'} workload ${w.name}: our median p99 ${fmt(ours.p99)} ms vs best peer (${LABEL[best.kind]}) ${fmt(best.p99)} ms; ` +
        `lost ${ours.lost}, converged ${ours.converged}/${ours.docs}`,
    );
  }
  // Summaries hold only valid readings (see summariseIdle): a server without one leaves no verdict.
  const ours = rss.find((r) => r.kind === 'ours');
  const peers = rss.filter((r) => r.kind !== 'ours');
  if (!ours || peers.length < ALL_KINDS.length - 1) {
    lines.push('NO READING idle memory: a server had no round whose loaded reading was above its baseline');
    return { ok: false, lines };
  }
  const best = peers.reduce((a, b) => (a.anonPerDocKiB <= b.anonPerDocKiB ? a : b));
  const pass = ours.anonPerDocKiB <= best.anonPerDocKiB;
  ok &&= pass;
  lines.push(
    `${pass ? 'PASS' : 'MISS'} idle memory: ours ${fmt(ours.anonPerDocKiB)} KiB of anonymous RSS per document (median) vs best peer ` +
      `(${LABEL[best.kind]}) ${fmt(best.anonPerDocKiB)} KiB (VmRSS: ours ${fmt(ours.perDocKiB)}, ${LABEL[best.kind]} ${fmt(best.perDocKiB)} KiB)`,
  );
  return { ok, lines };
}

const SECTION = '## Live editing (issue 7)';
const GENERATED_END = '<!-- end of bench/collab.ts figures -->';

/** Replaces the generated part of this benchmark's section; anything written below the marker stays. */
export function writeResults(body: string[]): void {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const generated = [SECTION, '', ...body, '', GENERATED_END].join('\n');
  const start = current.indexOf(SECTION);
  let next: string;
  if (start === -1) {
    next = `${current.trimEnd()}\n\n${generated}\n`;
  } else {
    const afterHeading = start + SECTION.length;
    const nextSection = current.indexOf('\n## ', afterHeading);
    const sectionEnd = nextSection === -1 ? current.length : nextSection + 1;
    const marker = current.indexOf(GENERATED_END, afterHeading);
    const kept = marker !== -1 && marker < sectionEnd ? current.slice(marker + GENERATED_END.length, sectionEnd) : '\n';
    next = `${current.slice(0, start)}${generated}${kept.startsWith('\n') ? kept : `\n${kept}`}${current.slice(sectionEnd)}`;
  }
  writeFileSync(file, next);
}


/** The generated part of the "Live editing (issue 7)" section of bench/RESULTS.md. */
export function resultsBody(run: {
  machine: string;
  loadBefore: number[];
  loadAfter: number[];
  workloadResults: WorkloadResult[];
  summaries: WorkloadSummary[];
  idleSummaries: IdleSummary[];
  verdict: Verdict;
}): string[] {
  const { machine, loadBefore, loadAfter, workloadResults, summaries, idleSummaries, verdict } = run;
  const lagWorst = Math.max(...workloadResults.map((r) => r.lagP99));
  return [
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npx tsx bench/collab.ts\`. Machine: ${machine} ` +
      `(2 cores shared by the servers, the clients and whatever else ran; load average ${loadBefore[0]!.toFixed(2)} before, ` +
      `${loadAfter[0]!.toFixed(2)} after).`,
    '',
    'Each server in its own child process on 127.0.0.1: ours is the real server (`src/server.ts`, every update appended to ' +
      'the SQLite log before it is broadcast); @y/websocket-server 0.1.1 runs `setupWSConnection` in memory (no YPERSISTENCE); ' +
      'Hocuspocus 3.4 runs with no extensions (in memory). All clients run in the benchmark process, one WebSocket each: stock ' +
      'y-websocket `WebsocketProvider` (`ws`, `disableBc: true`) for ours and y-websocket-server, `@hocuspocus/provider` 3 for Hocuspocus.',
    '',
    `Workloads: A = ${workloadLine(ALL_WORKLOADS[0]!)}; B = ${workloadLine(ALL_WORKLOADS[1]!)}. ` +
      'An edit appends a small token (`[n]`, 3–8 bytes) to the Y.Text `content`; latency runs from just before the edit at ' +
      'one client to its arrival (Y.Text observer) at each other client of the document, over all (edit, receiver) pairs. ' +
      '"lost" = expected deliveries not observed within 10 s after the last edit. "converged": all clients of a document ' +
      'hold the same text / hold every edit made to it; for ours also the server copy (`GET /api/documents/{id}?include=content`) ' +
      'while live and again after the last client left (compacted, unloaded and reloaded from SQLite), and the change history ' +
      '(`/changes`) holding exactly one row per edit. Server CPU is % of one core over the workload (edits and drain), and ' +
      'CPU milliseconds per edit, fan-out included.',
    '',
    `The workloads ran in ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each server once per workload and round, the servers' order ` +
      'rotating so that each ran first, second and last once (fresh documents every time). p50 and p99 are the median of ' +
      "the rounds' figures, each round's p99 is listed, and the other columns add the rounds up (max: the largest).",
    '',
    ...workloadTable(summaries),
    '',
    `Idle memory, in ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} as above (the figures are the medians; before → with clients from the ` +
      `median round): a fresh server process, ${WARMUP_DOCS} documents opened and closed first, then ${BASELINE_QUIET_MS / 1000} s of quiet ` +
      `and the baseline; then ${IDLE_DOCS} documents each with one connected, synced, idle client, and ${SETTLE_MS / 1000} s more. ` +
      'Each reading is VmRSS and its anonymous part RssAnon from /proc/<pid>/status right after two full garbage collections, ' +
      'which every server process (ours and the peers alike) runs on SIGUSR2 through a preloaded probe ' +
      '(`bench/helpers/memory-probe.ts`, `--expose-gc`); the V8 figure is process.memoryUsage() heapUsed + external at the same ' +
      'moments. A reading counts once anonymous RSS has stayed within 512 KiB for ten seconds (V8 returns unused heap pages ' +
      'in steps seconds apart after start-up). The goal is judged on anonymous RSS, the memory the documents and their ' +
      'connections take; the rest of RSS is mapped files (the node binary, libraries), shared and reclaimable.',
    '',
    ...rssTable(idleSummaries),
    '',
    `Client process: worst event-loop delay p99 ${fmt(lagWorst)} ms (monitorEventLoopDelay at 10 ms, net of its interval), ` +
      `longest GC pause ${fmt(Math.max(...workloadResults.map((r) => r.clientGcMaxMs)))} ms, ` +
      `CPU ${summaries.map((r) => `${r.workload.name}/${r.kind} ${Math.round(median(r.rounds.map((x) => x.clientCpuPct)))}%`).join(', ')} ` +
      'of one core (median of the rounds).',
    '',
    'Goal (issue 7): our p99 no worse than the best peer and our RSS per idle document no more than the best peer:',
    '',
    ...verdict.lines.map((l) => `- ${l}`),
  ];
}
