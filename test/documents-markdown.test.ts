// The Markdown kept beside each compacted state and each named version (issue 21): it always equals
// the Yjs text of the state it sits beside, through live edits, compaction while open, unload,
// PUT content, versions, revert and a restart; reads of a document no one holds use it and never
// load Yjs; rows stored before it was kept are filled at first use; a large document is written,
// versioned and compacted by worker threads, and loaded for live editors a slice at a time, never
// in one go on the event loop; nothing any client saw is lost.
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD, DocumentStore, textOfState } from '../collab/store';
import { documentSearch, documentStates, documentUpdates, documentVersions } from '../db/schema';
import { WorkersBusyError } from '../src/lib/worker-pool';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { editorsOf, eventually, rawClient, startCollabServer, synced, type CollabServer } from './helpers/collab';
import { contentOf, createDoc, liveAppend, share } from './helpers/documents';
import { wholeStateRow } from './helpers/store';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let writer: TestUser;
const editors = editorsOf(() => server.port);

beforeAll(async () => {
  t = await makeTestApp({ config: { documentBodyLimitBytes: 8 * 1024 * 1024 } });
  server = await startCollabServer(t, { pingIntervalMs: 60_000 });
  owner = await t.newUser();
  writer = await t.newUser();
});
afterAll(async () => {
  await server?.close();
  t?.close();
});
afterEach(() => vi.restoreAllMocks());

const stateRow = (id: string) => wholeStateRow(t.db, id);
const versionRows = (id: string) => t.db.select().from(documentVersions).where(eq(documentVersions.documentId, id)).all();

/** Every stored text of the document (state and versions) equals the Yjs text of the state beside it; returns the state's. */
function expectConsistent(id: string, where: string): string | null {
  const row = stateRow(id);
  if (row?.markdown != null) expect(row.markdown, `${where}: state`).toBe(textOfState(row.state));
  for (const version of versionRows(id)) {
    if (version.markdown !== null) expect(version.markdown, `${where}: version ${version.name}`).toBe(textOfState(version.state));
  }
  return row?.markdown ?? null;
}

/** Counts the store's loads of a document from SQLite into Yjs. */
const countLoads = (store: DocumentStore) => vi.spyOn(store as unknown as { load: (id: string) => unknown }, 'load');
/** The body the search index holds for the document. */
const indexedBody = (id: string) => t.db.select().from(documentSearch).where(eq(documentSearch.documentId, id)).get()!.body;
/** Runs `meanwhile` once the next worker task is done, before its result is answered. */
const afterNextWorkerTask = (meanwhile: () => void) => {
  const run = t.deps.workers.run.bind(t.deps.workers);
  vi.spyOn(t.deps.workers, 'run').mockImplementationOnce((async (...args: Parameters<typeof run>) => {
    const result = await run(...args);
    meanwhile();
    return result;
  }) as typeof run);
};

describe('the Markdown beside the state', () => {
  it('equals the Yjs text through every kind of write, and cold reads use it without loading Yjs', async () => {
    const store = t.deps.documents;
    const { id } = await createDoc(t, owner, { title: 'Consistent', content: '# Title\n\nFirst paragraph.' });
    await share(t, owner, id, { user: writer }, 'editor');
    expect(expectConsistent(id, 'created')).toBe('# Title\n\nFirst paragraph.');

    // Live edits by two stock editors; the last to leave compacts.
    const a = editors.open(id, owner);
    const b = editors.open(id, writer);
    await Promise.all([synced(a), synced(b)]);
    a.text.insert(a.text.length, '\n\nFrom A.');
    b.text.insert(0, 'B> ');
    await eventually(() => a.text.toString() === b.text.toString() && a.text.toString().includes('From A.') && a.text.toString().startsWith('B> '), 5_000, 'converged');
    const typed = a.text.toString();
    editors.close(a);
    editors.close(b);
    await eventually(() => !store.isLive(id), 5_000, 'unloaded');
    expect(expectConsistent(id, 'after live editing')).toBe(typed);

    // Cold reads: content, copy, version, diff. None loads Yjs.
    const loads = countLoads(store);
    expect(await contentOf(t, owner, id)).toBe(typed);
    const copy = await t.call('POST', `/api/documents/${id}/copy`, { as: owner, body: {} });
    expect(copy.status).toBe(201);
    const v1 = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'v1' } });
    expect(v1.status).toBe(201);
    const diff = await t.call('GET', `/api/documents/${id}/diff?from=${v1.body.id}&to=current`, { as: owner });
    expect(diff.status).toBe(200);
    expect(diff.body.stats).toEqual({ insertions: 0, deletions: 0 });
    expect(await contentOf(t, owner, copy.body.id)).toBe(typed);
    expect(loads).not.toHaveBeenCalled();
    expectConsistent(id, 'after a version');
    expectConsistent(copy.body.id, 'the copy');

    // PUT content on the cold document, then reads again without a load.
    const put = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${typed}\n\nWritten over REST.` } });
    expect(put.status).toBe(200);
    expect(expectConsistent(id, 'after PUT content')).toBe(`${typed}\n\nWritten over REST.`);
    loads.mockClear();
    expect(await contentOf(t, owner, id)).toBe(`${typed}\n\nWritten over REST.`);
    expect(loads).not.toHaveBeenCalled();

    // Revert: the current state is kept as a version first, then the old text comes back.
    const revert = await t.call('POST', `/api/documents/${id}/versions/${v1.body.id}/revert`, { as: owner });
    expect(revert.status).toBe(200);
    expect(revert.body.document.content).toBe(typed);
    expect(expectConsistent(id, 'after revert')).toBe(typed);
    const before = versionRows(id).find((v) => v.id === revert.body.before_revert_version.id)!;
    expect(before.markdown).toBe(`${typed}\n\nWritten over REST.`);

    // Edits through the store while the document is held open, past the compaction threshold (500).
    store.acquire(id);
    const replica = new Y.Doc();
    Y.applyUpdate(replica, store.encodeState(id));
    const sent: Uint8Array[] = [];
    replica.on('update', (u: Uint8Array) => sent.push(u));
    for (let i = 0; i < 520; i++) {
      replica.getText(CONTENT_FIELD).insert(i % 7 === 0 ? 0 : replica.getText(CONTENT_FIELD).length, String(i % 10));
      store.applyUpdate(id, sent.pop()!, owner.user.id, null, { defer: true });
      // A turn's batch, as the hub's are.
      if (i % 10 === 9) store.flush();
    }
    store.flush();
    // Compacted while open at the 500th update: the row is behind the live text, and consistent.
    const midway = expectConsistent(id, 'compacted while open');
    expect(midway).not.toBeNull();
    expect(midway).not.toBe(replica.getText(CONTENT_FIELD).toString());
    expect(await contentOf(t, owner, id)).toBe(replica.getText(CONTENT_FIELD).toString());
    store.release(id);
    const final = replica.getText(CONTENT_FIELD).toString();
    expect(expectConsistent(id, 'after release')).toBe(final);

    // A restart: a new store reads the same text, without loading Yjs.
    const restarted = new DocumentStore({ db: t.db, clock: t.clock });
    const restartLoads = countLoads(restarted);
    expect(restarted.getText(id)).toBe(final);
    expect((await restarted.snapshot(id)).markdown).toBe(final);
    expect(textOfState((await restarted.snapshot(id)).state)).toBe(final);
    expect(restartLoads).not.toHaveBeenCalled();
    // And what it loads from the state (and the log) is that text too.
    expect(textOfState(restarted.encodeState(id))).toBe(final);
  });

  it('a state behind its log is not read as stored: the log is replayed and the state brought up to date', async () => {
    const { id } = await createDoc(t, owner, { title: 'Behind', content: 'one' });
    const created = stateRow(id)!;
    // An edit straight to the store on a cold document, as REST writes do: compacted at once.
    liveAppend(t, id, owner.user.id, ' two');
    expect(expectConsistent(id, 'after a write')).toBe('one two');
    // The row as it was before that compaction (a crash between the log write and the compaction);
    // the log row of the edit still holds its data (its clearing runs in a later turn).
    const { state, markdown, throughUpdateId } = created;
    t.db.update(documentStates).set({ state, markdown, throughUpdateId }).where(eq(documentStates.documentId, id)).run();
    const fresh = new DocumentStore({ db: t.db, clock: t.clock });
    const loads = countLoads(fresh);
    const text = fresh.getText(id);
    expect(loads).toHaveBeenCalledTimes(1);
    expect(expectConsistent(id, 'brought up to date')).toBe(text);
    expect(text).toBe('one two');
    expect(fresh.getText(id)).toBe(text);
    expect(loads).toHaveBeenCalledTimes(1);
  });

  it('rows stored before the text was kept are read as before and filled at first use', async () => {
    const store = t.deps.documents;
    const { id } = await createDoc(t, owner, { title: 'Legacy', content: 'legacy body' });
    const v = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'old' } });
    t.db.update(documentStates).set({ markdown: null }).where(eq(documentStates.documentId, id)).run();
    t.db.update(documentVersions).set({ markdown: null }).where(eq(documentVersions.id, v.body.id)).run();
    const loads = countLoads(store);
    expect(await contentOf(t, owner, id)).toBe('legacy body');
    expect(loads).toHaveBeenCalledTimes(1);
    expect(stateRow(id)!.markdown).toBe('legacy body');
    expect(await contentOf(t, owner, id)).toBe('legacy body');
    expect(loads).toHaveBeenCalledTimes(1);
    const version = await t.call('GET', `/api/documents/${id}/versions/${v.body.id}`, { as: owner });
    expect(version.body.content).toBe('legacy body');
    expect(versionRows(id)[0]!.markdown).toBe('legacy body');
    expectConsistent(id, 'filled');
  });

  it('a large document written over REST is edited by a worker, never loaded on the event loop, and stored with its text at once', async () => {
    const store = t.deps.documents;
    const body = Array.from({ length: 14_000 }, (_, i) => `Line ${i}: some text of a large document.`).join('\n');
    expect(body.length).toBeGreaterThan(512 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Large', content: body });
    const loads = countLoads(store);
    const changed = body.replace('Line 6000:', 'Line six thousand:');
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: changed } })).status).toBe(200);
    // Not in memory, and the stored state is current: what follows reads it as stored.
    expect(store.isLive(id)).toBe(false);
    expect(expectConsistent(id, 'after a PUT')).toBe(changed);
    expect(await contentOf(t, owner, id)).toBe(changed);
    const again = changed.replace('Line 7000:', 'Line seven thousand:');
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: again } })).status).toBe(200);
    expect(expectConsistent(id, 'after a second PUT')).toBe(again);
    const v = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'cold' } });
    expect(v.status).toBe(201);
    expect(loads).not.toHaveBeenCalled();

    // A stock editor joins: the hub has the document loaded a slice per turn of the event loop (no
    // load in one go). It types; a PUT while it is connected reaches it as an update, and a version
    // taken meanwhile is folded by a worker from what is stored.
    const editor = editors.open(id, owner);
    await synced(editor);
    expect(editor.text.toString()).toBe(again);
    expect(loads).not.toHaveBeenCalled();
    editor.text.insert(0, 'Edited live. ');
    await eventually(async () => (await contentOf(t, owner, id)).startsWith('Edited live. '), 5_000, 'live edit stored');
    const third = `Edited live. ${again.replace('Line 100:', 'Line one hundred:')}`;
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: third } })).status).toBe(200);
    await eventually(() => editor.text.toString() === third, 5_000, 'the editor has the PUT');
    editor.text.insert(editor.text.length, '\nThe end.');
    const final = `${third}\nThe end.`;
    await eventually(async () => (await contentOf(t, owner, id)) === final, 5_000, 'the last edit stored');
    const live = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'live' } });
    expect(live.status).toBe(201);
    expect((await t.call('GET', `/api/documents/${id}/versions/${live.body.id}`, { as: owner })).body.content).toBe(final);
    expect(expectConsistent(id, 'after a live version')).toBe(final);

    // The last holder leaves: the document stays in memory until a worker's fold of it is stored.
    editor.text.insert(0, '# ');
    await eventually(async () => (await contentOf(t, owner, id)) === `# ${final}`, 5_000, 'the heading stored');
    editors.close(editor);
    await eventually(() => !store.isLive(id), 5_000, 'unloaded');
    expect(expectConsistent(id, 'after the editor left')).toBe(`# ${final}`);
    expect(await contentOf(t, owner, id)).toBe(`# ${final}`);
    expect(loads).not.toHaveBeenCalled();
  });

  it('a write, version or revert of a large document while too much work waits for the worker threads is 503 with Retry-After and stores nothing', async () => {
    const store = t.deps.documents;
    const body = 'y'.repeat(300 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Busy', content: body });
    const saved = await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'saved' } });
    expect(saved.status).toBe(201);
    // A live change leaves the stored state behind it: a version needs a fold.
    store.acquire(id).getText(CONTENT_FIELD).insert(0, 'z');
    const stored = () => t.db.select().from(documentUpdates).where(eq(documentUpdates.documentId, id)).all().length;
    const rows = stored();
    const run = vi.spyOn(t.deps.workers, 'run').mockRejectedValue(new WorkersBusyError());
    try {
      const res = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${body}!` } });
      expectProblem(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      expectProblem(await t.call('POST', `/api/documents/${id}/versions`, { as: owner, body: { name: 'busy' } }), 503, 'service_unavailable');
      const revert = await t.call('POST', `/api/documents/${id}/versions/${saved.body.id}/revert`, { as: owner });
      expectProblem(revert, 503, 'service_unavailable');
      expect(revert.headers.get('retry-after')).toBe('5');
      expect(versionRows(id).map((v) => v.name)).toEqual(['saved']);
      // Let go while the threads are busy: it stays in memory, serving reads, and asks again later.
      store.release(id);
      await store.settled();
      expect(store.isLive(id)).toBe(true);
      expect(await contentOf(t, owner, id)).toBe(`z${body}`);
    } finally {
      run.mockRestore();
    }
    await eventually(() => !store.isLive(id), 5_000, 'folded once the threads had room, and unloaded');
    expect(stored()).toBe(rows + 1);
    expect(expectConsistent(id, 'after the busy spell')).toBe(`z${body}`);
    expect((await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${body}!` } })).status).toBe(200);
  });

  it('an editor opening a large document no one holds while too much work waits for the worker threads is closed with 1013, nothing loaded; a stock client then gets in', async () => {
    const store = t.deps.documents;
    const body = 'w'.repeat(300 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Busy open', content: body });
    const loads = countLoads(store);
    const run = vi.spyOn(t.deps.workers, 'run').mockRejectedValue(new WorkersBusyError());
    try {
      const raw = rawClient(server.port, `/collab/${id}?token=${owner.token}`);
      expect(await raw.closed).toEqual({ code: 1013, reason: 'server busy: try again later' });
      expect(loads).not.toHaveBeenCalled();
      expect(store.isLive(id)).toBe(false);
    } finally {
      run.mockRestore();
    }
    const editor = editors.open(id, owner);
    await synced(editor);
    expect(editor.text.toString()).toBe(body);
    expect(loads).not.toHaveBeenCalled();
    editors.close(editor);
    await eventually(() => !store.isLive(id), 5_000, 'unloaded');
  });

  it('a PUT of a large live document answers its body with an edit made while the worker diffed it merged in, and indexes that', async () => {
    const store = t.deps.documents;
    const body = 'v'.repeat(300 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Merged', content: body });
    const live = store.acquire(id);
    // An editor types after the worker has read the body, before its answer is stored.
    afterNextWorkerTask(() => live.getText(CONTENT_FIELD).insert(0, 'Typed live. '));
    try {
      const res = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${body}!` } });
      expect(res.status, res.text.slice(0, 200)).toBe(200);
      expect(res.body.content).toBe(`Typed live. ${body}!`);
      expect(store.getText(id)).toBe(`Typed live. ${body}!`);
      expect(indexedBody(id).startsWith('Typed live. ')).toBe(true);
    } finally {
      store.release(id);
      await store.settled();
    }
  });

  it('a PUT of a large document no one holds answers its body with a change stored while the worker diffed it merged in, and indexes that', async () => {
    const store = t.deps.documents;
    const body = 'u'.repeat(300 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Merged cold', content: body });
    // Another writer's change, made against the body as stored.
    const elsewhere = new Y.Doc();
    Y.applyUpdate(elsewhere, store.encodeState(id));
    const stateBefore = Y.encodeStateVector(elsewhere);
    elsewhere.getText(CONTENT_FIELD).insert(0, 'Written elsewhere. ');
    const change = Y.encodeStateAsUpdate(elsewhere, stateBefore);
    await store.settled();
    expect(store.isLive(id)).toBe(false);
    // Stored after the worker has read the body, before its answer is.
    afterNextWorkerTask(() => store.applyUpdate(id, change, owner.user.id));
    const res = await t.call('PUT', `/api/documents/${id}/content`, { as: owner, body: { content: `${body}!` } });
    expect(res.status, res.text.slice(0, 200)).toBe(200);
    expect(res.body.content).toBe(`Written elsewhere. ${body}!`);
    expect(store.getText(id)).toBe(`Written elsewhere. ${body}!`);
    expect(indexedBody(id).startsWith('Written elsewhere. ')).toBe(true);
    await store.settled();
  });

  it("a large body's search entry follows a live edit stored while its index write waited for its turn", async () => {
    const store = t.deps.documents;
    const body = `${'z'.repeat(100 * 1024)} ordinary words`;
    const { id } = await createDoc(t, owner, { title: 'Indexed', content: body });
    const live = store.acquire(id);
    try {
      const writing = t.deps.search.writeInTurn(id, body);
      live.getText(CONTENT_FIELD).insert(0, 'platypus ');
      store.flush();
      await writing;
      expect(indexedBody(id).startsWith('platypus ')).toBe(true);
    } finally {
      store.release(id);
      await store.settled();
    }
  });

  it('erasing a large document while its fold runs lets it go without writing to it', async () => {
    const store = t.deps.documents;
    const body = 'x'.repeat(600 * 1024);
    const { id } = await createDoc(t, owner, { title: 'Erased', content: body });
    // Held, written to directly (as an editor's update), let go.
    store.acquire(id).getText(CONTENT_FIELD).insert(0, 'y');
    store.release(id);
    // Leaving memory: a worker folds it meanwhile.
    expect(store.isLive(id)).toBe(true);
    expect((await t.call('DELETE', `/api/documents/${id}`, { as: owner })).status).toBe(204);
    expect((await t.call('DELETE', `/api/documents/${id}?permanent=true`, { as: owner })).status).toBe(204);
    expect(store.isLive(id)).toBe(false);
    await store.settled();
    expect(stateRow(id)).toBeUndefined();
  });
});
