// CASE packages through the HTTP API, as they came and at scale:
// - a package built here with every CFDocument, CFItem and CFAssociation field, every association
//   type and the CFDefinitions leaves again exactly as it came, field by field; an item changed,
//   moved or deleted through the API is then all that differs;
// - the text kept as given passes the rule of REST bodies (422 naming the field), and nests boundedly;
// - a re-import of 20,000 items (read in a worker thread, staged in turns) is correct, atomic (a
//   failure half-way leaves the old framework whole, and what the failed import kept is cleaned up),
//   and reads meanwhile see the old framework or the new one, never a mix.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competencies, competencyCaseAssociations, competencyCaseItems, competencyFrameworks } from '../db/schema';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  // The 20,000-item packages are larger than the default limit of a document body.
  t = await makeTestApp({ config: { documentBodyLimitBytes: 32 * 1024 * 1024 } });
  admin = t.admin;
});
afterAll(() => t?.close());

async function ok(method: string, path: string, body?: unknown, status = 200): Promise<any> {
  const res = await t.call(method, path, { as: admin, body });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 500)}`).toBe(status);
  return res.body;
}

const uuid = (n: number, kind = 0) => `0000${kind}000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const node = (identifier: string, title: string) => ({ title, identifier, uri: `https://case.example.org/uri/${identifier}` });

const ASSOCIATION_TYPES = ['isChildOf', 'isPeerOf', 'isPartOf', 'exactMatchOf', 'precedes', 'isRelatedTo', 'replacedBy', 'exemplar', 'hasSkillLevel'];

/** A CASE 1.0 package with every field of CFDocument, CFItem and CFAssociation, every association type and CFDefinitions. */
function fullPackage() {
  const doc = uuid(1, 1);
  const documentRef = node(doc, 'Every Field Standards');
  const grouping = node(uuid(1, 7), 'Progressions');
  const license = node(uuid(1, 6), 'CC BY 4.0');
  const itemType = (n: number, title: string) => node(uuid(n, 5), title);
  const items = [
    { n: 1, code: 'EF', type: 'Grade Level', parent: null },
    { n: 2, code: 'EF.A', type: 'Domain', parent: 1 },
    { n: 3, code: 'EF.A.1', type: 'Standard', parent: 2 },
    { n: 4, code: 'EF.A.2', type: 'Standard', parent: 2 },
    { n: 5, code: 'EF.B', type: 'Domain', parent: 1 },
    { n: 6, code: 'EF.B.1', type: 'Standard', parent: 5 },
  ].map(({ n, code, type, parent }) => ({
    item: {
      identifier: uuid(n, 2),
      uri: `https://case.example.org/uri/${uuid(n, 2)}`,
      fullStatement: `Statement of ${code}: read, write\nand reason.`,
      alternativeLabel: `Label ${code}`,
      CFItemType: type,
      humanCodingScheme: code,
      listEnumeration: String(n),
      abbreviatedStatement: `Short ${code}`,
      conceptKeywords: ['reading', 'reasoning'],
      conceptKeywordsURI: node(uuid(1, 8), 'Reasoning'),
      notes: `Notes on ${code}`,
      subject: ['English Language Arts'],
      subjectURI: [node(uuid(1, 9), 'English Language Arts')],
      language: 'en',
      educationLevel: ['03', '04'],
      educationalLevel: ['03', '04'],
      CFItemTypeURI: itemType(n <= 1 ? 1 : n === 2 || n === 5 ? 2 : 3, type),
      licenseURI: license,
      statusStartDate: '2025-08-01',
      statusEndDate: '2030-07-31',
      lastChangeDateTime: `2025-0${n}-15T10:00:00+00:00`,
      CFDocumentURI: documentRef,
    },
    parent,
  }));
  const ref = (n: number) => node(uuid(n, 2), `EF ${n}`);
  const association = (i: number, type: string, origin: object, destination: object) => ({
    identifier: uuid(i, 3),
    associationType: type,
    sequenceNumber: i,
    uri: `https://case.example.org/uri/${uuid(i, 3)}`,
    originNodeURI: origin,
    destinationNodeURI: destination,
    CFAssociationGroupingURI: grouping,
    notes: `Association ${i}`,
    lastChangeDateTime: '2025-09-01T00:00:00+00:00',
    CFDocumentURI: documentRef,
  });
  const tree = items.map(({ item, parent }, i) => association(i + 1, 'isChildOf', node(item.identifier, item.humanCodingScheme), parent ? ref(parent) : documentRef));
  const others = ASSOCIATION_TYPES.filter((type) => type !== 'isChildOf').map((type, i) =>
    // One of them points outside the package (another framework's item), as published ones do.
    association(100 + i, type, ref(3 + (i % 3)), i === 0 ? node('ffffffff-0000-4000-8000-000000000001', 'Elsewhere') : ref(4 + (i % 2))),
  );
  return {
    CFDocument: {
      identifier: doc,
      uri: documentRef.uri,
      frameworkType: 'Standards',
      caseVersion: '1.0',
      creator: 'State Board',
      title: 'Every Field Standards',
      lastChangeDateTime: '2025-09-01T12:00:00+00:00',
      officialSourceURL: 'https://example.org/standards',
      publisher: 'State Department of Education',
      description: 'Standards with every field\nof CASE 1.0.',
      subject: ['English Language Arts'],
      subjectURI: [node(uuid(1, 9), 'English Language Arts')],
      language: 'en',
      version: '2025',
      adoptionStatus: 'Adopted',
      statusStartDate: '2025-08-01',
      statusEndDate: '2030-07-31',
      licenseURI: license,
      notes: 'Document notes',
      CFPackageURI: node(doc, 'Every Field Standards'),
    },
    CFItems: items.map((i) => i.item),
    CFAssociations: [...tree.slice(0, 3), ...others, ...tree.slice(3)],
    CFDefinitions: {
      CFConcepts: [{ identifier: uuid(1, 8), uri: 'https://case.example.org/uri/concept', title: 'Reasoning', keywords: 'reason', hierarchyCode: '1', description: 'Thinking', lastChangeDateTime: '2025-01-01T00:00:00+00:00' }],
      CFSubjects: [{ identifier: uuid(1, 9), uri: 'https://case.example.org/uri/subject', title: 'English Language Arts', hierarchyCode: '1', description: 'ELA', lastChangeDateTime: '2025-01-01T00:00:00+00:00' }],
      CFLicenses: [{ identifier: uuid(1, 6), uri: 'https://case.example.org/uri/license', title: 'CC BY 4.0', description: 'Attribution', licenseText: 'https://creativecommons.org/licenses/by/4.0/', lastChangeDateTime: '2025-01-01T00:00:00+00:00' }],
      CFItemTypes: [1, 2, 3].map((n) => ({ identifier: uuid(n, 5), uri: `https://case.example.org/uri/type-${n}`, title: ['Grade Level', 'Domain', 'Standard'][n - 1], description: 'Type', hierarchyCode: String(n), typeCode: 'T', lastChangeDateTime: '2025-01-01T00:00:00+00:00' })),
      CFAssociationGroupings: [{ identifier: uuid(1, 7), uri: 'https://case.example.org/uri/grouping', title: 'Progressions', description: 'Learning progressions', lastChangeDateTime: '2025-01-01T00:00:00+00:00' }],
    },
    CFRubrics: [{ identifier: uuid(1, 4), uri: 'https://case.example.org/uri/rubric', title: 'Rubric', description: 'A rubric', lastChangeDateTime: '2025-01-01T00:00:00+00:00', CFRubricCriteria: [] }],
  };
}

/** The package under another CFDocument identifier (and so another framework). */
const renamed = <T extends { CFDocument: { identifier: string } }>(pkg: T, identifier: string): T =>
  JSON.parse(JSON.stringify(pkg).replaceAll(pkg.CFDocument.identifier, identifier));

/** The fields of `actual` and `expected` that differ, as paths ('CFItems[2].fullStatement'). */
function differences(actual: any, expected: any, at = ''): string[] {
  if (typeof actual !== 'object' || typeof expected !== 'object' || actual === null || expected === null) return Object.is(actual, expected) ? [] : [at];
  if (Array.isArray(actual) !== Array.isArray(expected)) return [at];
  const keys = new Set([...Object.keys(actual), ...Object.keys(expected)]);
  return [...keys].flatMap((k) => differences(actual[k], expected[k], Array.isArray(actual) ? `${at}[${k}]` : at ? `${at}.${k}` : k));
}

describe('CASE packages leave as they came', () => {
  it('exports an imported package field by field as given: CFDocument, CFItems, every association type with its identifier, CFDefinitions', async () => {
    const pkg = fullPackage();
    const imported = await ok('POST', '/api/competencies/frameworks/import', pkg, 201);
    const id = imported.framework.id;
    const exported = await ok('GET', `/api/competencies/frameworks/${id}/case`);
    // Items come out in code order, which is the package's here; associations in the package's order.
    expect(differences(exported, pkg)).toEqual([]);
    expect(new Set(exported.CFAssociations.map((a: any) => a.associationType))).toEqual(new Set(ASSOCIATION_TYPES));
    // Imported again (a re-import of its own export): nothing changes, and it still leaves the same.
    const again = await ok('POST', '/api/competencies/frameworks/import', exported, 200);
    expect(again).toMatchObject({ created: 0, updated: 0, not_in_package: 0 });
    expect(differences(await ok('GET', `/api/competencies/frameworks/${id}/case`), pkg)).toEqual([]);
  });

  it('after a change through the API only what changed differs: a statement, a move (its isChildOf), a deletion (its associations)', async () => {
    const pkg = fullPackage();
    // A framework of its own: another CFDocument identifier, the same content.
    const text = JSON.stringify(pkg).replaceAll(pkg.CFDocument.identifier, uuid(2, 1));
    const given = JSON.parse(text);
    const f = (await ok('POST', '/api/competencies/frameworks/import', given, 201)).framework;
    const list = (await ok('GET', `/api/competencies/frameworks/${f.id}/competencies?per_page=100`)).data;
    const byCode = Object.fromEntries(list.map((c: any) => [c.code, c]));

    // 1. One statement changed.
    t.clock.advance(60_000);
    const changed = await ok('PATCH', `/api/competencies/${byCode['EF.A.1'].id}`, { title: 'A statement changed here' });
    let exported = await ok('GET', `/api/competencies/frameworks/${f.id}/case`);
    const at = given.CFItems.findIndex((i: any) => i.humanCodingScheme === 'EF.A.1');
    expect(differences(exported, given).sort()).toEqual([`CFItems[${at}].fullStatement`, `CFItems[${at}].lastChangeDateTime`]);
    expect(exported.CFItems[at]).toMatchObject({ fullStatement: 'A statement changed here', lastChangeDateTime: changed.updated_at });

    // 2. One item moved to another parent: its isChildOf association is made anew; the others stay.
    await ok('PATCH', `/api/competencies/${byCode['EF.B.1'].id}`, { parent_id: byCode['EF.A'].id });
    exported = await ok('GET', `/api/competencies/frameworks/${f.id}/case`);
    const moved = given.CFItems.find((i: any) => i.humanCodingScheme === 'EF.B.1').identifier;
    const isChildOf = (p: any, origin: string) => p.CFAssociations.filter((a: any) => a.associationType === 'isChildOf' && a.originNodeURI.identifier === origin);
    expect(isChildOf(exported, moved)).toEqual([expect.objectContaining({ destinationNodeURI: expect.objectContaining({ identifier: byCode['EF.A'].case_identifier }) })]);
    expect(isChildOf(exported, moved)[0].identifier).not.toBe(isChildOf(given, moved)[0].identifier);
    const unmoved = (p: any) => p.CFAssociations.filter((a: any) => !(a.associationType === 'isChildOf' && a.originNodeURI.identifier === moved));
    expect(unmoved(exported)).toEqual(unmoved(given));
    expect(exported.CFDefinitions).toEqual(given.CFDefinitions);
    expect(exported.CFDocument).toEqual(given.CFDocument);

    // 3. One item deleted: it and every association naming it are gone; nothing else changes.
    const gone = byCode['EF.A.2'];
    expect((await t.call('DELETE', `/api/competencies/${gone.id}`, { as: admin })).status).toBe(204);
    exported = await ok('GET', `/api/competencies/frameworks/${f.id}/case`);
    expect(exported.CFItems.map((i: any) => i.identifier)).not.toContain(gone.case_identifier);
    const names = (a: any) => a.originNodeURI.identifier === gone.case_identifier || a.destinationNodeURI.identifier === gone.case_identifier;
    expect(exported.CFAssociations.filter(names)).toEqual([]);
    expect(unmoved(exported)).toEqual(unmoved(given).filter((a: any) => !names(a)));

    // 4. The framework's title changed: the CFDocument's title and lastChangeDateTime differ, nothing else of it.
    const renamed = await ok('PATCH', `/api/competencies/frameworks/${f.id}`, { title: 'Renamed here' });
    exported = await ok('GET', `/api/competencies/frameworks/${f.id}/case`);
    expect(differences(exported.CFDocument, given.CFDocument).sort()).toEqual(['lastChangeDateTime', 'title']);
    expect(exported.CFDocument).toMatchObject({ title: 'Renamed here', lastChangeDateTime: renamed.updated_at });
  });

  it('refuses text REST bodies refuse anywhere in the package, and values nested too deep: 422 naming the field, nothing imported', async () => {
    const count = () => [t.db.select().from(competencies).all().length, t.db.select().from(competencyFrameworks).all().length, t.db.select().from(competencyCaseItems).all().length];
    const deep: any = {};
    let at = deep;
    for (let i = 0; i < 20; i++) at = at.inner = {};
    const cases: [string, (p: any) => void, RegExp][] = [
      ['C1 in educationLevel', (p) => (p.CFItems[2].educationLevel = ['03', 'x\u0085']), /CFItems\[2\] \(identifier [^)]+\)\.educationLevel\[1\]: must not contain control characters.*U\+0085/],
      ['a lone surrogate in CFDefinitions', (p) => (p.CFDefinitions.CFConcepts[0].keywords = 'a \udc00 b'), /\(package\)\.CFDefinitions\.CFConcepts\[0\]\.keywords: must not contain a lone surrogate/],
      ['NUL in an association note', (p) => (p.CFAssociations[4].notes = 'a\u0000b'), /CFAssociations\[4\] \(identifier [^)]+\)\.notes: must not contain control characters/],
      ['C1 in the CFDocument subject', (p) => (p.CFDocument.subject = ['\u009b']), /CFDocument\.subject\[0\]: must not contain control characters/],
      ['a control character in a member name', (p) => (p.CFItems[0]['bad\u0007name'] = 'x'), /CFItems\[0\] \(identifier [^)]+\) \(a member's name\): must not contain control characters/],
      ['nesting past 16 levels', (p) => (p.CFItems[1].extension = deep), /CFItems\[1\].*nests deeper than 16 levels/],
      ['an association without its ends', (p) => delete p.CFAssociations[5].destinationNodeURI, /CFAssociations\[5\] \(identifier [^)]+\)\.destinationNodeURI: is required/],
    ];
    for (const [label, breakIt, detail] of cases) {
      const pkg: any = renamed(fullPackage(), uuid(3, 1));
      breakIt(pkg);
      const before = count();
      const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: pkg });
      expectProblem(res, 422, 'validation_failed', label);
      expect(res.body.detail, label).toMatch(detail);
      expect(res.body.errors?.[0]?.path, label).toBeTruthy();
      expect(count(), `${label}: nothing imported`).toEqual(before);
    }
  });
});

describe('CASE import bodies', () => {
  it('a body that is not UTF-8 (small, or large and read in a worker thread) or not JSON is a 400, and nothing is imported', async () => {
    const count = () => t.db.select({ n: sql<number>`count(*)` }).from(competencyFrameworks).get()!.n;
    const before = count();
    const small = JSON.stringify(renamed(fullPackage(), uuid(4, 1)));
    const large = JSON.stringify(renamed(bigPackage(0), uuid(5, 1)));
    for (const [label, text] of [['small', small], ['large', large]] as const) {
      const at = text.indexOf('Statement') >= 0 ? text.indexOf('Statement') : text.indexOf('statement');
      for (const bytes of [[0xed, 0xa0, 0x80], [0xff]]) {
        const body = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]);
        const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, rawBody: new Uint8Array(body), headers: { 'Content-Type': 'application/json' } });
        expectProblem(res, 400, 'validation_failed', `${label} ${JSON.stringify(bytes)}`);
        expect(res.body.detail).toMatch(/UTF-8/);
      }
      const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, rawBody: text.slice(0, -2), headers: { 'Content-Type': 'application/json' } });
      expectProblem(res, 400, 'validation_failed', `${label}, cut short`);
    }
    expectProblem(await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: { CFDocument: 'no', CFItems: [] } }), 400, 'validation_failed');
    expect(count()).toBe(before);
  }, 120_000);
});

// ---------------------------------------------------------------- 20,000 items

const N = 20_000;
const BIG_DOC = uuid(9, 1);

/** A framework of N items: 20 domains, the rest under them; `round` changes every statement, and from round 1 on 1,000 items move. */
function bigPackage(round: number, breakAt?: { index: number; code: string }) {
  const documentRef = node(BIG_DOC, 'Big');
  const items = [];
  const associations = [];
  for (let i = 0; i < N; i++) {
    const parent = i < 20 ? null : (i + (round > 0 && i % 20 === 0 ? 1 : 0)) % 20;
    items.push({
      identifier: uuid(i, 2),
      fullStatement: `R${round} statement ${i}`,
      humanCodingScheme: breakAt?.index === i ? breakAt.code : `B.${i}`,
      educationLevel: ['05'],
      listEnumeration: String(i),
    });
    associations.push({
      identifier: uuid(i, 3),
      associationType: 'isChildOf',
      originNodeURI: { identifier: uuid(i, 2) },
      destinationNodeURI: parent === null ? documentRef : { identifier: uuid(parent, 2) },
    });
    if (i % 10 === 5) associations.push({ identifier: uuid(i, 4), associationType: 'precedes', originNodeURI: { identifier: uuid(i, 2) }, destinationNodeURI: { identifier: uuid(i + 1, 2) } });
  }
  return { CFDocument: { identifier: BIG_DOC, title: `Big ${round}`, creator: 'Tests' }, CFItems: items, CFAssociations: associations };
}

/** The framework's competencies as stored, in a fixed order. */
const stored = (frameworkId: string) =>
  t.db
    .select({ id: competencies.id, code: competencies.code, title: competencies.title, parentId: competencies.parentId, caseIdentifier: competencies.caseIdentifier })
    .from(competencies)
    .where(eq(competencies.frameworkId, frameworkId))
    .orderBy(competencies.id)
    .all();

// Generous timeouts: each import of 20,000 items takes seconds on a machine shared with others.
describe(`a re-import of ${N.toLocaleString('en')} items`, { timeout: 300_000 }, () => {
  let frameworkId: string;

  it('imports, then re-imports every statement changed and 1,000 items moved: ids kept, the tree as the package says, reads meanwhile all old or all new', async () => {
    const first = await ok('POST', '/api/competencies/frameworks/import', bigPackage(0), 201);
    expect(first).toMatchObject({ created: N, updated: 0, not_in_package: 0 });
    frameworkId = first.framework.id;
    const before = stored(frameworkId);
    expect(before).toHaveLength(N);

    // Reads between the import's turns: how many statements are the new ones.
    const seen: number[] = [];
    let importing = true;
    const reader = (async () => {
      while (importing) {
        const row = t.db
          .select({ n: sql<number>`count(*)` })
          .from(competencies)
          .where(and(eq(competencies.frameworkId, frameworkId), sql`${competencies.title} LIKE 'R1 %'`))
          .get()!;
        seen.push(row.n);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: bigPackage(1) });
    importing = false;
    await reader;
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.body).toMatchObject({ created: 0, updated: N, not_in_package: 0 });
    expect(res.body.framework).toMatchObject({ id: frameworkId, title: 'Big 1', competency_count: N });
    // The import took many turns, and no read saw a mix.
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.filter((n) => n !== 0 && n !== N)).toEqual([]);

    const after = stored(frameworkId);
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    const idOf = new Map(after.map((r) => [r.caseIdentifier, r.id]));
    const pkg = bigPackage(1);
    const parents = new Map(pkg.CFAssociations.filter((a) => a.associationType === 'isChildOf').map((a) => [a.originNodeURI.identifier, idOf.get(a.destinationNodeURI.identifier) ?? null]));
    for (const row of after) {
      const i = Number(row.caseIdentifier!.slice(-12));
      expect(row.title).toBe(`R1 statement ${i}`);
      expect(row.parentId).toBe(parents.get(row.caseIdentifier!));
    }
    // What is kept as given is the last import's only.
    expect(t.db.select({ n: sql<number>`count(*)` }).from(competencyCaseItems).where(eq(competencyCaseItems.frameworkId, frameworkId)).get()!.n).toBe(N);
    expect(t.db.select({ n: sql<number>`count(*)` }).from(competencyCaseAssociations).where(eq(competencyCaseAssociations.frameworkId, frameworkId)).get()!.n).toBe(pkg.CFAssociations.length);
    const exported = await ok('GET', `/api/competencies/frameworks/${frameworkId}/case`);
    expect(exported.CFAssociations.filter((a: any) => a.associationType === 'precedes')).toHaveLength(N / 10);
  });

  it('a re-import that fails half-way (its last item takes a code authored here meanwhile) leaves the old framework intact, and nothing of it behind', async () => {
    const local = await ok('POST', `/api/competencies/frameworks/${frameworkId}/competencies`, { code: 'LOCAL-1', title: 'Authored here' }, 201);
    const before = stored(frameworkId);
    const framework = await ok('GET', `/api/competencies/frameworks/${frameworkId}`);
    const res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: bigPackage(2, { index: N - 1, code: 'LOCAL-1' }) });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(new RegExp(`CFItems\\[${N - 1}\\] \\(identifier ${uuid(N - 1, 2)}\\).*humanCodingScheme LOCAL-1 is already used`));
    expect(stored(frameworkId)).toEqual(before);
    expect(await ok('GET', `/api/competencies/frameworks/${frameworkId}`)).toEqual(framework);
    expect((await ok('GET', `/api/competencies/${local.id}`)).title).toBe('Authored here');
    const importId = t.db.select().from(competencyFrameworks).where(eq(competencyFrameworks.id, frameworkId)).get()!.caseImportId;
    const kept = t.db.select({ importId: competencyCaseItems.importId, n: sql<number>`count(*)` }).from(competencyCaseItems).where(eq(competencyCaseItems.frameworkId, frameworkId)).groupBy(competencyCaseItems.importId).all();
    expect(kept).toEqual([{ importId, n: N }]);
  });

  it('a competency changed through the API while the import stages is staged again: the package wins, nothing is lost', async () => {
    const target = stored(frameworkId).find((r) => r.caseIdentifier === uuid(7, 2))!;
    const importing = t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: bigPackage(3) });
    // Lands while the import is read or staged (the request above has only begun).
    const patched = await t.call('PATCH', `/api/competencies/${target.id}`, { as: admin, body: { title: 'Changed meanwhile' } });
    expect(patched.status).toBe(200);
    const res = await importing;
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.body).toMatchObject({ created: 0, updated: N, not_in_package: 1 });
    expect((await ok('GET', `/api/competencies/${target.id}`)).title).toBe('R3 statement 7');
  });

  it(`a large package (read in a worker thread) refuses a tree deeper than 64 levels, and bad text, with 422 naming the item`, async () => {
    const deep = renamed(bigPackage(0), uuid(10, 1));
    // Items 100..165 become a chain of 66 levels under item 99's domain.
    for (let i = 100; i < 166; i++) deep.CFAssociations.find((a) => a.associationType === 'isChildOf' && a.originNodeURI.identifier === uuid(i, 2))!.destinationNodeURI = { identifier: uuid(i - 1, 2) };
    const before = t.db.select({ n: sql<number>`count(*)` }).from(competencies).get()!.n;
    let res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: deep });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(/deeper than 64 levels/);
    const bad = renamed(bigPackage(0), uuid(11, 1));
    bad.CFItems[12_345]!.fullStatement = 'C1 \u0090 here';
    res = await t.call('POST', '/api/competencies/frameworks/import', { as: admin, body: bad });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(/CFItems\[12345\] \(identifier [^)]+\)\.fullStatement: must not contain control characters/);
    expect(t.db.select({ n: sql<number>`count(*)` }).from(competencies).get()!.n).toBe(before);
  });
});
