// Child process for test/startup.test.ts: imports the app, as the server does at start, and prints
// the packages that importing it loaded (their names, sorted, one JSON array).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const dir = mkdtempSync(path.join(tmpdir(), 'lms-packages-'));
const file = path.join(dir, 'loaded.txt');
register('./packages-hook.mjs', import.meta.url, { data: { file } });
await import('../../src/app');
const loaded = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify([...loaded].sort()));
