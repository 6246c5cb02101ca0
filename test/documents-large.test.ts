// Documents near DOCUMENT_MAX_BYTES (issue 21): diffs set aside what both sides share at their
// start and end (their output unchanged in meaning, their time bounded), unified diffs keep their
// line numbers, and the search index holds the first MAX_INDEXED_BODY characters of a body.
import { applyPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffTexts, unifiedDiff } from '../src/documents/versions';
import { MAX_INDEXED_BODY } from '../src/documents/search';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { createDoc } from './helpers/documents';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  t = await makeTestApp({ config: { documentBodyLimitBytes: 8 * 1024 * 1024 } });
  owner = await t.newUser();
});
afterAll(() => t?.close());

const lines = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => `Line ${i + seed}: the quick brown fox jumps over the lazy dog.`).join('\n');
const sides = (changes: { op: string; text: string }[]) => ({
  from: changes.filter((c) => c.op !== 'insert').map((c) => c.text).join(''),
  to: changes.filter((c) => c.op !== 'delete').map((c) => c.text).join(''),
});

describe('diffs of large texts', () => {
  it('give back both texts, with the changed units counted as before, for every granularity', () => {
    let seed = 4;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const words = ['alpha', 'beta', ' ', '  ', '\n', '\r\n', '😀', 'é', '.', 'same same'];
    for (let round = 0; round < 200; round++) {
      const from = Array.from({ length: Math.floor(random() * 300) }, () => words[Math.floor(random() * words.length)]).join('');
      let to = from;
      for (let k = Math.floor(random() * 4); k >= 0; k--) {
        const at = Math.floor(random() * (to.length + 1));
        to = to.slice(0, at) + words[Math.floor(random() * words.length)] + to.slice(at + Math.floor(random() * 6));
      }
      for (const granularity of ['line', 'word', 'char'] as const) {
        const result = diffTexts(from, to, granularity);
        expect(sides(result.changes), `${granularity} ${JSON.stringify([from, to])}`).toEqual({ from, to });
        // Never two unchanged runs side by side.
        const ops = result.changes.map((c) => c.op).join(' ');
        expect(ops).not.toMatch(/equal equal/);
      }
    }
  });

  it('count a word changed in the middle of 5 MiB as one word (bench/large-documents.ts times it)', () => {
    const from = lines(80_000);
    const to = from.replace('Line 40000: the quick', 'Line 40000: the slow');
    expect(from.length).toBeGreaterThan(4 * 1024 * 1024);
    const result = diffTexts(from, to, 'word');
    expect(result.stats).toEqual({ insertions: 1, deletions: 1 });
    expect(result.changes.filter((c) => c.op !== 'equal')).toEqual([
      { op: 'delete', text: 'quick' },
      { op: 'insert', text: 'slow' },
    ]);
    expect(sides(result.changes)).toEqual({ from, to });
    expect(diffTexts(from, to, 'line').stats).toEqual({ insertions: 1, deletions: 1 });
  });

  it('unified: the patch applies and its hunks are at their lines, near the start, the middle and the end', () => {
    const from = lines(20_000);
    const cases = [
      from.replace('Line 2: the', 'Line 2: a'),
      from.replace('Line 10000: the', 'Line 10000: a').replace('Line 10010: the', 'Line 10010: a'),
      from + '\nLine 20000: one more',
      from.replace('Line 19999: the quick brown fox jumps over the lazy dog.', 'Line 19999: the end'),
      from.replace('Line 5000: the quick brown fox jumps over the lazy dog.\n', ''),
    ];
    for (const to of cases) {
      const patch = unifiedDiff({ label: 'v1', text: from }, { label: 'current', text: to });
      expect(applyPatch(from, patch)).toBe(to);
      for (const header of patch.match(/^@@ -(\d+),?(\d*) \+(\d+),?(\d*) @@/gm) ?? []) {
        const [, oldStart] = /^@@ -(\d+)/.exec(header)!;
        // The first line of the hunk is the line the header names.
        const firstLine = patch.split(header)[1]!.split('\n')[1]!.slice(1);
        expect(from.split('\n')[Number(oldStart) - 1], header).toBe(firstLine);
      }
    }
    expect(unifiedDiff({ label: 'a', text: from }, { label: 'b', text: from })).not.toMatch(/^@@/m);
  });

  it('over the API, on a 5 MiB document', async () => {
    const body = lines(90_000);
    const doc = await createDoc(t, owner, { content: body });
    const version = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } });
    expect((await t.call('PUT', `/api/documents/${doc.id}/content`, { as: owner, body: { content: body.replace('Line 777: the quick', 'Line 777: the sly') } })).status).toBe(200);
    const words = await t.call('GET', `/api/documents/${doc.id}/diff?from=${version.body.id}&to=current`, { as: owner });
    expect(words.body.stats).toEqual({ insertions: 1, deletions: 1 });
    const unified = await t.call('GET', `/api/documents/${doc.id}/diff?from=${version.body.id}&to=current&format=unified`, { as: owner });
    expect(unified.text).toContain('@@ -775,7 +775,7 @@');
    expect(unified.text).toContain('-Line 777: the quick brown fox');
    expect(unified.text).toContain('+Line 777: the sly brown fox');
  });
});

describe('the search index of a large body', () => {
  it('holds its first MAX_INDEXED_BODY characters: words there are found, words past it are not', async () => {
    const filler = 'lorem ipsum dolor sit amet\n'.repeat(Math.ceil(MAX_INDEXED_BODY / 27));
    const doc = await createDoc(t, owner, { content: `quetzalcoatl opens it\n${filler}xylographer closes it\n` });
    const found = async (q: string) => (await t.call('GET', `/api/documents/suggestions?q=${q}`, { as: owner })).body.data.map((s: { id: string }) => s.id);
    expect(await found('quetzalcoatl')).toEqual([doc.id]);
    expect(await found('xylographer')).toEqual([]);
    // A copy is indexed the same way, from the text copied.
    const copy = await t.call('POST', `/api/documents/${doc.id}/copy`, { as: owner });
    expect((await found('quetzalcoatl')).sort()).toEqual([doc.id, copy.body.id].sort());
  });
});
