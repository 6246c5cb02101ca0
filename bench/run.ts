// Runs the benchmarks one after another, each in its own process so that none warms or loads
// the next: every bench/*.ts, or only those named (`npm run bench -- foundation courses`).
// Not benchmarks: this file, helpers named *-server.ts (processes a benchmark starts), files
// starting with `_`, and anything in subfolders.
// Each runs with the Node flags the server runs with (src/node-flags.ts), as `npm start` gives them.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { SERVER_NODE_FLAGS } from '../src/node-flags';

const benchDir = import.meta.dirname;
const root = path.resolve(benchDir, '..');

const isBenchmark = (file: string) =>
  file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('-server.ts') && !file.startsWith('_') && !file.endsWith('.d.ts');

const available = readdirSync(benchDir, { withFileTypes: true })
  .filter((entry) => entry.isFile() && isBenchmark(entry.name))
  .map((entry) => entry.name.replace(/\.ts$/, ''))
  .sort();

const asked = process.argv.slice(2).map((name) => name.replace(/^bench\//, '').replace(/\.ts$/, ''));
const unknown = asked.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${available.join(', ')}`);
  process.exit(2);
}
const selected = asked.length > 0 ? asked : available;

const failed: string[] = [];
for (const name of selected) {
  console.log(`\n=== bench/${name}.ts ===`);
  const result = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', path.join('bench', `${name}.ts`)], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) failed.push(`${name} (${result.signal ?? `exit ${result.status}`})`);
}

// A benchmark exits non-zero when it fails or misses its target.
console.log(`\n${selected.length - failed.length} of ${selected.length} benchmark(s) passed${failed.length ? `; failed or missed: ${failed.join(', ')}` : ''}.`);
process.exitCode = failed.length > 0 ? 1 : 0;
