// The documentation a user gets with the repository stands alone and follows the code: no
// pointer to files outside it, every close code of the hub and every problem code explained.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLOSE } from '../collab/hub';
import { errorCodes } from '../src/http/errors';

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const docs = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('the documentation', () => {
  it('points to nothing outside the repository, and the README links the conventions and live editing', () => {
    for (const file of docs) expect(read(file), file).not.toMatch(/\.\.\/shared|\bAPI\.md\b|\bDESIGN\.md\b/);
    const readme = read('README.md');
    for (const linked of ['docs/api-conventions.md', 'docs/live-editing.md']) {
      expect(readme).toContain(`](${linked})`);
      expect(read(linked).length).toBeGreaterThan(500);
    }
  });

  it('explains every close code of the live-editing hub', () => {
    const page = read('docs/live-editing.md');
    for (const [name, code] of Object.entries(CLOSE)) expect(page, name).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });

  it('lists every problem code with its status', () => {
    const page = read('docs/api-conventions.md');
    // Declared but sent by nothing: unacceptable requests are validation_failed too.
    const unused = new Set(['unprocessable']);
    for (const [code, status] of Object.entries(errorCodes).filter(([code]) => !unused.has(code))) {
      expect(page, code).toMatch(new RegExp(`^\\| ${status} \\| \`${code}\` \\|`, 'm'));
    }
  });
});
