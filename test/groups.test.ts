// Groups: every member of the tenant reads them, admins create, change and fill them; another
// tenant's groups and users do not exist for the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';

describe('/api/groups', () => {
  let t: TestApp;
  let member: TestUser;
  let other: Awaited<ReturnType<TestApp['newTenant']>>;
  beforeAll(async () => {
    t = await makeTestApp();
    member = await t.newUser();
    other = await t.newTenant('groups-other');
  });
  afterAll(() => t.close());

  const createGroup = async (name: string, description?: string) => {
    const res = await t.call('POST', '/api/groups', { as: t.admin, body: { name, ...(description ? { description } : {}) } });
    expect(res.status).toBe(201);
    return res.body as { id: string; name: string };
  };

  it('an admin creates a group: 201 with Location', async () => {
    const res = await t.call('POST', '/api/groups', { as: t.admin, body: { name: ' Teachers ', description: 'All teaching staff' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/groups/${res.body.id}`);
    expect(res.body).toMatchObject({ name: 'Teachers', description: 'All teaching staff', member_count: 0 });
    expect(res.body.created_at).toBe(t.clock.now().toISOString());
  });

  it('members list and read groups but cannot create, change or delete them', async () => {
    const group = await createGroup('Readable');
    const list = await t.call('GET', '/api/groups', { as: member });
    expect(list.status).toBe(200);
    expect(list.body.data.map((g: { id: string }) => g.id)).toContain(group.id);
    expect((await t.call('GET', `/api/groups/${group.id}`, { as: member })).status).toBe(200);

    const denied = [
      await t.call('POST', '/api/groups', { as: member, body: { name: 'Mine' } }),
      await t.call('PATCH', `/api/groups/${group.id}`, { as: member, body: { name: 'Renamed' } }),
      await t.call('DELETE', `/api/groups/${group.id}`, { as: member }),
      await t.call('PUT', `/api/groups/${group.id}/members/${member.user.id}`, { as: member }),
      await t.call('DELETE', `/api/groups/${group.id}/members/${member.user.id}`, { as: member }),
    ];
    for (const res of denied) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it('lists the tenant\'s groups by name with member counts, never another tenant\'s', async () => {
    const t2 = await makeTestApp();
    try {
      const zeta = await t2.call('POST', '/api/groups', { as: t2.admin, body: { name: 'Zeta' } });
      const alpha = await t2.call('POST', '/api/groups', { as: t2.admin, body: { name: 'Alpha' } });
      const foreign = await t2.newTenant('foreign');
      await t2.call('POST', '/api/groups', { as: foreign.admin, body: { name: 'Foreign group' } });
      const a = await t2.newUser();
      const b = await t2.newUser();
      await t2.call('PUT', `/api/groups/${alpha.body.id}/members/${a.user.id}`, { as: t2.admin });
      await t2.call('PUT', `/api/groups/${alpha.body.id}/members/${b.user.id}`, { as: t2.admin });

      const res = await t2.call('GET', '/api/groups', { as: a });
      expect(res.body.data.map((g: { name: string; member_count: number }) => [g.name, g.member_count])).toEqual([
        ['Alpha', 2],
        ['Zeta', 0],
      ]);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 2, total_pages: 1 });
      expect(zeta.status).toBe(201);
    } finally {
      t2.close();
    }
  });

  it('409 for a duplicate name in the tenant; the same name is fine in another tenant', async () => {
    await createGroup('Unique');
    const again = await t.call('POST', '/api/groups', { as: t.admin, body: { name: 'Unique' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect((await t.call('POST', '/api/groups', { as: other.admin, body: { name: 'Unique' } })).status).toBe(201);
  });

  it('400 for malformed bodies', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 'x', owner: 'me' }, { name: 5 }]) {
      expect((await t.call('POST', '/api/groups', { as: t.admin, body })).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('reads one group with its members', async () => {
    const group = await createGroup('With members');
    const a = await t.newUser({ name: 'Ann' });
    const b = await t.newUser({ name: 'Ben' });
    await t.call('PUT', `/api/groups/${group.id}/members/${b.user.id}`, { as: t.admin });
    await t.call('PUT', `/api/groups/${group.id}/members/${a.user.id}`, { as: t.admin });
    const res = await t.call('GET', `/api/groups/${group.id}`, { as: member });
    expect(res.status).toBe(200);
    expect(res.body.member_count).toBe(2);
    expect(res.body.members.map((m: { id: string }) => m.id)).toEqual([a.user.id, b.user.id]);
    expect(Object.keys(res.body.members[0]).sort()).toEqual(['added_at', 'email', 'id', 'name']);
  });

  it("shows members' emails to admins only; a member sees names, and their own email", async () => {
    const group = await createGroup('Privacy');
    const a = await t.newUser({ name: 'Ada' });
    await t.call('PUT', `/api/groups/${group.id}/members/${a.user.id}`, { as: t.admin });
    await t.call('PUT', `/api/groups/${group.id}/members/${member.user.id}`, { as: t.admin });
    const emailsSeenBy = async (as: TestUser) =>
      Object.fromEntries((await t.call('GET', `/api/groups/${group.id}`, { as })).body.members.map((m: { id: string; email: string | null }) => [m.id, m.email]));

    expect(await emailsSeenBy(t.admin)).toEqual({ [a.user.id]: a.user.email, [member.user.id]: member.user.email });
    // As GET /api/users/{id} refuses a member other users' profiles, the group does not show their emails.
    expect(await emailsSeenBy(member)).toEqual({ [a.user.id]: null, [member.user.id]: member.user.email });
    const outsider = await t.newUser();
    expect(await emailsSeenBy(outsider)).toEqual({ [a.user.id]: null, [member.user.id]: null });
  });

  it('updates name and description; 400 for an empty patch; 409 for a taken name', async () => {
    const group = await createGroup('Before', 'old description');
    await createGroup('Taken');
    t.clock.advance(1000);
    const res = await t.call('PATCH', `/api/groups/${group.id}`, { as: t.admin, body: { name: 'After' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'After', description: 'old description' });
    expect(res.body.updated_at).not.toBe(res.body.created_at);
    const cleared = await t.call('PATCH', `/api/groups/${group.id}`, { as: t.admin, body: { description: null } });
    expect(cleared.body.description).toBeNull();
    expect((await t.call('PATCH', `/api/groups/${group.id}`, { as: t.admin, body: {} })).status).toBe(400);
    expect((await t.call('PATCH', `/api/groups/${group.id}`, { as: t.admin, body: { name: 'Taken' } })).status).toBe(409);
  });

  it('deletes a group: 204, then 404', async () => {
    const group = await createGroup('Doomed');
    await t.call('PUT', `/api/groups/${group.id}/members/${member.user.id}`, { as: t.admin });
    const res = await t.call('DELETE', `/api/groups/${group.id}`, { as: t.admin });
    expect(res.status).toBe(204);
    expect((await t.call('GET', `/api/groups/${group.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('DELETE', `/api/groups/${group.id}`, { as: t.admin })).status).toBe(404);
  });

  it('adds members idempotently and removes them', async () => {
    const group = await createGroup('Membership');
    const path = `/api/groups/${group.id}/members/${member.user.id}`;
    expect((await t.call('PUT', path, { as: t.admin })).status).toBe(204);
    expect((await t.call('PUT', path, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/groups/${group.id}`, { as: t.admin })).body.member_count).toBe(1);

    expect((await t.call('DELETE', path, { as: t.admin })).status).toBe(204);
    expect((await t.call('GET', `/api/groups/${group.id}`, { as: t.admin })).body.members).toEqual([]);
    const again = await t.call('DELETE', path, { as: t.admin });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
  });

  it('404 across tenants: another tenant\'s group or user does not exist for the caller', async () => {
    const mine = await createGroup('Mine only');
    const theirs = await t.call('POST', '/api/groups', { as: other.admin, body: { name: 'Theirs only' } });
    const foreigner = await t.newUser({ tenantId: other.tenantId });

    expect((await t.call('GET', `/api/groups/${theirs.body.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('PATCH', `/api/groups/${theirs.body.id}`, { as: t.admin, body: { name: 'x' } })).status).toBe(404);
    expect((await t.call('DELETE', `/api/groups/${theirs.body.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('PUT', `/api/groups/${theirs.body.id}/members/${member.user.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('PUT', `/api/groups/${mine.id}/members/${foreigner.user.id}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', `/api/groups/${mine.id}`, { as: other.admin })).status).toBe(404);
    expect((await t.call('GET', '/api/groups', { as: other.admin })).body.data.map((g: { id: string }) => g.id)).not.toContain(mine.id);
  });

  it('404 for unknown groups and users, 400 for malformed ids, 401 without a credential', async () => {
    const group = await createGroup('Ids');
    expect((await t.call('GET', `/api/groups/${crypto.randomUUID()}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('PUT', `/api/groups/${group.id}/members/${crypto.randomUUID()}`, { as: t.admin })).status).toBe(404);
    expect((await t.call('GET', '/api/groups/abc', { as: t.admin })).status).toBe(400);
    const badUser = await t.call('PUT', `/api/groups/${group.id}/members/abc`, { as: t.admin });
    expect(badUser.status).toBe(400);
    expect(badUser.body.errors[0].path).toBe('user_id');
    expect((await t.call('GET', '/api/groups')).status).toBe(401);
  });

  it('a deleted user cannot be added and leaves the member list', async () => {
    const group = await createGroup('Leavers');
    const leaver = await t.newUser();
    await t.call('PUT', `/api/groups/${group.id}/members/${leaver.user.id}`, { as: t.admin });
    await t.call('DELETE', `/api/users/${leaver.user.id}`, { as: t.admin });
    const res = await t.call('GET', `/api/groups/${group.id}`, { as: t.admin });
    expect(res.body.member_count).toBe(0);
    expect((await t.call('GET', '/api/groups', { as: t.admin })).body.data.find((g: { id: string }) => g.id === group.id).member_count).toBe(0);
    expect((await t.call('PUT', `/api/groups/${group.id}/members/${leaver.user.id}`, { as: t.admin })).status).toBe(404);
  });
});
