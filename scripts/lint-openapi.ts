// Lints the OpenAPI document the server serves, as client generators read it: writes
// /api/openapi.json of an app built as the tests build it to a temporary file, then runs
// `redocly lint` on it with the repository's redocly.yaml. Exits with redocly's status.
// Run: npm run lint:openapi  (CI runs it after the typecheck).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { servedOpenApiDocument } from '../test/helpers/openapi';

const root = path.resolve(import.meta.dirname, '..');
const redocly = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'lms-openapi-'));
let status = 1;
try {
  const file = path.join(dir, 'openapi.json');
  writeFileSync(file, `${JSON.stringify(await servedOpenApiDocument(), null, 2)}\n`);
  const run = spawnSync(process.execPath, [redocly, 'lint', file, '--config', path.join(root, 'redocly.yaml'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    // No usage report or update check from CI (nor a network wait where there is none).
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  if (run.error) throw run.error;
  status = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
