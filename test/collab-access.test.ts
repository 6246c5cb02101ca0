// The live hub's access re-check (collab/hub/access.ts) through the real server: access lost, users
// deleted, keys deleted, roles changed and passwords changed reach open connections at once.
import { count, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentCollabAccess } from '../src/documents/collab-access';
import { documentUpdates } from '../db/schema';
import { newGroup, sharedDocument, storedUpdateCount } from './helpers/documents';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { insertCourse, insertEnrollment } from './helpers/courses';
import {
  editorsOf,
  eventually,
  insertUpdate,
  rawClient,
  startCollabServer,
  synced,
  syncUpdateMessage,
  type CollabServer,
} from './helpers/collab';

let t: TestApp;
let server: CollabServer;
let owner: TestUser;
let editor: TestUser;
let viewer: TestUser;
const editors = editorsOf(() => server.port);
const editorFor = (documentId: string, user: { token: string }) => editors.open(documentId, user);

const newDocument = (content = ''): Promise<string> =>
  sharedDocument(t, owner, [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ], content);

const storedCount = (documentId: string) => storedUpdateCount(t, documentId);

const contentOf = async (documentId: string) =>
  (await t.call('GET', `/api/documents/${documentId}?include=content`, { as: owner })).body.content as string;

beforeAll(async () => {
  t = await makeTestApp();
  server = await startCollabServer(t, { pingIntervalMs: 60_000 });
  owner = await t.newUser();
  editor = await t.newUser();
  viewer = await t.newUser();
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await server?.close();
  t?.close();
});

describe('access re-check of open connections', () => {
  it('disconnects a user within seconds when their access is removed or they are deleted', async () => {
    const id = await newDocument();
    const member = await t.newUser();
    await t.call('POST', `/api/documents/${id}/collaborators`, {
      as: owner,
      body: { principal_type: 'user', principal_id: member.user.id, role: 'editor' },
    });
    const c = rawClient(server.port, `/collab/${id}?token=${member.token}`);
    await c.opened;
    const removed = await t.call('DELETE', `/api/documents/${id}/collaborators/user/${member.user.id}`, { as: owner });
    expect(removed.status).toBe(204);
    expect((await c.closed).code).toBe(4403);

    const doomed = await t.newUser();
    await t.call('POST', `/api/documents/${id}/collaborators`, {
      as: owner,
      body: { principal_type: 'user', principal_id: doomed.user.id, role: 'editor' },
    });
    const d = rawClient(server.port, `/collab/${id}?token=${doomed.token}`);
    await d.opened;
    expect((await t.call('DELETE', `/api/users/${doomed.user.id}`, { as: t.admin })).status).toBe(204);
    expect((await d.closed).code).toBe(4401);
  });

  it('disconnects at once when the group that gave access loses the user, or the API key they connected with is deleted', async () => {
    const id = await newDocument();
    const member = await t.newUser();
    const group = await t.call('POST', '/api/groups', { as: t.admin, body: { name: `Live editors ${member.user.id}` } });
    expect(group.status).toBe(201);
    expect((await t.call('PUT', `/api/groups/${group.body.id}/members/${member.user.id}`, { as: t.admin })).status).toBe(204);
    const shared = await t.call('POST', `/api/documents/${id}/collaborators`, {
      as: owner,
      body: { principal_type: 'group', principal_id: group.body.id, role: 'editor' },
    });
    expect(shared.status).toBeLessThan(300);
    const viaGroup = rawClient(server.port, `/collab/${id}?token=${member.token}`);
    await viaGroup.opened;
    expect((await t.call('DELETE', `/api/groups/${group.body.id}/members/${member.user.id}`, { as: t.admin })).status).toBe(204);
    expect((await viaGroup.closed).code).toBe(4403);

    const key = await t.call('POST', '/api/api-keys', { as: editor, body: { name: 'live client' } });
    expect(key.status).toBe(201);
    const viaKey = rawClient(server.port, `/collab/${id}?token=${key.body.key}`);
    await viaKey.opened;
    // The same user's access token connection is not touched by the key's deletion.
    const viaToken = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await viaToken.opened;
    expect((await t.call('DELETE', `/api/api-keys/${key.body.id}`, { as: editor })).status).toBe(204);
    expect((await viaKey.closed).code).toBe(4401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(viaToken.ws.readyState).toBe(viaToken.ws.OPEN);
    viaToken.ws.close();
  });

  it("re-decides access once per user and document, however many of that user's connections are open", async () => {
    const access = vi.fn(documentCollabAccess(t.deps.db));
    const second = await startCollabServer(t, { access, pingIntervalMs: 60_000 });
    try {
      const id = await newDocument();
      const member = await t.newUser();
      const grant = (role: string) =>
        t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'user', principal_id: member.user.id, role } });
      await grant('editor');
      const tabs = [0, 1, 2].map(() => rawClient(second.port, `/collab/${id}?token=${member.token}`));
      const watcher = rawClient(second.port, `/collab/${id}?token=${viewer.token}`);
      await Promise.all([...tabs, watcher].map((c) => c.opened));
      await eventually(() => second.hub.connectionCount === 4, 2_000, 'four connections');

      access.mockClear();
      second.hub.recheckAll();
      expect(access).toHaveBeenCalledTimes(2);
      expect(new Set(access.mock.calls.map(([actor]) => actor.userId))).toEqual(new Set([member.user.id, viewer.user.id]));

      // The one decision still reaches every connection of that user.
      expect((await t.call('DELETE', `/api/documents/${id}/collaborators/user/${member.user.id}`, { as: owner })).status).toBe(204);
      for (const tab of tabs) expect((await tab.closed).code).toBe(4403);
      await eventually(() => second.hub.connectionCount === 1, 2_000, 'only the viewer left');
      watcher.ws.close();
    } finally {
      await second.close();
    }
  });

  it('closes live connections with 4404 when the document is moved to the trash', async () => {
    const id = await newDocument('soon gone');
    const c = rawClient(server.port, `/collab/${id}?token=${editor.token}`);
    await c.opened;
    expect((await t.call('DELETE', `/api/documents/${id}`, { as: owner })).status).toBe(204);
    expect((await c.closed).code).toBe(4404);
  });

  it('turns an editor demoted to viewer read-only without reconnecting', async () => {
    const id = await newDocument('stable');
    const member = await t.newUser();
    const share = (role: string) =>
      t.call('POST', `/api/documents/${id}/collaborators`, {
        as: owner,
        body: { principal_type: 'user', principal_id: member.user.id, role },
      });
    await share('editor');
    const c = rawClient(server.port, `/collab/${id}?token=${member.token}`);
    await c.opened;
    await share('viewer');
    await eventually(() => server.hub.connectionCount > 0, 1_000, 'connected');
    server.hub.recheckAll();
    const before = storedCount(id);
    c.ws.send(syncUpdateMessage(insertUpdate('after demotion')));
    await eventually(() => c.messages.some((m) => m[0] === 2), 5_000, 'permission denied');
    expect(storedCount(id)).toBe(before);
    c.ws.close();
  });

  it('a viewer made editor can edit at once, and what they typed while refused is stored then', async () => {
    const id = await newDocument('hello');
    const member = await t.newUser();
    const share = (role: string) =>
      t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'user', principal_id: member.user.id, role } });
    await share('viewer');
    const watcher = editorFor(id, owner);
    const promoted = editorFor(id, member);
    await Promise.all([synced(watcher), synced(promoted)]);

    // Typed as a viewer: refused, kept only in the client's own copy.
    promoted.text.insert(promoted.text.length, ' [while viewer]');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await contentOf(id)).toBe('hello');

    // No 30 s re-check to wait for: the grant itself makes the connection an editor, and the client
    // is asked for what the document lacks, so its earlier text arrives with the next.
    expect((await share('editor')).status).toBe(200);
    promoted.text.insert(promoted.text.length, ' [as editor]');
    const expected = 'hello [while viewer] [as editor]';
    await eventually(async () => (await contentOf(id)) === expected, 5_000, 'stored');
    await eventually(() => watcher.text.toString() === expected, 5_000, 'the other editor has it');
    watcher.provider.destroy();
    promoted.provider.destroy();
  });

  it('joining a group that edits the document makes a connected viewer an editor at once', async () => {
    const id = await newDocument('base');
    const member = await t.newUser();
    await t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'user', principal_id: member.user.id, role: 'viewer' } });
    const group = await newGroup(t, `editors-${crypto.randomUUID().slice(0, 8)}`, []);
    await t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'group', principal_id: group, role: 'editor' } });
    const e = editorFor(id, member);
    await synced(e);
    expect((await t.call('PUT', `/api/groups/${group}/members/${member.user.id}`, { as: t.admin })).status).toBe(204);
    e.text.insert(e.text.length, ' +group');
    await eventually(async () => (await contentOf(id)) === 'base +group', 5_000, 'stored');
    e.provider.destroy();
  });

  it('a password change ends the connections opened with access tokens; one opened with an API key goes on', async () => {
    const id = await newDocument();
    const member = await t.newUser({ password: 'collab-before-1' });
    await t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'user', principal_id: member.user.id, role: 'editor' } });
    const session = await t.signIn(member.user.email, 'collab-before-1');
    const { key } = await t.newApiKey(member);
    const byToken = rawClient(server.port, `/collab/${id}?token=${session.access_token}`);
    const byKey = rawClient(server.port, `/collab/${id}?token=${key}`);
    await Promise.all([byToken.opened, byKey.opened]);
    t.clock.advance(2_000);

    const changed = await t.call('PATCH', `/api/users/${member.user.id}`, {
      as: key,
      body: { password: 'collab-after-1', current_password: 'collab-before-1' },
    });
    expect(changed.status).toBe(200);
    expect((await byToken.closed).code).toBe(4401);
    byKey.ws.send(syncUpdateMessage(insertUpdate('key still edits')));
    await eventually(async () => (await contentOf(id)).includes('key still edits'), 5_000, 'the key connection edits on');
    byKey.ws.close();
  });

  it('a password change closes a connection admitted earlier in the same second; one admitted after it stays', async () => {
    const id = await newDocument();
    const member = await t.newUser({ password: 'socket-second-1' });
    await t.call('POST', `/api/documents/${id}/collaborators`, { as: owner, body: { principal_type: 'user', principal_id: member.user.id, role: 'editor' } });
    const second = Math.ceil(t.clock.now().getTime() / 1000) * 1000 + 2_000;
    t.clock.set(new Date(second + 100));
    const session = await t.signIn(member.user.email, 'socket-second-1');
    const earlier = rawClient(server.port, `/collab/${id}?token=${session.access_token}`);
    await earlier.opened;

    t.clock.set(new Date(second + 600));
    const changed = await t.call('PATCH', `/api/users/${member.user.id}`, { as: t.admin, body: { password: 'socket-second-2' } });
    expect(changed.status).toBe(200);
    expect((await earlier.closed).code).toBe(4401);

    const fresh = await t.signIn(member.user.email, 'socket-second-2');
    const later = rawClient(server.port, `/collab/${id}?token=${fresh.access_token}`);
    await later.opened;
    await eventually(() => server.hub.connectionCount === 1, 2_000, 'the later connection admitted');
    // The 30 s re-check, passed on the same second: the later connection stays and edits.
    t.clock.advance(30_000);
    server.hub.recheckAll();
    later.ws.send(syncUpdateMessage(insertUpdate('after the change')));
    await eventually(async () => (await contentOf(id)).includes('after the change'), 5_000, 'the later connection edits');
    expect(later.ws.readyState).toBe(later.ws.OPEN);
    later.ws.close();
  });
});

describe("an API key's scopes and course_ids on the live hub", () => {
  /** A key of `as` with these scopes (and courses); its secret is the token the client connects with. */
  const keyOf = async (as: TestUser, body: { scopes?: string[]; course_ids?: string[] }) => {
    const res = await t.call('POST', '/api/api-keys', { as, body: { name: 'live integration', ...body } });
    expect(res.status, res.text).toBe(201);
    return { token: res.body.key as string };
  };

  it('needs documents:read to connect: a key without it is refused with 4403, whatever its holder may do', async () => {
    const id = await newDocument('secret');
    const gradesOnly = await keyOf(editor, { scopes: ['grades:read', 'courses:write'] });
    const refused = rawClient(server.port, `/collab/${id}?token=${gradesOnly.token}`);
    expect((await refused.closed).code).toBe(4403);
    // The same user, with a key that holds the scope, is admitted.
    const reader = await keyOf(editor, { scopes: ['documents:read'] });
    const admitted = rawClient(server.port, `/collab/${id}?token=${reader.token}`);
    await admitted.opened;
    admitted.ws.close();
  });

  it('a read-only key is a viewer: a stock client syncs the text, and its updates are refused and never stored', async () => {
    const id = await newDocument('read only');
    const readOnly = await keyOf(editor, { scopes: ['documents:read'] });
    const client = editorFor(id, readOnly);
    await synced(client);
    expect(client.text.toString()).toBe('read only');
    const before = storedCount(id);
    client.text.insert(client.text.length, ' [typed with a read key]');
    const raw = rawClient(server.port, `/collab/${id}?token=${readOnly.token}`);
    await raw.opened;
    const seen = raw.messages.length;
    raw.ws.send(syncUpdateMessage(insertUpdate('raw edit')));
    // Refused with the permission-denied auth message (type 2); the connection stays open.
    await eventually(() => raw.messages.slice(seen).some((m) => m[0] === 2), 5_000, 'permission denied');
    expect(raw.ws.readyState).toBe(raw.ws.OPEN);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(storedCount(id)).toBe(before);
    expect(await contentOf(id)).toBe('read only');
    raw.ws.close();

    // documents:write (which holds read) edits, as its holder's role allows.
    const writer = editorFor(id, await keyOf(editor, { scopes: ['documents:write'] }));
    await synced(writer);
    writer.text.insert(writer.text.length, ' [written]');
    await eventually(async () => (await contentOf(id)) === 'read only [written]', 5_000, 'the write key edits');
    // A write scope never exceeds the holder's role: a viewer's write key stays a viewer.
    const viewerKey = await keyOf(viewer, { scopes: ['documents:write'] });
    const asViewer = rawClient(server.port, `/collab/${id}?token=${viewerKey.token}`);
    await asViewer.opened;
    const mark = asViewer.messages.length;
    asViewer.ws.send(syncUpdateMessage(insertUpdate('viewer edit')));
    await eventually(() => asViewer.messages.slice(mark).some((m) => m[0] === 2), 5_000, 'permission denied');
    expect(await contentOf(id)).toBe('read only [written]');
    asViewer.ws.close();
  });

  it("course_ids: a document filed in another course is refused (4403); one of the key's course, or of no course, is open", async () => {
    const [biology, geology] = ['Biology', 'Geology'].map((title) => {
      const course = insertCourse(t.db, { tenantId: t.defaultTenantId, createdBy: owner.user.id, title });
      for (const user of [owner, editor]) insertEnrollment(t.db, { tenantId: t.defaultTenantId, courseId: course.id, userId: user.user.id, role: user === owner ? 'instructor' : 'student' });
      return course;
    });
    const inGeology = await newDocument('geology notes');
    const linked = await t.call('POST', `/api/documents/${inGeology}/contexts`, { as: owner, body: { context_type: 'course', context_id: geology!.id } });
    expect(linked.status, linked.text).toBe(201);
    const personal = await newDocument('personal notes');

    const biologyKey = await keyOf(editor, { scopes: ['documents:write'], course_ids: [biology!.id] });
    const refused = rawClient(server.port, `/collab/${inGeology}?token=${biologyKey.token}`);
    expect((await refused.closed).code).toBe(4403);
    // As REST answers: the document does not exist for this key.
    expect((await t.call('GET', `/api/documents/${inGeology}`, { as: biologyKey.token })).status).toBe(404);

    const personalClient = editorFor(personal, biologyKey);
    await synced(personalClient);
    expect(personalClient.text.toString()).toBe('personal notes');

    const geologyKey = await keyOf(editor, { scopes: ['documents:write'], course_ids: [geology!.id] });
    const geologyClient = editorFor(inGeology, geologyKey);
    await synced(geologyClient);
    geologyClient.text.insert(geologyClient.text.length, ' [edited]');
    await eventually(async () => (await contentOf(inGeology)) === 'geology notes [edited]', 5_000, 'the course key edits');
  });
});
