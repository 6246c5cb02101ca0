// Comment threads: anchors that follow edits (live ones through stock y-websocket clients), bad
// anchors, threads and replies, update and delete rules, resolve and reopen, the events in the
// feeds of owners and participants, and every role's rights.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { feedPage } from '../src/events/log';
import { WorkersBusyError } from '../src/lib/worker-pool';
import { expectProblem, makeTestApp, MISSING_ID, type TestApp, type TestUser } from './helpers/app';
import { editorsOf, eventually, startCollabServer, synced, type CollabServer } from './helpers/collab';
import { createDoc, liveEdit, share } from './helpers/documents';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let editor: TestUser;
let commenter: TestUser;
let viewer: TestUser;
let outsider: TestUser;
const editors = editorsOf(() => server.port);

beforeAll(async () => {
  t = await makeTestApp();
  server = await startCollabServer(t);
  owner = await t.newUser({ name: 'Owner' });
  editor = await t.newUser({ name: 'Editor' });
  commenter = await t.newUser({ name: 'Commenter' });
  viewer = await t.newUser({ name: 'Viewer' });
  outsider = await t.newUser({ name: 'Outsider' });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** An anchor over [from, to) of a Y.Text, as a client makes it. */
function anchorOn(text: Y.Text, from: number, to: number) {
  return {
    start: b64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, from))),
    end: b64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, to))),
  };
}

/** An anchor on the stored document, made on a replica of its state. */
function anchorOnStored(documentId: string, phrase: string) {
  const replica = new Y.Doc();
  Y.applyUpdate(replica, t.deps.documents.encodeState(documentId));
  const text = replica.getText('content');
  const from = text.toString().indexOf(phrase);
  expect(from).toBeGreaterThanOrEqual(0);
  return anchorOn(text, from, from + phrase.length);
}

async function sharedDoc(content: string): Promise<string> {
  const doc = await createDoc(t, owner, { title: 'Essay', content });
  await share(t, owner, doc.id, { user: editor }, 'editor');
  await share(t, owner, doc.id, { user: commenter }, 'commenter');
  await share(t, owner, doc.id, { user: viewer }, 'viewer');
  return doc.id;
}

const threadsOf = async (as: TestUser, documentId: string, path = 'comments') => {
  const res = await t.call('GET', `/api/documents/${documentId}/${path}`, { as });
  expect(res.status, res.text).toBe(200);
  return res.body.data as any[];
};

describe('anchors', () => {
  it('follow live edits made through y-websocket clients; the text is null and orphaned once deleted', async () => {
    const id = await sharedDoc('The mitochondria is the powerhouse of the cell.');
    const writer = editors.open(id, editor);
    const reader = editors.open(id, commenter);
    await Promise.all([synced(writer), synced(reader)]);

    // The commenter anchors on its own live replica, as an editor UI does.
    const content = reader.text.toString();
    const from = content.indexOf('powerhouse');
    const created = await t.call('POST', `/api/documents/${id}/comments`, {
      as: commenter,
      body: { body: 'Cite a source?', anchor: anchorOn(reader.text, from, from + 'powerhouse'.length) },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/comments/${created.body.id}`);
    expect(created.body).toMatchObject({ body: 'Cite a source?', thread_id: created.body.id, parent_id: null, anchor: { text: 'powerhouse', orphaned: false } });

    // Text inserted before the anchor, and inside the document around it, live.
    writer.text.insert(0, 'In short: ');
    writer.text.insert(writer.text.length, ' Indeed.');
    await eventually(() => t.deps.documents.getText(id).startsWith('In short: ') && t.deps.documents.getText(id).endsWith('Indeed.'), 5_000, 'edits stored');
    let [thread] = await threadsOf(owner, id);
    expect(thread.anchor).toMatchObject({ text: 'powerhouse', orphaned: false, start: created.body.anchor.start, end: created.body.anchor.end });

    // An edit inside the anchored text is part of it.
    const inside = writer.text.toString().indexOf('house');
    writer.text.insert(inside, '-');
    await eventually(() => t.deps.documents.getText(id).includes('power-house'), 5_000, 'inner edit stored');
    [thread] = await threadsOf(viewer, id);
    expect(thread.anchor.text).toBe('power-house');

    // The anchored text deleted: orphaned.
    const at = writer.text.toString().indexOf('power-house');
    writer.text.delete(at, 'power-house'.length);
    await eventually(() => !t.deps.documents.getText(id).includes('house'), 5_000, 'deletion stored');
    [thread] = await threadsOf(viewer, id);
    expect(thread.anchor).toMatchObject({ text: null, orphaned: true });
    expect(thread.body).toBe('Cite a source?');
  });

  it('resolves against the stored document when nobody has it open', async () => {
    const id = await sharedDoc('Alpha beta gamma');
    const created = await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Greek?', anchor: anchorOnStored(id, 'beta') } });
    expect(created.status, created.text).toBe(201);
    liveEdit(t, id, editor.user.id, (text) => text.insert(0, 'Zeta '));
    expect((await threadsOf(commenter, id))[0].anchor).toMatchObject({ text: 'beta', orphaned: false });
  });

  it('of a large document no one holds are resolved after it is loaded a slice at a time, not in one go; 503 with Retry-After while the worker threads are busy', async () => {
    const store = t.deps.documents;
    const words = Array.from({ length: 30_000 }, (_, i) => `word${i}`).join(' ');
    const id = await sharedDoc(`${words} the needle ${words}`);
    const anchor = anchorOnStored(id, 'the needle');
    expect(store.isLive(id)).toBe(false);
    const loads = vi.spyOn(store as unknown as { load: (id: string) => unknown }, 'load');
    let created;
    try {
      created = await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Found it', anchor } });
      expect(created.status, created.text).toBe(201);
      expect(created.body.anchor).toMatchObject({ text: 'the needle', orphaned: false });
      expect((await threadsOf(viewer, id))[0].anchor).toMatchObject({ text: 'the needle', orphaned: false });
      expect(loads).not.toHaveBeenCalled();
    } finally {
      loads.mockRestore();
    }
    // Preloaded (held in memory a while for what follows), let go here to be loaded again.
    store.unloadIdle();
    expect(store.isLive(id)).toBe(false);
    const run = vi.spyOn(t.deps.workers, 'run').mockRejectedValue(new WorkersBusyError());
    try {
      const list = await t.call('GET', `/api/documents/${id}/comments`, { as: viewer });
      expectProblem(list, 503, 'service_unavailable');
      expect(list.headers.get('retry-after')).toBe('5');
      expectProblem(await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Again', anchor } }), 503, 'service_unavailable');
      // A change to an anchored thread is refused before it is stored, not answered 503 after.
      const found = created.body.id as string;
      expectProblem(await t.call('PATCH', `/api/comments/${found}`, { as: commenter, body: { body: 'Changed' } }), 503, 'service_unavailable');
      expectProblem(await t.call('POST', `/api/comments/${found}/resolve`, { as: commenter }), 503, 'service_unavailable');
      // An unanchored thread needs no anchor resolved.
      expect((await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Unanchored' } })).status).toBe(201);
    } finally {
      run.mockRestore();
    }
    const threads = await threadsOf(viewer, id);
    expect(threads.map((thread) => thread.body)).toEqual(['Found it', 'Unanchored']);
    expect(threads[0].resolved_at).toBeNull();
  });

  it('refuses a bad anchor with 422: not base64, not a relative position, of another document, another type, empty', async () => {
    const id = await sharedDoc('Some words to anchor on');
    const good = anchorOnStored(id, 'words');
    const other = new Y.Doc();
    other.getText('content').insert(0, 'Some words to anchor on');
    const foreign = anchorOn(other.getText('content'), 5, 10);
    const elsewhere = {
      start: b64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(other.getText('notes'), 0))),
      end: good.end,
    };
    const replica = new Y.Doc();
    Y.applyUpdate(replica, t.deps.documents.encodeState(id));
    const collapsed = anchorOn(replica.getText('content'), 5, 5);
    const cases: [string, unknown, string][] = [
      ['not base64', { start: '!!!not base64', end: good.end }, 'anchor.start'],
      ['garbage bytes', { start: good.start, end: b64(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff])) }, 'anchor.end'],
      ['trailing bytes', { start: b64(Buffer.concat([Buffer.from(good.start, 'base64'), Buffer.from([1, 2, 3])])), end: good.end }, 'anchor.start'],
      ['another document', foreign, 'anchor.start'],
      ['another root type', elsewhere, 'anchor.start'],
      ['empty range', collapsed, 'anchor'],
      ['reversed range', { start: good.end, end: good.start }, 'anchor'],
    ];
    for (const [label, anchor, path] of cases) {
      const res = await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'x', anchor } });
      expectProblem(res, 422, 'validation_failed', label);
      expect(res.body.errors?.[0]?.path, label).toBe(path);
    }
    expect(await threadsOf(owner, id)).toEqual([]);
    // Malformed shapes are 400.
    for (const anchor of [{ start: good.start }, { start: 1, end: 2 }, 'x']) {
      expectProblem(await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'x', anchor } }), 400, 'validation_failed');
    }
  });

  it('an unanchored thread has anchor null; a reply takes no anchor', async () => {
    const id = await sharedDoc('Text');
    const root = await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'General remark' } });
    expect(root.status).toBe(201);
    expect(root.body.anchor).toBeNull();
    const reply = await t.call('POST', `/api/documents/${id}/comments`, {
      as: editor,
      body: { body: 'with anchor', parent_id: root.body.id, anchor: anchorOnStored(id, 'Text') },
    });
    expectProblem(reply, 422, 'validation_failed');
  });
});

describe('threads', () => {
  it('a root and replies; list and list unresolved; resolve and reopen the whole thread', async () => {
    const id = await sharedDoc('A short essay about cells.');
    const root = (await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Expand this', anchor: anchorOnStored(id, 'cells') } })).body;
    const reply = await t.call('POST', `/api/documents/${id}/comments`, { as: editor, body: { body: 'Will do', parent_id: root.id } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ thread_id: root.id, parent_id: root.id, anchor: null, resolved: false });
    // A reply to a reply joins the same thread.
    const nested = await t.call('POST', `/api/documents/${id}/comments`, { as: owner, body: { body: 'Thanks', parent_id: reply.body.id } });
    expect(nested.body).toMatchObject({ thread_id: root.id, parent_id: reply.body.id });
    const second = (await t.call('POST', `/api/documents/${id}/comments`, { as: owner, body: { body: 'Second thread' } })).body;

    let threads = await threadsOf(viewer, id);
    expect(threads.map((th) => th.id)).toEqual([root.id, second.id]);
    expect(threads[0].replies.map((r: any) => r.body)).toEqual(['Will do', 'Thanks']);
    expect(threads[0].anchor.text).toBe('cells');

    const resolved = await t.call('POST', `/api/comments/${reply.body.id}/resolve`, { as: commenter });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ id: root.id, resolved: true, resolved_by: commenter.user.id });
    expect(resolved.body.replies.every((r: any) => r.resolved)).toBe(true);
    expectProblem(await t.call('POST', `/api/comments/${root.id}/resolve`, { as: owner }), 409, 'conflict');

    expect((await threadsOf(viewer, id, 'comments/unresolved')).map((th) => th.id)).toEqual([second.id]);
    threads = await threadsOf(viewer, id);
    expect(threads.map((th) => th.resolved)).toEqual([true, false]);

    const reopened = await t.call('POST', `/api/comments/${root.id}/reopen`, { as: editor });
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ resolved: false, resolved_at: null, resolved_by: null });
    expectProblem(await t.call('POST', `/api/comments/${root.id}/reopen`, { as: editor }), 409, 'conflict');
    expect((await threadsOf(viewer, id, 'comments/unresolved')).map((th) => th.id)).toEqual([root.id, second.id]);
  });

  it('update: the author only, and the text is checked', async () => {
    const id = await sharedDoc('x');
    const c = (await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Typo here' } })).body;
    const changed = await t.call('PATCH', `/api/comments/${c.id}`, { as: commenter, body: { body: 'No typo here' } });
    expect(changed.status).toBe(200);
    expect(changed.body.body).toBe('No typo here');
    for (const other of [owner, editor]) expectProblem(await t.call('PATCH', `/api/comments/${c.id}`, { as: other, body: { body: 'hijack' } }), 403, 'forbidden');
    expectProblem(await t.call('PATCH', `/api/comments/${c.id}`, { as: viewer, body: { body: 'hijack' } }), 403, 'forbidden');
    expectProblem(await t.call('PATCH', `/api/comments/${c.id}`, { as: outsider, body: { body: 'hijack' } }), 404, 'not_found');
    expectProblem(await t.call('PATCH', `/api/comments/${c.id}`, { as: commenter, body: { body: '   ' } }), 400, 'validation_failed');
    expectProblem(await t.call('PATCH', `/api/comments/${c.id}`, { as: commenter, body: { body: 'bad \u0000 char' } }), 422, 'validation_failed');
    expect((await threadsOf(owner, id))[0].body).toBe('No typo here');
  });

  it('delete: the author or an owner; a deleted root keeps its thread readable, shown as deleted', async () => {
    const id = await sharedDoc('x');
    const root = (await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Opening' } })).body;
    const reply = (await t.call('POST', `/api/documents/${id}/comments`, { as: editor, body: { body: 'Answer', parent_id: root.id } })).body;
    expectProblem(await t.call('DELETE', `/api/comments/${root.id}`, { as: editor }), 403, 'forbidden');
    expectProblem(await t.call('DELETE', `/api/comments/${root.id}`, { as: viewer }), 403, 'forbidden');
    expectProblem(await t.call('DELETE', `/api/comments/${root.id}`, { as: outsider }), 404, 'not_found');
    expect((await t.call('DELETE', `/api/comments/${root.id}`, { as: commenter })).status).toBe(204);
    const [thread] = await threadsOf(viewer, id);
    expect(thread).toMatchObject({ id: root.id, body: null, deleted: true, author_id: commenter.user.id });
    expect(thread.replies).toMatchObject([{ id: reply.id, body: 'Answer', deleted: false }]);
    expectProblem(await t.call('PATCH', `/api/comments/${root.id}`, { as: commenter, body: { body: 'back' } }), 404, 'not_found');
    expectProblem(await t.call('DELETE', `/api/comments/${root.id}`, { as: commenter }), 404, 'not_found');
    // The owner deletes the last reply: the whole thread goes.
    expect((await t.call('DELETE', `/api/comments/${reply.id}`, { as: owner })).status).toBe(204);
    expect(await threadsOf(viewer, id)).toEqual([]);
    // A root alone goes at once.
    const lone = (await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Lone' } })).body;
    expect((await t.call('DELETE', `/api/comments/${lone.id}`, { as: owner })).status).toBe(204);
    expectProblem(await t.call('POST', `/api/comments/${lone.id}/resolve`, { as: owner }), 404, 'not_found');
  });

  it('parent_id of another document is 422', async () => {
    const a = await sharedDoc('a');
    const b = await sharedDoc('b');
    const onA = (await t.call('POST', `/api/documents/${a}/comments`, { as: commenter, body: { body: 'On A' } })).body;
    expectProblem(await t.call('POST', `/api/documents/${b}/comments`, { as: commenter, body: { body: 'x', parent_id: onA.id } }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/documents/${b}/comments`, { as: commenter, body: { body: 'x', parent_id: MISSING_ID } }), 422, 'validation_failed');
  });
});

describe('events', () => {
  const feedOf = (user: TestUser) => feedPage(t.db, user.user.id, 50, 0).rows.map((e) => ({ type: e.type, data: JSON.parse(e.payload) }));

  it("go to the document's owners and the thread's participants, never to the actor", async () => {
    const id = await sharedDoc('x');
    const before = { owner: feedOf(owner).length, editor: feedOf(editor).length, commenter: feedOf(commenter).length, viewer: feedOf(viewer).length };
    const root = (await t.call('POST', `/api/documents/${id}/comments`, { as: commenter, body: { body: 'Opening' } })).body;
    expect(feedOf(owner)[0]).toEqual({ type: 'comment.created', data: { comment_id: root.id, thread_id: root.id, document_id: id, title: 'Essay' } });
    expect(feedOf(commenter).length).toBe(before.commenter);
    expect(feedOf(editor).length).toBe(before.editor);

    const reply = (await t.call('POST', `/api/documents/${id}/comments`, { as: editor, body: { body: 'Reply', parent_id: root.id } })).body;
    expect(feedOf(commenter)[0]).toMatchObject({ type: 'comment.replied', data: { comment_id: reply.id, thread_id: root.id } });
    expect(feedOf(owner)[0]).toMatchObject({ type: 'comment.replied' });
    expect(feedOf(editor).length).toBe(before.editor);

    await t.call('POST', `/api/comments/${root.id}/resolve`, { as: owner });
    expect(feedOf(commenter)[0]).toMatchObject({ type: 'comment.resolved', data: { thread_id: root.id } });
    expect(feedOf(editor)[0]).toMatchObject({ type: 'comment.resolved' });
    await t.call('POST', `/api/comments/${root.id}/reopen`, { as: commenter });
    expect(feedOf(owner)[0]).toMatchObject({ type: 'comment.reopened' });
    expect(feedOf(editor)[0]).toMatchObject({ type: 'comment.reopened' });
    expect(feedOf(viewer).length).toBe(before.viewer);
  });
});

describe('rights', () => {
  it('each role: viewers read; commenters and above write, reply, resolve; others 404; no credential 401', async () => {
    const id = await sharedDoc('x');
    const root = (await t.call('POST', `/api/documents/${id}/comments`, { as: owner, body: { body: 'Root' } })).body;
    for (const [user, writes] of [
      [owner, true],
      [editor, true],
      [commenter, true],
      [viewer, false],
    ] as const) {
      expect((await t.call('GET', `/api/documents/${id}/comments`, { as: user })).status).toBe(200);
      expect((await t.call('GET', `/api/documents/${id}/comments/unresolved`, { as: user })).status).toBe(200);
      const created = await t.call('POST', `/api/documents/${id}/comments`, { as: user, body: { body: 'Hi' } });
      const replied = await t.call('POST', `/api/documents/${id}/comments`, { as: user, body: { body: 'Re', parent_id: root.id } });
      const resolved = await t.call('POST', `/api/comments/${root.id}/resolve`, { as: user });
      if (writes) {
        expect(created.status).toBe(201);
        expect(replied.status).toBe(201);
        expect(resolved.status).toBe(200);
        expect((await t.call('POST', `/api/comments/${root.id}/reopen`, { as: user })).status).toBe(200);
      } else {
        expectProblem(created, 403, 'forbidden');
        expectProblem(replied, 403, 'forbidden');
        expectProblem(resolved, 403, 'forbidden');
        expectProblem(await t.call('POST', `/api/comments/${root.id}/reopen`, { as: user }), 403, 'forbidden');
      }
    }
    const other = await t.newTenant('comments-other');
    for (const stranger of [outsider, other.admin]) {
      expectProblem(await t.call('GET', `/api/documents/${id}/comments`, { as: stranger }), 404, 'not_found');
      expectProblem(await t.call('POST', `/api/documents/${id}/comments`, { as: stranger, body: { body: 'x' } }), 404, 'not_found');
      expectProblem(await t.call('POST', `/api/comments/${root.id}/resolve`, { as: stranger }), 404, 'not_found');
      expectProblem(await t.call('PATCH', `/api/comments/${root.id}`, { as: stranger, body: { body: 'x' } }), 404, 'not_found');
      expectProblem(await t.call('DELETE', `/api/comments/${root.id}`, { as: stranger }), 404, 'not_found');
    }
    expectProblem(await t.call('GET', `/api/documents/${id}/comments`), 401, 'unauthorized');
    expectProblem(await t.call('POST', `/api/comments/${root.id}/resolve`), 401, 'unauthorized');
    expectProblem(await t.call('GET', `/api/documents/${MISSING_ID}/comments`, { as: owner }), 404, 'not_found');
    expectProblem(await t.call('PATCH', `/api/comments/${MISSING_ID}`, { as: owner, body: { body: 'x' } }), 404, 'not_found');
    // Trashed: the comments go with the document for everyone but its owners' trash.
    expect((await t.call('DELETE', `/api/documents/${id}`, { as: owner })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/documents/${id}/comments`, { as: commenter }), 404, 'not_found');
  });
});
