// PUT /api/documents/{id}/content (issue 21): the body becomes new Markdown, applied to the live
// document as one change of minimal edits, so that connected stock y-websocket clients see it at
// once, keep their cursors (Y.RelativePosition) and their own concurrent edits; recorded in the
// change history under the caller; the same size limit as every other write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD } from '../collab/store';
import { textEdits } from '../collab/text-edits';
import { MISSING_ID, expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { editorsOf, eventually, startCollabServer, synced, type CollabServer, type Editor } from './helpers/collab';
import { createDoc, share } from './helpers/documents';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let editor: TestUser;
let commenter: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let foreigner: TestUser;
const editors = editorsOf(() => server.port);
const live = (documentId: string, user: TestUser): Editor => editors.open(documentId, user);

async function sharedDoc(content: string): Promise<string> {
  const doc = await createDoc(t, owner, { content });
  await share(t, owner, doc.id, { user: editor }, 'editor');
  await share(t, owner, doc.id, { user: commenter }, 'commenter');
  await share(t, owner, doc.id, { user: viewer }, 'viewer');
  return doc.id;
}

const put = (id: string, as: TestUser, body: unknown) => t.call('PUT', `/api/documents/${id}/content`, { as, body });
const contentOf = async (id: string) => (await t.call('GET', `/api/documents/${id}?include=content`, { as: owner })).body.content as string;
const changes = async (id: string) => (await t.call('GET', `/api/documents/${id}/changes`, { as: owner })).body;

// Every case runs twice: with the whole-body work inline (small documents, the default below
// DEFAULT_OFFLOAD_MIN_BYTES) and in the Yjs worker threads (large documents; here every document).
describe.each([
  { mode: 'inline', offloadMinBytes: undefined },
  { mode: 'in a worker thread', offloadMinBytes: 0 },
])('with the edits made $mode', ({ offloadMinBytes }) => {
  beforeAll(async () => {
    // The diff's time budget is wall-clock: generous here, so that a slow machine cannot turn a
    // minimal change into a whole replacement (what these cases check is the change itself).
    t = await makeTestApp({ offloadMinBytes, inlineDiffTimeoutMs: 10_000 });
    server = await startCollabServer(t, { pingIntervalMs: 60_000 });
    [owner, editor, commenter, viewer, stranger] = await Promise.all([t.newUser(), t.newUser(), t.newUser(), t.newUser(), t.newUser()]);
    foreigner = (await t.newTenant('content-elsewhere')).admin;
  });

  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  describe('PUT /api/documents/{id}/content', () => {
    it('an editor replaces the body: 200 with the document and its content, recorded as their change', async () => {
      const id = await sharedDoc('# Notes\n\nThe first draft.\n');
      const before = await changes(id);
      t.clock.advance(60_000);
      const res = await put(id, editor, { content: '# Notes\n\nThe second draft.\n' });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, title: 'A document', role: 'editor', favorite: false, content: '# Notes\n\nThe second draft.\n' });
      expect(res.body.updated_at).toBe(t.clock.now().toISOString());
      // As GET with include=content answers.
      const got = await t.call('GET', `/api/documents/${id}?include=content`, { as: editor });
      expect(res.body).toEqual(got.body);
      const after = await changes(id);
      expect(after.pagination.total).toBe(before.pagination.total + 1);
      expect(after.data[0]).toMatchObject({ user_id: editor.user.id, created_at: t.clock.now().toISOString() });
      // A minimal edit: the change holds the replaced word, not the body.
      expect(after.data[0].bytes).toBeLessThan(60);
    });

    it('owners may too; an unchanged body changes nothing', async () => {
      const id = await sharedDoc('same');
      const res = await put(id, owner, { content: 'same' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ role: 'owner', content: 'same' });
      expect((await changes(id)).pagination.total).toBe(1);
      expect((await put(id, owner, { content: '' })).body.content).toBe('');
      expect(await contentOf(id)).toBe('');
    });

    it('403 for viewers and commenters; 404 for strangers, other tenants, unknown and trashed documents', async () => {
      const id = await sharedDoc('kept');
      for (const user of [viewer, commenter]) {
        const res = await put(id, user, { content: 'changed' });
        expectProblem(res, 403, 'forbidden');
      }
      for (const user of [stranger, foreigner]) expectProblem(await put(id, user, { content: 'changed' }), 404, 'not_found');
      expectProblem(await put(MISSING_ID, owner, { content: 'changed' }), 404, 'not_found');
      expect(await contentOf(id)).toBe('kept');
      expect((await t.call('DELETE', `/api/documents/${id}`, { as: owner })).status).toBe(204);
      expectProblem(await put(id, owner, { content: 'changed' }), 404, 'not_found');
    });

    it('400 for a missing or non-string content (naming it), an unknown field or malformed JSON; 415 for a body that is not JSON', async () => {
      const id = await sharedDoc('kept');
      const missing = await put(id, editor, {});
      expectProblem(missing, 400, 'validation_failed');
      expect(missing.body.errors).toEqual([{ path: 'content', message: 'content is required' }]);
      for (const content of [42, null, ['a'], { text: 'a' }]) {
        const res = await put(id, editor, { content });
        expectProblem(res, 400, 'validation_failed', JSON.stringify(content));
        expect(res.body.errors).toEqual([{ path: 'content', message: 'content must be a string of Markdown' }]);
      }
      const nul = await put(id, editor, { content: 'a\u0000b' });
      expectProblem(nul, 422, 'validation_failed');
      expect(nul.body.errors.map((e: { path: string }) => e.path)).toEqual(['content']);
      const extra = await put(id, editor, { content: 'x', title: 'y' });
      expectProblem(extra, 400, 'validation_failed');
      const malformed = await t.call('PUT', `/api/documents/${id}/content`, { as: editor, rawBody: '{"content": "x"', headers: { 'Content-Type': 'application/json' } });
      expectProblem(malformed, 400, 'validation_failed');
      const text = await t.call('PUT', `/api/documents/${id}/content`, { as: editor, rawBody: 'new body', headers: { 'Content-Type': 'text/markdown' } });
      expectProblem(text, 415, 'unsupported_media_type');
      expect(await contentOf(id)).toBe('kept');
    });

    it('keeps the search index in step', async () => {
      const id = await sharedDoc('nothing special');
      await put(id, editor, { content: 'a zygomorphic flower' });
      const res = await t.call('GET', '/api/documents/suggestions?q=zygomorph', { as: owner });
      expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([id]);
    });

    it('takes large bodies with scattered changes and stores exactly the new body', async () => {
      const lines = Array.from({ length: 3_000 }, (_, i) => `Line ${i}: lorem ipsum dolor sit amet, consectetur adipiscing elit.`);
      const id = await sharedDoc(lines.join('\n'));
      const changed = lines.map((line, i) => (i % 97 === 0 ? line.replace('ipsum', 'IPSUM') : line));
      changed.splice(1500, 10, '## A new section', 'with two lines');
      const res = await put(id, editor, { content: changed.join('\n') });
      expect(res.status).toBe(200);
      expect(await contentOf(id)).toBe(changed.join('\n'));
      // Still minimal: far smaller than the body.
      expect((await changes(id)).data[0].bytes).toBeLessThan(5_000);
    });

    it('is in the OpenAPI document like its neighbours', async () => {
      const doc = (await t.call('GET', '/api/openapi.json')).body;
      const op = doc.paths['/api/documents/{id}/content'].put;
      expect(op.tags).toEqual(['Documents']);
      expect(op.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '503']);
      expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ReplaceDocumentContent');
    });
  });

  describe('with editors connected', () => {
    it('reaches connected editors at once; an edit made concurrently at the end survives; both converge; cursors keep their place', async () => {
      const id = await sharedDoc('The quick brown fox jumps over the lazy dog.');
      const a = live(id, editor);
      const b = live(id, owner);
      await Promise.all([synced(a), synced(b)]);
      // B's cursor before "jumps", A's before "lazy".
      const bCursor = Y.createRelativePositionFromTypeIndex(b.text, b.text.toString().indexOf('jumps'));
      const aCursor = Y.createRelativePositionFromTypeIndex(a.text, a.text.toString().indexOf('lazy'));
      const at = (e: Editor, cursor: Y.RelativePosition) => {
        const abs = Y.createAbsolutePositionFromRelativePosition(cursor, e.doc)!;
        expect(abs.type).toBe(e.text);
        return e.text.toString().slice(abs.index);
      };

      // A types at the end while its change is not yet at the server (concurrent with the PUT);
      // the PUT replaces a middle word, as its caller saw the body.
      a.provider.disconnect();
      a.text.insert(a.text.length, ' The end.');
      const res = await put(id, editor, { content: 'The quick red fox jumps over the lazy dog.' });
      expect(res.status).toBe(200);
      await eventually(() => b.text.toString() === 'The quick red fox jumps over the lazy dog.', 5_000, 'B sees the PUT at once');
      expect(at(b, bCursor).startsWith('jumps')).toBe(true);

      a.provider.connect();
      const expected = 'The quick red fox jumps over the lazy dog. The end.';
      await eventually(() => a.text.toString() === expected && b.text.toString() === expected, 5_000, 'converged');
      expect(await contentOf(id)).toBe(expected);
      expect(at(a, aCursor).startsWith('lazy dog. The end.')).toBe(true);
      expect(at(b, bCursor).startsWith('jumps over')).toBe(true);
      const history = (await changes(id)).data;
      expect(history.map((c: { user_id: string }) => c.user_id)).toContain(editor.user.id);
    });

    it('while an editor keeps typing at the end, a PUT of the body it saw replaces the middle word and both edits are kept', async () => {
      const id = await sharedDoc('alpha beta gamma');
      const a = live(id, editor);
      await synced(a);
      // Typed and sent; the PUT below is based on what its caller read before the typing.
      a.text.insert(a.text.length, ' delta');
      await eventually(async () => (await contentOf(id)) === 'alpha beta gamma delta', 5_000, 'the typing stored');
      const seen = 'alpha beta gamma delta';
      const res = await put(id, owner, { content: seen.replace('beta', 'BETA') });
      expect(res.body.content).toBe('alpha BETA gamma delta');
      a.text.insert(a.text.length, ' epsilon');
      await eventually(async () => (await contentOf(id)) === 'alpha BETA gamma delta epsilon', 5_000, 'both kept');
      expect(a.text.toString()).toBe('alpha BETA gamma delta epsilon');
    });

    it('two PUTs at once are taken in turn: the body ends as the later one, each recorded as one change', async () => {
      const id = await sharedDoc('one two three');
      const before = (await changes(id)).data.length;
      const [first, second] = await Promise.all([put(id, editor, { content: 'one TWO three' }), put(id, owner, { content: 'uno dos tres' })]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(await contentOf(id)).toBe('uno dos tres');
      expect((await changes(id)).data.length).toBe(before + 2);
    });
  });
});

describe('textEdits', () => {
  it('turns any text into any other, by character runs that keep surrogate pairs whole', () => {
    let seed = 11;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    // Two emoji that share their first UTF-16 unit: a split between them would break a pair.
    const alphabet = ['a', 'b', ' ', '\n', 'é', '😀', '😁', '𝄞', 'x'];
    const word = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    for (let round = 0; round < 300; round++) {
      const from = word(Math.floor(random() * (round % 10 === 0 ? 30_000 : 200)));
      let to = from;
      for (let k = Math.floor(random() * 5); k >= 0; k--) {
        const at = Math.floor(random() * (to.length + 1));
        to = to.slice(0, at) + word(Math.floor(random() * 20)) + to.slice(at + Math.floor(random() * 20));
      }
      // Applied to a Y.Text (which turns half a pair into U+FFFD), they give exactly `to`.
      const doc = new Y.Doc();
      const text = doc.getText(CONTENT_FIELD);
      text.insert(0, from);
      let index = 0;
      for (const part of textEdits(from, to)) {
        if (part.added) {
          text.insert(index, part.value);
          index += part.value.length;
        } else if (part.removed) text.delete(index, part.value.length);
        else index += part.value.length;
      }
      expect(text.toString()).toBe(to);
    }
  });

  it('walks large texts line by line, whatever their last lines hold', () => {
    const body = Array.from({ length: 3_000 }, (_, i) => `line ${i} of the body`).join('\n');
    const cases: Array<[string, string]> = [
      [body, body.replace('line 10 ', 'LINE 10 ') + ' and more'],
      [body + '\n', body.replace('line 10 ', 'LINE 10 ') + '\nlast'],
      [body.replace('line 10 ', 'LINE 10 ') + ' and more', body],
      [body, body.replace('line 2999 of', 'line 2999 of the end of')],
      [body, body.replace('line 1500', 'line 1500\nnew line').replace('line 20 ', 'line twenty ')],
    ];
    for (const [from, to] of cases) {
      const parts = textEdits(from, to);
      expect(parts.filter((p) => !p.added).map((p) => p.value).join('')).toBe(from);
      expect(parts.filter((p) => !p.removed).map((p) => p.value).join('')).toBe(to);
      expect(parts.filter((p) => p.added || p.removed).reduce((n, p) => n + p.value.length, 0)).toBeLessThan(200);
    }
  });

  it('turns any large text of lines into another: lines dropped, added, changed, a last line with or without a break', () => {
    let seed = 17;
    const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const pool = ['', 'a', 'same line', 'same line', 'x y z', '😀😁', 'tail', '# head', '- item', 'é\r'];
    const any = () => pool[Math.floor(random() * pool.length)]! + (random() < 0.5 ? ` ${Math.floor(random() * 1000)}` : '');
    for (let round = 0; round < 120; round++) {
      const lines = Array.from({ length: 1_500 + Math.floor(random() * 3_000) }, any);
      const from = lines.join('\n') + (random() < 0.5 ? '\n' : '');
      for (let k = Math.floor(random() * 30); k >= 0; k--) {
        const at = Math.floor(random() * lines.length);
        const op = random();
        if (op < 0.3) lines.splice(at, 1 + Math.floor(random() * 3));
        else if (op < 0.6) lines.splice(at, 0, ...Array.from({ length: 1 + Math.floor(random() * 3) }, any));
        else lines[at] = `${lines[at] ?? ''} changed`;
      }
      const to = (random() < 0.1 ? '\n' : '') + lines.join('\n') + (random() < 0.5 ? '\n' : '') + (random() < 0.2 ? 'trailing' : '');
      const parts = textEdits(from, to);
      expect(parts.filter((p) => !p.added).map((p) => p.value).join('')).toBe(from);
      expect(parts.filter((p) => !p.removed).map((p) => p.value).join('')).toBe(to);
    }
  });

  it('keeps what is shared at both ends, and gives both sides back on large, very different texts', () => {
    const parts = textEdits('hello brave new world', 'hello bold new world');
    expect(parts.filter((p) => !p.added && !p.removed).map((p) => p.value).join('')).toBe('hello b new world');
    const big = Array.from({ length: 60_000 }, (_, i) => `line ${i * 7919 % 60_000}`).join('\n');
    const other = Array.from({ length: 60_000 }, (_, i) => `row ${i * 104_729 % 60_000}`).join('\n');
    const edits = textEdits(big, other);
    expect(edits.filter((p) => !p.added).map((p) => p.value).join('')).toBe(big);
    expect(edits.filter((p) => !p.removed).map((p) => p.value).join('')).toBe(other);
  });
});
