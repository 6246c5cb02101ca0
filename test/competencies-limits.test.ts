// Competencies past their limits, through the HTTP API: a tree deeper than MAX_COMPETENCY_DEPTH
// is refused at creation, on a move and at CASE import (422); a tree deeper than that already
// stored (as an older database may hold) still reads as a tree; and CASE import refuses the text
// that REST bodies refuse (C1 controls, lone surrogates) with a 422 naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competencies, competencyFrameworks } from '../db/schema';
import { MAX_COMPETENCY_DEPTH } from '../src/competencies/service';
import { newId } from '../src/lib/ids';
import { expectProblem, makeTestApp, type CallResult, type TestApp, type TestUser } from './helpers/app';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await makeTestApp();
  admin = t.admin;
});
afterAll(() => t?.close());

const counts = () => [t.db.select().from(competencies).all().length, t.db.select().from(competencyFrameworks).all().length];

/** A CASE package whose items form one chain `levels` deep (item 0 at the top). */
function chainPackage(document: string, levels: number) {
  const ref = (identifier: string) => ({ identifier, uri: `https://example.org/${identifier}`, title: identifier });
  const items = Array.from({ length: levels }, (_, i) => ({ identifier: `${document}-item-${i}`, fullStatement: `Level ${i}`, humanCodingScheme: `L${i}` }));
  return {
    CFDocument: { identifier: document, title: `Chain ${document}`, creator: 'Tests' },
    CFItems: items,
    CFAssociations: items.map((item, i) => ({
      identifier: `${item.identifier}-parent`,
      associationType: 'isChildOf',
      originNodeURI: ref(item.identifier),
      destinationNodeURI: ref(i === 0 ? document : items[i - 1]!.identifier),
    })),
  };
}

/** The deepest level of a tree answer (1 for a lone root). */
const depthOf = (nodes: any[]): number => {
  let deepest = 0;
  const stack = nodes.map((n) => [n, 1] as [any, number]);
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const child of node.children) stack.push([child, depth + 1]);
  }
  return deepest;
};

describe('depth', () => {
  it(`refuses a competency past ${MAX_COMPETENCY_DEPTH} levels at creation and on a move (422 naming parent_id), and changes nothing`, async () => {
    const framework = (await t.call('POST', '/api/competencies/frameworks', { as: admin, body: { title: 'Deep' } })).body;
    let parent: string | null = null;
    const chain: string[] = [];
    for (let level = 1; level <= MAX_COMPETENCY_DEPTH; level++) {
      const res: CallResult = await t.call('POST', `/api/competencies/frameworks/${framework.id}/competencies`, { as: admin, body: { code: `D${level}`, title: `Level ${level}`, parent_id: parent } });
      expect(res.status, res.text).toBe(201);
      parent = res.body.id as string;
      chain.push(parent);
    }
    const before = counts();
    const tooDeep = await t.call('POST', `/api/competencies/frameworks/${framework.id}/competencies`, { as: admin, body: { code: 'D-over', title: 'Over', parent_id: parent } });
    expectProblem(tooDeep, 422, 'validation_failed');
    expect(tooDeep.body.errors).toEqual([expect.objectContaining({ path: 'parent_id' })]);
    expect(counts()).toEqual(before);

    // A root with one child, moved under the deepest level, would end one level too deep.
    const root = (await t.call('POST', `/api/competencies/frameworks/${framework.id}/competencies`, { as: admin, body: { code: 'R', title: 'Root' } })).body;
    await t.call('POST', `/api/competencies/frameworks/${framework.id}/competencies`, { as: admin, body: { code: 'R1', title: 'Child', parent_id: root.id } });
    const move = await t.call('PATCH', `/api/competencies/${root.id}`, { as: admin, body: { parent_id: chain[MAX_COMPETENCY_DEPTH - 2] } });
    expectProblem(move, 422, 'validation_failed');
    expect(move.body.errors).toEqual([expect.objectContaining({ path: 'parent_id' })]);
    expect((await t.call('GET', `/api/competencies/${root.id}`, { as: admin })).body.parent_id).toBeNull();
    // One level higher fits exactly.
    const fits = await t.call('PATCH', `/api/competencies/${root.id}`, { as: admin, body: { parent_id: chain[MAX_COMPETENCY_DEPTH - 3] } });
    expect(fits.status, fits.text).toBe(200);
    const tree = (await t.call('GET', `/api/competencies/frameworks/${framework.id}/tree`, { as: admin })).body;
    expect(depthOf(tree.competencies)).toBe(MAX_COMPETENCY_DEPTH);
  });

  it(`imports a CASE chain of ${MAX_COMPETENCY_DEPTH} levels, and refuses one level more with 422 naming the item; nothing imported`, async () => {
    const ok = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: chainPackage('chain-ok', MAX_COMPETENCY_DEPTH) });
    expect(ok.status, ok.text).toBe(201);
    const tree = (await t.call('GET', `/api/competencies/frameworks/${ok.body.framework.id}/tree`, { as: admin })).body;
    expect(depthOf(tree.competencies)).toBe(MAX_COMPETENCY_DEPTH);

    const before = counts();
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: chainPackage('chain-deep', MAX_COMPETENCY_DEPTH + 1) });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(new RegExp(`chain-deep-item-${MAX_COMPETENCY_DEPTH}\\b.*deeper than ${MAX_COMPETENCY_DEPTH} levels`));
    expect(counts()).toEqual(before);
  });

  it('a tree 3,000 levels deep already stored reads as a tree, and mastery reads over it', async () => {
    const framework = (await t.call('POST', '/api/competencies/frameworks', { as: admin, body: { title: 'Stored deep' } })).body;
    const now = new Date().toISOString();
    let parentId: string | null = null;
    const rows = [];
    for (let level = 1; level <= 3000; level++) {
      const id = newId();
      rows.push({ id, tenantId: t.defaultTenantId, frameworkId: framework.id, parentId, code: `S${String(level).padStart(4, '0')}`, title: `Level ${level}`, createdAt: now, updatedAt: now });
      parentId = id;
    }
    for (let i = 0; i < rows.length; i += 500) t.db.insert(competencies).values(rows.slice(i, i + 500)).run();

    const tree = await t.call('GET', `/api/competencies/frameworks/${framework.id}/tree`, { as: admin });
    expect(tree.status, tree.text.slice(0, 200)).toBe(200);
    expect(tree.body.framework.competency_count).toBe(3000);
    expect(depthOf(tree.body.competencies)).toBe(3000);
    const progress = await t.call('GET', `/api/competencies/progress?framework_id=${framework.id}&per_page=1`, { as: admin });
    expect(progress.status, progress.text).toBe(200);
    expect(progress.body.pagination.total).toBe(3000);
  });
});

describe('CASE import text', () => {
  it('refuses C1 control characters and lone surrogates as REST bodies do: 422 naming the field, nothing imported', async () => {
    const cases: [string, (p: any) => void, RegExp][] = [
      ['C1 in a fullStatement', (p) => (p.CFItems[1].fullStatement = 'Bad \u0085 text'), /CFItems\[1\] \(identifier text-item-1\)\.fullStatement: must not contain control characters.*U\+0085/],
      ['C1 in the title', (p) => (p.CFDocument.title = 'Title \u009f'), /CFDocument\.title: must not contain control characters.*U\+009F/],
      ['a lone surrogate in notes', (p) => (p.CFItems[0].notes = 'half \ud800 a pair'), /CFItems\[0\] \(identifier text-item-0\)\.notes: must not contain a lone surrogate.*U\+D800/],
      ['a line break in a code', (p) => (p.CFItems[2].humanCodingScheme = 'A\nB'), /CFItems\[2\] \(identifier text-item-2\)\.humanCodingScheme: must not contain control characters.*U\+000A/],
    ];
    for (const [label, breakIt, detail] of cases) {
      const pkg = chainPackage('text', 3);
      breakIt(pkg);
      const before = counts();
      const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: pkg });
      expectProblem(res, 422, 'validation_failed', label);
      expect(res.body.detail, label).toMatch(detail);
      expect(res.body.errors?.[0]?.path, label).toBeTruthy();
      expect(counts(), `${label}: nothing imported`).toEqual(before);
    }
    // Tabs and line breaks stay allowed in free text, as in REST descriptions.
    const pkg = chainPackage('text', 3);
    pkg.CFItems[0]!.fullStatement = 'Line one\nLine two\twith a tab';
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: pkg });
    expect(res.status, res.text).toBe(201);
  });
});
