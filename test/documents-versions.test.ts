// Named versions, diffs and revert through the API, search suggestions kept in step with the
// Yjs bodies (REST writes at once, live edits after the index's debounce), and the change history.
import { eq, max } from 'drizzle-orm';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { documentSearch, documentUpdates, documentVersions } from '../db/schema';
import { CONTENT_FIELD } from '../collab/store';
import { DocumentSearchIndex, ftsPrefixQuery, snippetHtml } from '../src/documents/search';
import { flushPendingWrites } from '../src/deps';
import { newId } from '../src/lib/ids';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { contentOf, createDoc, flushSearch, liveAppend, liveEdit, share, type DocumentJson } from './helpers/documents';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  t = await makeTestApp();
  owner = await t.newUser();
});
afterAll(() => t?.close());

const saveVersion = async (as: TestUser, documentId: string, name: string) => {
  const res = await t.call('POST', `/api/documents/${documentId}/versions`, { as, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; bytes: number };
};

// Versions, diffs and revert run twice: with the whole-body work inline (small documents) and in the
// Yjs worker threads (large documents; the second app sends every document there).
describe.each([
  { mode: 'inline', offloadMinBytes: undefined },
  { mode: 'in a worker thread', offloadMinBytes: 0 },
])('with the whole-body work $mode', ({ offloadMinBytes }) => {
  let inline: { t: TestApp; owner: TestUser } | undefined;
  beforeAll(async () => {
    if (offloadMinBytes === undefined) return;
    inline = { t, owner };
    t = await makeTestApp({ offloadMinBytes });
    owner = await t.newUser();
  });
  afterAll(async () => {
    if (!inline) return;
    await t.close();
    ({ t, owner } = inline);
  });

  describe('named versions', () => {
    it('saves, lists newest first and reads a version with its Markdown', async () => {
      const doc = await createDoc(t, owner, { content: 'first draft' });
      const v1 = await saveVersion(owner, doc.id, '  Draft 1 ');
      liveAppend(t, doc.id, owner.user.id, ', improved');
      t.clock.advance(1000);
      const v2 = await saveVersion(owner, doc.id, 'Draft 2');
      expect(v1).toMatchObject({ name: 'Draft 1', document_id: doc.id, created_by: owner.user.id });
      expect(v1.bytes).toBeGreaterThan(0);

      const list = await t.call('GET', `/api/documents/${doc.id}/versions`, { as: owner });
      expect(list.status).toBe(200);
      expect(list.body.data.map((v: { id: string }) => v.id)).toEqual([v2.id, v1.id]);
      expect(list.body.data[0]).not.toHaveProperty('content');

      const one = await t.call('GET', `/api/documents/${doc.id}/versions/${v1.id}`, { as: owner });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: v1.id, name: 'Draft 1', content: 'first draft' });
      expect((await t.call('GET', `/api/documents/${doc.id}/versions/${v2.id}`, { as: owner })).body.content).toBe('first draft, improved');
    });

    it('answers 404 for an unknown version or one of another document, 400 for bad input', async () => {
      const doc = await createDoc(t, owner, { content: 'x' });
      const otherDoc = await createDoc(t, owner, { content: 'y' });
      const foreign = await saveVersion(owner, otherDoc.id, 'elsewhere');
      expect((await t.call('GET', `/api/documents/${doc.id}/versions/${newId()}`, { as: owner })).status).toBe(404);
      expect((await t.call('GET', `/api/documents/${doc.id}/versions/${foreign.id}`, { as: owner })).status).toBe(404);
      expect((await t.call('POST', `/api/documents/${doc.id}/versions/${foreign.id}/revert`, { as: owner })).status).toBe(404);
      expect((await t.call('GET', `/api/documents/${doc.id}/versions/v1`, { as: owner })).status).toBe(400);
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'ok', extra: 1 }]) {
        expect((await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body })).status, JSON.stringify(body)).toBe(400);
      }
    });

    it('answers 201 with a Location that reads the new version', async () => {
      const doc = await createDoc(t, owner, { content: 'located text' });
      const res = await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'Located' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/api/documents/${doc.id}/versions/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.any(String),
        document_id: doc.id,
        name: 'Located',
        created_by: owner.user.id,
        created_at: t.clock.now().toISOString(),
        bytes: expect.any(Number),
      });

      const read = await t.call('GET', res.headers.get('location')!, { as: owner });
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ ...res.body, content: 'located text' });
    });

    it('paginates the versions, newest first, with a Link header', async () => {
      const doc = await createDoc(t, owner, { content: 'paged' });
      const v1 = await saveVersion(owner, doc.id, 'one');
      const v2 = await saveVersion(owner, doc.id, 'two');
      const v3 = await saveVersion(owner, doc.id, 'three');
      const path = `/api/documents/${doc.id}/versions`;
      const link = (page: number, rel: string) => `<${path}?page=${page}&per_page=2>; rel="${rel}"`;
      const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((v) => v.id);

      const first = await t.call('GET', `${path}?per_page=2`, { as: owner });
      expect(first.status).toBe(200);
      expect(ids(first)).toEqual([v3.id, v2.id]);
      expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 });
      expect(first.headers.get('link')).toBe([link(1, 'first'), link(2, 'next'), link(2, 'last')].join(', '));

      const second = await t.call('GET', `${path}?page=2&per_page=2`, { as: owner });
      expect(ids(second)).toEqual([v1.id]);
      expect(second.body.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
      expect(second.headers.get('link')).toBe([link(1, 'first'), link(1, 'prev'), link(2, 'last')].join(', '));

      const beyond = await t.call('GET', `${path}?page=3&per_page=2`, { as: owner });
      expect(beyond.status).toBe(200);
      expect(beyond.body.data).toEqual([]);
      expect(beyond.body.pagination.total).toBe(3);

      for (const query of ['per_page=101', 'per_page=0', 'page=0']) {
        const res = await t.call('GET', `${path}?${query}`, { as: owner });
        expect(res.status, query).toBe(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });
  });

  describe('diff', () => {
    it('compares two versions and a version with current, by words, lines or characters', async () => {
      const doc = await createDoc(t, owner, { content: 'The quick brown fox\njumps over\nthe dog\n' });
      const v1 = await saveVersion(owner, doc.id, 'before');
      liveEdit(t, doc.id, owner.user.id, (text) => {
        const s = text.toString();
        const at = s.indexOf('brown');
        text.delete(at, 'brown'.length);
        text.insert(at, 'red');
        text.insert(text.length, 'the end\n');
      });
      const v2 = await saveVersion(owner, doc.id, 'after');

      const words = await t.call('GET', `/api/documents/${doc.id}/diff?from=${v1.id}&to=${v2.id}`, { as: owner });
      expect(words.status).toBe(200);
      expect(words.body.granularity).toBe('word');
      expect(words.body.stats).toEqual({ insertions: 3, deletions: 1 });
      const ops = words.body.changes as { op: string; text: string }[];
      expect(ops.filter((c) => c.op === 'delete').map((c) => c.text.trim())).toEqual(['brown']);
      expect(ops.filter((c) => c.op !== 'delete').map((c) => c.text).join('')).toBe('The quick red fox\njumps over\nthe dog\nthe end\n');
      expect(ops.filter((c) => c.op !== 'insert').map((c) => c.text).join('')).toBe('The quick brown fox\njumps over\nthe dog\n');

      const lines = await t.call('GET', `/api/documents/${doc.id}/diff?from=${v1.id}&to=current&granularity=line`, { as: owner });
      expect(lines.body.stats).toEqual({ insertions: 2, deletions: 1 });
      expect(lines.body.changes).toContainEqual({ op: 'delete', text: 'The quick brown fox\n' });

      const chars = await t.call('GET', `/api/documents/${doc.id}/diff?from=current&to=${v1.id}&granularity=char`, { as: owner });
      expect(chars.body.stats.deletions).toBeGreaterThan(chars.body.stats.insertions);

      const same = await t.call('GET', `/api/documents/${doc.id}/diff?from=current&to=current`, { as: owner });
      expect(same.body.stats).toEqual({ insertions: 0, deletions: 0 });
      expect(same.body.changes.every((c: { op: string }) => c.op === 'equal')).toBe(true);
    });

    it('gives a unified diff as text/plain with format=unified', async () => {
      const doc = await createDoc(t, owner, { content: 'line one\nline two\n' });
      // A version name is single-line text, refused with a line break since; one stored before must
      // still not forge a line of the diff.
      const v1 = await saveVersion(owner, doc.id, 'First');
      t.db.update(documentVersions).set({ name: 'First\nforged line' }).where(eq(documentVersions.id, v1.id)).run();
      liveEdit(t, doc.id, owner.user.id, (text) => text.insert(text.length, 'line three\n'));
      const res = await t.call('GET', `/api/documents/${doc.id}/diff?from=${v1.id}&to=current&format=unified`, { as: owner });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.text).toContain(`--- ${v1.id}\tFirst forged line`);
      expect(res.text).toContain('+++ current');
      expect(res.text).toContain('@@ -1,2 +1,3 @@');
      expect(res.text).toContain('+line three');
      expect(res.text).not.toContain('\nforged line');
    });

    it('refuses missing, malformed or unknown sides', async () => {
      const doc = await createDoc(t, owner, { content: 'x' });
      for (const query of ['', `from=current`, `from=latest&to=current`, `from=current&to=current&format=xml`, `from=current&to=current&granularity=para`]) {
        expect((await t.call('GET', `/api/documents/${doc.id}/diff?${query}`, { as: owner })).status, query).toBe(400);
      }
      expect((await t.call('GET', `/api/documents/${doc.id}/diff?from=${newId()}&to=current`, { as: owner })).status).toBe(404);
    });

    it('answers 404 when a side is a version of another document', async () => {
      const doc = await createDoc(t, owner, { content: 'mine' });
      const otherDoc = await createDoc(t, owner, { content: 'theirs' });
      const own = await saveVersion(owner, doc.id, 'own');
      const foreign = await saveVersion(owner, otherDoc.id, 'foreign');
      for (const query of [
        `from=${own.id}&to=${foreign.id}`,
        `from=current&to=${foreign.id}`,
        `from=${foreign.id}&to=current`,
        `from=${own.id}&to=${foreign.id}&format=unified`,
      ]) {
        const res = await t.call('GET', `/api/documents/${doc.id}/diff?${query}`, { as: owner });
        expect(res.status, query).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      // The same version is a valid side of its own document.
      const inItsOwnDocument = await t.call('GET', `/api/documents/${otherDoc.id}/diff?from=${foreign.id}&to=current`, { as: owner });
      expect(inItsOwnDocument.status).toBe(200);
      expect(inItsOwnDocument.body.stats).toEqual({ insertions: 0, deletions: 0 });
    });

    it('answers 422 when the two texts are too different to compare within the time limit', async () => {
      const doc = await createDoc(t, owner, { content: 'the first text of all' });
      const v1 = await saveVersion(owner, doc.id, 'v1');
      liveEdit(t, doc.id, owner.user.id, (text) => {
        text.delete(0, text.length);
        text.insert(0, 'something else entirely');
      });
      // The diff gives up after 2 s of wall-clock time, read from Date.now (in production: long texts
      // with little in common). A Date.now that jumps 3 s at every reading runs out of time at once.
      let now = Date.now();
      const clock = vi.spyOn(Date, 'now').mockImplementation(() => (now += 3000));
      try {
        for (const query of ['', '&granularity=line', '&granularity=char', '&format=unified']) {
          const res = await t.call('GET', `/api/documents/${doc.id}/diff?from=${v1.id}&to=current${query}`, { as: owner });
          expectProblem(res, 422, 'validation_failed', query);
          expect(res.body.detail).toBe('The two texts are too different to compare within the time limit');
        }
        // Equal sides need no search.
        const same = await t.call('GET', `/api/documents/${doc.id}/diff?from=current&to=current`, { as: owner });
        expect(same.status).toBe(200);
      } finally {
        clock.mockRestore();
      }
      const res = await t.call('GET', `/api/documents/${doc.id}/diff?from=${v1.id}&to=current`, { as: owner });
      expect(res.status).toBe(200);
      expect(res.body.changes.filter((c: { op: string }) => c.op !== 'delete').map((c: { text: string }) => c.text).join('')).toBe(
        'something else entirely',
      );
    });
  });

  describe('revert', () => {
    it('saves "Before revert to <name>", brings the old text back as one new change, seen by live editors', async () => {
      const editor = await t.newUser();
      const doc = await createDoc(t, owner, { content: 'original text' });
      await share(t, owner, doc.id, { user: editor }, 'editor');
      const v1 = await saveVersion(owner, doc.id, 'v1');
      liveAppend(t, doc.id, owner.user.id, ' with a regrettable addition');

      // A live editor holds the document open, as the WebSocket hub does.
      const live = t.deps.documents.acquire(doc.id);
      const received: Uint8Array[] = [];
      const subscriber = { onUpdate: (update: Uint8Array) => received.push(update) };
      t.deps.documents.subscribe(doc.id, subscriber);
      const peer = new Y.Doc();
      Y.applyUpdate(peer, Y.encodeStateAsUpdate(live));
      try {
        t.clock.advance(1000);
        const res = await t.call('POST', `/api/documents/${doc.id}/versions/${v1.id}/revert`, { as: editor });
        expect(res.status, res.text).toBe(200);
        expect(res.body.document).toMatchObject({ id: doc.id, content: 'original text', role: 'editor' });
        // The document as the revert left it.
        expect(res.body.document.updated_at).toBe(t.clock.now().toISOString());
        expect(res.body.before_revert_version).toMatchObject({ name: 'Before revert to v1', created_by: editor.user.id });

        expect(received).toHaveLength(1);
        for (const update of received) Y.applyUpdate(peer, update);
        expect(peer.getText(CONTENT_FIELD).toString()).toBe('original text');

        const before = await t.call('GET', `/api/documents/${doc.id}/versions/${res.body.before_revert_version.id}`, { as: owner });
        expect(before.body.content).toBe('original text with a regrettable addition');
        expect(await contentOf(t, owner, doc.id)).toBe('original text');

        const changes = await t.call('GET', `/api/documents/${doc.id}/changes`, { as: owner });
        expect(changes.body.data[0].user_id).toBe(editor.user.id);
        expect(changes.body.pagination.total).toBe(3);

        const undo = await t.call('GET', `/api/documents/${doc.id}/diff?from=${res.body.before_revert_version.id}&to=current`, { as: owner });
        expect(undo.body.changes.filter((c: { op: string }) => c.op === 'delete').map((c: { text: string }) => c.text).join('')).toBe(
          ' with a regrettable addition',
        );
        const versions = await t.call('GET', `/api/documents/${doc.id}/versions`, { as: owner });
        expect(versions.body.data.map((v: { name: string }) => v.name)).toEqual(['Before revert to v1', 'v1']);
      } finally {
        t.deps.documents.unsubscribe(doc.id, subscriber);
        t.deps.documents.release(doc.id);
        peer.destroy();
      }
    });

    it('reverting to the current text stores no change', async () => {
      const doc = await createDoc(t, owner, { content: 'steady' });
      const v1 = await saveVersion(owner, doc.id, 'v1');
      const res = await t.call('POST', `/api/documents/${doc.id}/versions/${v1.id}/revert`, { as: owner });
      expect(res.status).toBe(200);
      const changes = await t.call('GET', `/api/documents/${doc.id}/changes`, { as: owner });
      expect(changes.body.pagination.total).toBe(1);
    });
  });
});

describe('search suggestions', () => {
  it('matches word prefixes in titles and bodies, title hits first, with an escaped snippet', async () => {
    const me = await t.newUser();
    const inBody = await createDoc(t, me, { title: 'Field notes', content: 'We saw a <b>kangaroo</b> near the river & a wallaby.' });
    const inTitle = await createDoc(t, me, { title: 'Kangaroo habits', content: 'Marsupials of the outback.' });
    const res = await t.call('GET', '/api/documents/suggestions?q=kang', { as: me });
    expect(res.status).toBe(200);
    expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([inTitle.id, inBody.id]);
    const hit = res.body.data[1];
    expect(hit).toMatchObject({ title: 'Field notes', category: null });
    expect(hit.snippet).toBe('We saw a &lt;b&gt;<mark>kangaroo</mark>&lt;/b&gt; near the river &amp; a wallaby.');

    const both = await t.call('GET', '/api/documents/suggestions?q=KANG%20riv', { as: me });
    expect(both.body.data.map((s: { id: string }) => s.id)).toEqual([inBody.id]);
    const accents = await t.call('GET', `/api/documents/suggestions?q=${encodeURIComponent('wállaby')}`, { as: me });
    expect(accents.body.data.map((s: { id: string }) => s.id)).toEqual([inBody.id]);
  });

  it("highlights only real hits: a body's own hit-mark characters highlight nothing", async () => {
    const me = await t.newUser();
    // U+E000 and U+E001 are the marks snippet() puts around a hit; here a body holds them itself.
    const doc = await createDoc(t, me, { title: 'Marks', content: 'a \uE000forged\uE001 highlight beside a bilby' });
    const res = await t.call('GET', '/api/documents/suggestions?q=bilb', { as: me });
    expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([doc.id]);
    expect(res.body.data[0].snippet).toBe('a \uFFFDforged\uFFFD highlight beside a <mark>bilby</mark>');
    // The document itself keeps its text as written.
    expect(await contentOf(t, me, doc.id)).toBe('a \uE000forged\uE001 highlight beside a bilby');
  });

  it('returns at most 10 and only visible documents', async () => {
    const me = await t.newUser();
    const someone = await t.newUser();
    for (let i = 0; i < 12; i++) await createDoc(t, me, { title: `Platypus ${i}` });
    await createDoc(t, someone, { title: 'Platypus hidden' });
    const res = await t.call('GET', '/api/documents/suggestions?q=platyp', { as: me });
    expect(res.body.data).toHaveLength(10);
    expect(res.body.data.every((s: { title: string }) => s.title !== 'Platypus hidden')).toBe(true);
  });

  it('follows edits: titles and REST writes at once, live edits after the debounce', async () => {
    const me = await t.newUser();
    const doc = await createDoc(t, me, { title: 'Plain', content: 'nothing special' });
    const v1 = await saveVersion(me, doc.id, 'v1');
    const find = async (q: string) =>
      (await t.call('GET', `/api/documents/suggestions?q=${encodeURIComponent(q)}`, { as: me })).body.data.map((s: { id: string }) => s.id);

    await t.call('PATCH', `/api/documents/${doc.id}`, { as: me, body: { title: 'Echidna' } });
    expect(await find('echid')).toEqual([doc.id]);
    expect(await find('plain')).toEqual([]);

    liveAppend(t, doc.id, me.user.id, ' numbat');
    flushSearch(t);
    expect(await find('numb')).toEqual([doc.id]);

    await t.call('POST', `/api/documents/${doc.id}/versions/${v1.id}/revert`, { as: me });
    expect(await find('numb')).toEqual([]);

    const copy = await t.call('POST', `/api/documents/${doc.id}/copy`, { as: me, body: { title: 'Other' } });
    expect((await find('special')).sort()).toEqual([copy.body.id, doc.id].sort());
  });

  it('never fails on FTS syntax in the query', async () => {
    const me = await t.newUser();
    await createDoc(t, me, { title: 'Quoll', content: 'AND OR NOT NEAR title body' });
    const inputs = ['"', '""', '*', 'quoll*', '"quoll', 'AND', 'OR quoll', 'NOT', 'NEAR(quoll body)', 'title:quoll', '-quoll', '^quoll', "'", '(', ')', '{title body}:q', '+', ':', '\\', '🦘', 'a'.repeat(200), 'q u o l l'];
    for (const q of inputs) {
      const res = await t.call('GET', `/api/documents/suggestions?q=${encodeURIComponent(q)}`, { as: me });
      expect(res.status, q).toBe(200);
      expect(Array.isArray(res.body.data)).toBe(true);
      const list = await t.call('GET', `/api/documents?q=${encodeURIComponent(q)}`, { as: me });
      expect(list.status, q).toBe(200);
    }
    expect((await t.call('GET', '/api/documents/suggestions?q=%22quoll', { as: me })).body.data).toHaveLength(1);
    expect((await t.call('GET', '/api/documents/suggestions?q=AND', { as: me })).body.data).toHaveLength(1);
    expect((await t.call('GET', '/api/documents/suggestions', { as: me })).status).toBe(400);
    expect((await t.call('GET', '/api/documents/suggestions?q=%20%20', { as: me })).status).toBe(400);
    expect((await t.call('GET', `/api/documents/suggestions?q=${'a'.repeat(201)}`, { as: me })).status).toBe(400);
    expect((await t.call('GET', '/api/documents/suggestions?q=quoll')).status).toBe(401);
  });

  it('turns input into quoted prefix terms and snippets into safe HTML', () => {
    expect(ftsPrefixQuery('hello wor')).toBe('"hello"* "wor"*');
    expect(ftsPrefixQuery('"a" OR b*')).toBe('"a"* "OR"* "b"*');
    expect(ftsPrefixQuery('*** ()')).toBeNull();
    expect(snippetHtml('<i>\uE000hit\uE001</i> \uE000stray')).toBe('&lt;i&gt;<mark>hit</mark>&lt;/i&gt; stray');
  });

  it('indexes live edits once their debounce runs out, a slice of documents per turn of the event loop', async () => {
    const docs: DocumentJson[] = [];
    for (let i = 0; i < 5; i++) docs.push(await createDoc(t, owner, { content: 'draft' }));
    // A zero budget makes every slice one document, so the turns in between are visible.
    const index = new DocumentSearchIndex(t.db, t.deps.documents, { debounceMs: 1, sliceMs: 0 });
    const indexed = () =>
      docs.filter((d, i) => t.db.select().from(documentSearch).where(eq(documentSearch.documentId, d.id)).get()!.body.includes(`pangolin${i}`))
        .length;
    try {
      docs.forEach((d, i) => liveAppend(t, d.id, owner.user.id, ` pangolin${i}`));
      expect(indexed()).toBe(0);
      const seen: number[] = [];
      const deadline = Date.now() + 5_000;
      while (indexed() < docs.length && Date.now() < deadline) {
        await new Promise((resolve) => setImmediate(resolve));
        seen.push(indexed());
      }
      expect(indexed()).toBe(docs.length);
      expect(seen.some((n) => n > 0 && n < docs.length)).toBe(true);
    } finally {
      index.close();
    }
    for (const [i, d] of docs.entries()) {
      const found = await t.call('GET', `/api/documents/suggestions?q=pangolin${i}`, { as: owner });
      expect(found.body.data.map((s: { id: string }) => s.id)).toEqual([d.id]);
    }
  });

  it('indexes a document being typed into once the typing pauses, and at the latest after the longest wait while it goes on', async () => {
    const doc = await createDoc(t, owner, { content: 'draft' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
    const index = new DocumentSearchIndex(t.db, t.deps.documents, { debounceMs: 100, maxWaitMs: 1_000 });
    const refresh = vi.spyOn(index, 'refresh');
    const refreshes = () => refresh.mock.calls.filter(([id]) => id === doc.id).length;
    const indexedBody = () => t.db.select().from(documentSearch).where(eq(documentSearch.documentId, doc.id)).get()!.body;
    try {
      // A word every 50 ms for 1.5 s: never a 100 ms pause.
      for (let i = 1; i <= 30; i++) {
        liveAppend(t, doc.id, owner.user.id, ` wombat${i}`);
        await vi.advanceTimersByTimeAsync(50);
        // Nothing before the longest wait (1 s after the first word), one refresh right after it.
        if (i === 19) expect(refreshes()).toBe(0);
        if (i === 21) expect(refreshes()).toBe(1);
      }
      expect(refreshes()).toBe(1);
      expect(indexedBody()).toContain('wombat20');
      expect(indexedBody()).not.toContain('wombat30');
      // The typing stopped after the 30th word (1.45 s): indexed once it has paused for 100 ms.
      await vi.advanceTimersByTimeAsync(40);
      expect(refreshes()).toBe(1);
      await vi.advanceTimersByTimeAsync(20);
      expect(refreshes()).toBe(2);
      expect(indexedBody()).toContain('wombat30');
    } finally {
      index.close();
      // The app's own index saw the same edits under fake timers: write them now, with real timers back.
      flushSearch(t);
      vi.useRealTimers();
    }
  });

  it('a shutdown writes the pending refreshes of live edits, leaving nothing stale for the next start', async () => {
    const me = await t.newUser();
    const doc = await createDoc(t, me, { content: 'draft' });
    liveAppend(t, doc.id, me.user.id, ' axolotl');
    const search = () => t.db.select().from(documentSearch).where(eq(documentSearch.documentId, doc.id)).get()!;
    expect(search().body).not.toContain('axolotl');
    flushPendingWrites(t.deps);
    expect(search().body).toContain('axolotl');
    const lastUpdate = t.db.select({ id: max(documentUpdates.id) }).from(documentUpdates).where(eq(documentUpdates.documentId, doc.id)).get()!.id;
    expect(search().indexedThrough).toBe(lastUpdate);
  });

  it('reindexes bodies left stale (a crash before a debounced refresh, or between a new body and its indexing)', async () => {
    const me = await t.newUser();
    const doc = await createDoc(t, me, { content: 'bandicoot' });
    t.db.update(documentSearch).set({ body: '', indexedThrough: 0 }).where(eq(documentSearch.documentId, doc.id)).run();
    expect((await t.call('GET', '/api/documents/suggestions?q=bandi', { as: me })).body.data).toEqual([]);
    const index = new DocumentSearchIndex(t.db, t.deps.documents);
    try {
      expect(index.reindexStale()).toBeGreaterThanOrEqual(1);
    } finally {
      index.close();
    }
    expect((await t.call('GET', '/api/documents/suggestions?q=bandi', { as: me })).body.data.map((s: { id: string }) => s.id)).toEqual([doc.id]);
  });

  it('a body that cannot be read is logged and left stale; the rest of its slice is still indexed', async () => {
    const me = await t.newUser();
    const docs = [];
    for (const word of ['quokka', 'dingo', 'galah']) docs.push(await createDoc(t, me, { content: word }));
    for (const d of docs) t.db.update(documentSearch).set({ body: '', indexedThrough: 0 }).where(eq(documentSearch.documentId, d.id)).run();
    const broken = docs[1]!.id;
    const store = t.deps.documents;
    const getText = store.getText.bind(store);
    const readBody = vi.spyOn(store, 'getText').mockImplementation((id) => {
      if (id === broken) throw new Error('unreadable state');
      return getText(id);
    });
    const warn = vi.fn();
    const index = new DocumentSearchIndex(t.db, store, { logger: { warn } as unknown as Logger });
    const find = async (q: string) => (await t.call('GET', `/api/documents/suggestions?q=${q}`, { as: me })).body.data.map((s: { id: string }) => s.id);
    try {
      index.reindexStale();
      expect(warn).toHaveBeenCalledWith(expect.objectContaining({ documentId: broken }), 'search index refresh failed');
      expect(await find('quokka')).toEqual([docs[0]!.id]);
      expect(await find('galah')).toEqual([docs[2]!.id]);
      expect(await find('dingo')).toEqual([]);
      expect(t.db.select().from(documentSearch).where(eq(documentSearch.documentId, broken)).get()!.indexedThrough).toBe(0);

      // Still stale, so it is redone once it can be read (the next start, or its next edit).
      readBody.mockRestore();
      expect(index.reindexStale()).toBeGreaterThanOrEqual(1);
      expect(await find('dingo')).toEqual([broken]);
    } finally {
      readBody.mockRestore();
      index.close();
    }
  });

  it('records an unchanged body as indexed without writing the full-text index again', async () => {
    const me = await t.newUser();
    const doc = await createDoc(t, me, { content: 'wombat burrow' });
    t.db.update(documentSearch).set({ indexedThrough: 0 }).where(eq(documentSearch.documentId, doc.id)).run();
    const ftsPages = () => t.deps.sqlite.prepare('SELECT id, block FROM documents_fts_data ORDER BY id').all();
    const before = ftsPages();
    const index = new DocumentSearchIndex(t.db, t.deps.documents);
    try {
      expect(index.reindexStale()).toBe(1);
    } finally {
      index.close();
    }
    expect(ftsPages()).toEqual(before);
    const row = t.db.select().from(documentSearch).where(eq(documentSearch.documentId, doc.id)).get()!;
    expect(row.indexedThrough).toBeGreaterThan(0);
    expect(row.body).toContain('wombat burrow');
    expect((await t.call('GET', '/api/documents/suggestions?q=wombat', { as: me })).body.data.map((s: { id: string }) => s.id)).toEqual([doc.id]);
  });
});

describe('change history', () => {
  it('lists one entry per stored update with its author, newest first, paginated', async () => {
    const editor = await t.newUser();
    const doc = await createDoc(t, owner, { content: 'v0' });
    await share(t, owner, doc.id, { user: editor }, 'editor');
    liveAppend(t, doc.id, editor.user.id, ' one');
    t.clock.advance(1000);
    liveAppend(t, doc.id, owner.user.id, ' two');

    const res = await t.call('GET', `/api/documents/${doc.id}/changes`, { as: editor });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(3);
    expect(res.body.data.map((c: { user_id: string }) => c.user_id)).toEqual([owner.user.id, editor.user.id, owner.user.id]);
    const ids = res.body.data.map((c: { id: number }) => c.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    for (const c of res.body.data) expect(c.bytes).toBeGreaterThan(0);
    expect(res.body.data[0].created_at > res.body.data[1].created_at).toBe(true);

    const page = await t.call('GET', `/api/documents/${doc.id}/changes?per_page=1&page=2`, { as: editor });
    expect(page.body.data.map((c: { user_id: string }) => c.user_id)).toEqual([editor.user.id]);
    expect(page.headers.get('link')).toContain('rel="next"');
    expect((await t.call('GET', `/api/documents/${doc.id}/changes?per_page=101`, { as: editor })).status).toBe(400);
  });
});
