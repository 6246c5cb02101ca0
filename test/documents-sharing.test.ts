// Sharing documents with users and groups: effective roles, what each role may and may not do,
// the last owner rule, principal checks, revocation, and the access resolver the WebSocket hub uses.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { canComment, canEdit, canManage, canRead, isDowngrade, strongestRole } from '../src/documents/policy';
import { documentAccess } from '../src/documents/access';
import { newId } from '../src/lib/ids';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { createDoc, newGroup, share, type DocumentJson } from './helpers/documents';

let t: TestApp;
let other: { tenantId: string; admin: TestUser };

beforeAll(async () => {
  t = await makeTestApp();
  other = await t.newTenant('sharing-other');
});
afterAll(() => t?.close());

describe('policy', () => {
  it('orders roles and grants rights by role', () => {
    expect(strongestRole([])).toBeNull();
    expect(strongestRole(['viewer', 'editor', 'commenter'])).toBe('editor');
    expect(strongestRole(['viewer', 'owner'])).toBe('owner');
    expect(isDowngrade('owner', 'editor')).toBe(true);
    expect(isDowngrade('viewer', 'commenter')).toBe(false);
    const table = {
      viewer: [true, false, false, false],
      commenter: [true, true, false, false],
      editor: [true, true, true, false],
      owner: [true, true, true, true],
    } as const;
    for (const [role, rights] of Object.entries(table)) {
      const r = role as keyof typeof table;
      expect([canRead(r), canComment(r), canEdit(r), canManage(r)], role).toEqual(rights);
    }
    expect([canRead(null), canComment(null), canEdit(null), canManage(null)]).toEqual([false, false, false, false]);
  });
});

describe('collaborators', () => {
  it('lists the owner on creation and upserts grants: 201 with Location when new, 200 when changed', async () => {
    const owner = await t.newUser({ name: 'Olga Owner' });
    const friend = await t.newUser({ name: 'Fred Friend' });
    const doc = await createDoc(t, owner);

    const initial = await t.call('GET', `/api/documents/${doc.id}/collaborators`, { as: owner });
    expect(initial.status).toBe(200);
    expect(initial.body.data).toEqual([
      expect.objectContaining({ principal_type: 'user', principal_id: owner.user.id, name: 'Olga Owner', email: owner.user.email, role: 'owner' }),
    ]);

    const added = await t.call('POST', `/api/documents/${doc.id}/collaborators`, {
      as: owner,
      body: { principal_type: 'user', principal_id: friend.user.id, role: 'viewer' },
    });
    expect(added.status).toBe(201);
    expect(added.headers.get('location')).toBe(`/api/documents/${doc.id}/collaborators/user/${friend.user.id}`);
    expect(added.body).toMatchObject({ principal_type: 'user', principal_id: friend.user.id, role: 'viewer', granted_by: owner.user.id });
    // The Location answers with the grant, to anyone who can read the document (the viewer too).
    for (const as of [owner, friend]) {
      const read = await t.call('GET', added.headers.get('location')!, { as });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(added.body);
    }
    const stranger = await t.newUser();
    expect((await t.call('GET', added.headers.get('location')!, { as: stranger })).status).toBe(404);
    expect((await t.call('GET', `/api/documents/${doc.id}/collaborators/user/${stranger.user.id}`, { as: owner })).status).toBe(404);
    expect((await t.call('GET', `/api/documents/${doc.id}/collaborators/group/${friend.user.id}`, { as: owner })).status).toBe(404);

    const changed = await t.call('POST', `/api/documents/${doc.id}/collaborators`, {
      as: owner,
      body: { principal_type: 'user', principal_id: friend.user.id, role: 'editor' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe('editor');
    const same = await t.call('POST', `/api/documents/${doc.id}/collaborators`, {
      as: owner,
      body: { principal_type: 'user', principal_id: friend.user.id, role: 'editor' },
    });
    expect(same.status).toBe(200);

    const list = await t.call('GET', `/api/documents/${doc.id}/collaborators`, { as: friend });
    expect(list.body.data.map((c: { principal_id: string; role: string }) => [c.principal_id, c.role])).toEqual([
      [owner.user.id, 'owner'],
      [friend.user.id, 'editor'],
    ]);
    const page = await t.call('GET', `/api/documents/${doc.id}/collaborators?per_page=1&page=2`, { as: friend });
    expect(page.body.data.map((c: { principal_id: string }) => c.principal_id)).toEqual([friend.user.id]);
    expect(page.body.pagination.total).toBe(2);
  });

  it('answers 404 for an unknown document and 400 for a malformed id', async () => {
    const user = await t.newUser();
    expect((await t.call('GET', `/api/documents/${newId()}/collaborators`, { as: user })).status).toBe(404);
    expect((await t.call('GET', '/api/documents/123/collaborators', { as: user })).status).toBe(400);
    expect((await t.call('GET', `/api/documents/${newId()}/collaborators`)).status).toBe(401);
  });

  it('refuses principals outside the tenant with 422 and malformed grants with 400', async () => {
    const owner = await t.newUser();
    const gone = await t.newUser();
    await t.call('DELETE', `/api/users/${gone.user.id}`, { as: t.admin });
    const foreignGroup = await t.call('POST', '/api/groups', { as: other.admin, body: { name: 'Foreign' } });
    const doc = await createDoc(t, owner);
    const unprocessable = [
      { principal_type: 'user', principal_id: newId(), role: 'viewer' },
      { principal_type: 'user', principal_id: other.admin.user.id, role: 'viewer' },
      { principal_type: 'user', principal_id: gone.user.id, role: 'viewer' },
      { principal_type: 'group', principal_id: newId(), role: 'viewer' },
      { principal_type: 'group', principal_id: foreignGroup.body.id, role: 'viewer' },
      { principal_type: 'group', principal_id: owner.user.id, role: 'viewer' },
    ];
    for (const body of unprocessable) {
      const res = await t.call('POST', `/api/documents/${doc.id}/collaborators`, { as: owner, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].path).toBe('principal_id');
    }
    const malformed = [
      { principal_type: 'user', principal_id: 'nope', role: 'viewer' },
      { principal_type: 'robot', principal_id: newId(), role: 'viewer' },
      { principal_type: 'user', principal_id: newId(), role: 'admin' },
      { principal_type: 'user', principal_id: newId() },
      { principal_type: 'user', principal_id: newId(), role: 'viewer', extra: true },
    ];
    for (const body of malformed) {
      expect((await t.call('POST', `/api/documents/${doc.id}/collaborators`, { as: owner, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.call('DELETE', `/api/documents/${doc.id}/collaborators/robot/${owner.user.id}`, { as: owner })).status).toBe(400);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/collaborators/user/nope`, { as: owner })).status).toBe(400);
    expect((await t.call('DELETE', `/api/documents/${doc.id}/collaborators/user/${newId()}`, { as: owner })).status).toBe(404);
  });

  it('keeps at least one owner who is a person (409), group owners not counting', async () => {
    const first = await t.newUser();
    const second = await t.newUser();
    const member = await t.newUser();
    const groupId = await newGroup(t, `Owners ${newId()}`, [member]);
    const doc = await createDoc(t, first);
    const collaborators = `/api/documents/${doc.id}/collaborators`;

    const downgrade = await t.call('POST', collaborators, { as: first, body: { principal_type: 'user', principal_id: first.user.id, role: 'editor' } });
    expect(downgrade.status).toBe(409);
    expect(downgrade.body.code).toBe('conflict');
    expect((await t.call('DELETE', `${collaborators}/user/${first.user.id}`, { as: first })).status).toBe(409);

    await share(t, first, doc.id, { groupId }, 'owner');
    expect((await t.call('DELETE', `${collaborators}/user/${first.user.id}`, { as: first })).status).toBe(409);
    // The group's members are owners all the same.
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).body.role).toBe('owner');

    await share(t, first, doc.id, { user: second }, 'owner');
    expect((await t.call('DELETE', `${collaborators}/user/${first.user.id}`, { as: first })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: first })).status).toBe(404);
    expect((await t.call('DELETE', `${collaborators}/group/${groupId}`, { as: second })).status).toBe(204);
    expect((await t.call('DELETE', `${collaborators}/user/${second.user.id}`, { as: second })).status).toBe(409);
  });

  it('tells the authenticator when access is taken away, so live connections re-check', async () => {
    const owner = await t.newUser();
    const friend = await t.newUser();
    const doc = await createDoc(t, owner);
    const revoke = vi.spyOn(t.deps.auth, 'narrowed');
    try {
      await share(t, owner, doc.id, { user: friend }, 'editor');
      expect(revoke).not.toHaveBeenCalled();
      await share(t, owner, doc.id, { user: friend }, 'owner');
      expect(revoke).not.toHaveBeenCalled();
      await share(t, owner, doc.id, { user: friend }, 'viewer');
      expect(revoke).toHaveBeenCalledTimes(1);
      await t.call('DELETE', `/api/documents/${doc.id}/collaborators/user/${friend.user.id}`, { as: owner });
      expect(revoke).toHaveBeenCalledTimes(2);
      await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner });
      expect(revoke).toHaveBeenCalledTimes(3);
    } finally {
      revoke.mockRestore();
    }
  });
});

describe('effective role', () => {
  it('is the strongest of the direct grant and the grants of the caller’s groups', async () => {
    const owner = await t.newUser();
    const member = await t.newUser();
    const outsider = await t.newUser();
    const readers = await newGroup(t, `Readers ${newId()}`, [member]);
    const writers = await newGroup(t, `Writers ${newId()}`, [member]);
    const doc = await createDoc(t, owner, { title: 'Group shared', content: 'wombat facts' });

    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).status).toBe(404);
    await share(t, owner, doc.id, { groupId: readers }, 'viewer');
    const asViewer = await t.call('GET', `/api/documents/${doc.id}`, { as: member });
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.role).toBe('viewer');
    expect((await t.call('GET', '/api/documents', { as: member })).body.data.map((d: DocumentJson) => d.id)).toContain(doc.id);
    expect((await t.call('GET', '/api/documents/suggestions?q=wom', { as: member })).body.data).toHaveLength(1);
    expect((await t.call('POST', `/api/documents/${doc.id}/versions`, { as: member, body: { name: 'v' } })).status).toBe(403);

    await share(t, owner, doc.id, { groupId: writers }, 'editor');
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).body.role).toBe('editor');
    await share(t, owner, doc.id, { user: member }, 'commenter');
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).body.role).toBe('editor');
    expect((await t.call('POST', `/api/documents/${doc.id}/versions`, { as: member, body: { name: 'v' } })).status).toBe(201);

    const groups = await t.call('GET', `/api/documents/${doc.id}/collaborators`, { as: member });
    expect(groups.body.data.filter((c: { principal_type: string }) => c.principal_type === 'group').map((c: { name: string }) => c.name).sort()).toEqual(
      [expect.stringMatching(/^Readers/), expect.stringMatching(/^Writers/)],
    );

    // Leaving the writers group leaves the strongest remaining grant.
    expect((await t.call('DELETE', `/api/groups/${writers}/members/${member.user.id}`, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).body.role).toBe('commenter');
    await t.call('DELETE', `/api/documents/${doc.id}/collaborators/user/${member.user.id}`, { as: owner });
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).body.role).toBe('viewer');
    // Deleting a group takes its grants with it.
    expect((await t.call('DELETE', `/api/groups/${readers}`, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: member })).status).toBe(404);
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: outsider })).status).toBe(404);
  });

  it('gives tenant admins no implicit access', async () => {
    const owner = await t.newUser();
    const doc = await createDoc(t, owner, { content: 'private diary' });
    expect((await t.call('GET', `/api/documents/${doc.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/documents/${doc.id}/collaborators`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', '/api/documents', { as: t.admin })).body.data.map((d: DocumentJson) => d.id)).not.toContain(doc.id);
    expect((await t.call('GET', '/api/documents/suggestions?q=diary', { as: t.admin })).body.data).toEqual([]);
  });
});

describe('what each role may do', () => {
  type Role = 'viewer' | 'commenter' | 'editor' | 'owner';
  const roles: Role[] = ['viewer', 'commenter', 'editor', 'owner'];

  for (const role of roles) {
    it(`${role}: reads everything, changes what the role allows`, async () => {
      const owner = await t.newUser();
      const user = await t.newUser();
      const someone = await t.newUser();
      const doc = await createDoc(t, owner, { content: 'body' });
      await share(t, owner, doc.id, { user }, role);
      const version = (await t.call('POST', `/api/documents/${doc.id}/versions`, { as: owner, body: { name: 'v1' } })).body.id;
      const id = doc.id;
      const edit = role === 'editor' || role === 'owner';
      const manage = role === 'owner';

      const reads: [string, string][] = [
        ['GET', `/api/documents/${id}?include=content`],
        ['GET', `/api/documents/${id}/changes`],
        ['GET', `/api/documents/${id}/collaborators`],
        ['GET', `/api/documents/${id}/versions`],
        ['GET', `/api/documents/${id}/versions/${version}`],
        ['GET', `/api/documents/${id}/diff?from=${version}&to=current`],
        ['GET', `/api/documents/${id}/contexts`],
        ['GET', `/api/documents/${id}/favorite`],
      ];
      for (const [method, path] of reads) expect((await t.call(method, path, { as: user })).status, path).toBe(200);
      expect((await t.call('POST', `/api/documents/${id}/favorite`, { as: user })).status).toBe(200);
      expect((await t.call('POST', `/api/documents/${id}/copy`, { as: user })).status).toBe(201);

      const expectStatus = async (allowed: boolean, ok: number, method: string, path: string, body?: unknown) => {
        const res = await t.call(method, path, { as: user, body });
        expect(res.status, `${role} ${method} ${path}`).toBe(allowed ? ok : 403);
        if (!allowed) expect(res.body.code).toBe('forbidden');
      };
      await expectStatus(edit, 201, 'POST', `/api/documents/${id}/versions`, { name: 'by user' });
      await expectStatus(edit, 200, 'POST', `/api/documents/${id}/versions/${version}/revert`);
      await expectStatus(manage, 200, 'PATCH', `/api/documents/${id}`, { title: 'Renamed' });
      await expectStatus(manage, 201, 'POST', `/api/documents/${id}/collaborators`, {
        principal_type: 'user',
        principal_id: someone.user.id,
        role: 'viewer',
      });
      await expectStatus(manage, 204, 'DELETE', `/api/documents/${id}/collaborators/user/${owner.user.id}`);
      await expectStatus(manage, 204, 'DELETE', `/api/documents/${id}`);
      if (manage) {
        await expectStatus(true, 200, 'POST', `/api/documents/${id}/restore`);
      } else {
        await t.call('DELETE', `/api/documents/${id}`, { as: owner });
        await expectStatus(false, 200, 'POST', `/api/documents/${id}/restore`);
      }
    });
  }
});

describe('documentAccess (the resolver the WebSocket hub uses)', () => {
  it('is null for unknown, foreign and trashed documents, and has a null role without a grant', async () => {
    const owner = await t.newUser();
    const stranger = await t.newUser();
    const doc = await createDoc(t, owner);
    const actor = (u: TestUser) => ({ userId: u.user.id, tenantId: u.user.tenantId });

    expect(documentAccess(t.db, actor(owner), doc.id)).toMatchObject({ document: { id: doc.id }, role: 'owner' });
    expect(documentAccess(t.db, actor(stranger), doc.id)).toMatchObject({ document: { id: doc.id }, role: null });
    expect(documentAccess(t.db, actor(other.admin), doc.id)).toBeNull();
    expect(documentAccess(t.db, actor(owner), newId())).toBeNull();
    expect(documentAccess(t.db, actor(owner), 'not-a-uuid')).toBeNull();
    await t.call('DELETE', `/api/documents/${doc.id}`, { as: owner });
    expect(documentAccess(t.db, actor(owner), doc.id)).toBeNull();
    expect(documentAccess(t.db, actor(owner), doc.id, { includeTrashed: true })?.role).toBe('owner');
  });
});
