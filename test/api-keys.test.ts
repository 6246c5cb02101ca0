// API keys: listed without secrets, the secret shown once, usable as Bearer or X-API-Key, and
// refused at once when deleted or expired. Another user's key does not exist for the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp, type TestUser } from './helpers/app';

const HOUR = 3_600_000;

describe('/api/api-keys', () => {
  let t: TestApp;
  let member: TestUser;
  beforeAll(async () => {
    t = await makeTestApp();
    member = await t.newUser();
  });
  afterAll(() => t.close());

  const meWithBearer = (key: string) => t.call('GET', '/api/users/me', { as: key });
  const meWithHeader = (key: string) => t.call('GET', '/api/users/me', { headers: { 'X-API-Key': key } });

  it('creates a key: 201, Location, the secret shown this once', async () => {
    const res = await t.call('POST', '/api/api-keys', { as: member, body: { name: '  CI pipeline ' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/api-keys/${res.body.id}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ name: 'CI pipeline', last_used_at: null, expires_at: null });
    expect(res.body.prefix).toMatch(/^lms_[0-9a-f]{12}$/);
    expect(res.body.key.startsWith(`${res.body.prefix}_`)).toBe(true);
    expect(res.body.key.length).toBeGreaterThan(40);

    const one = await t.call('GET', `/api/api-keys/${res.body.id}`, { as: member });
    expect(one.status).toBe(200);
    expect(one.body.key).toBeUndefined();
    expect(one.text).not.toContain(res.body.key.slice(res.body.prefix.length + 1));
  });

  it('lists the caller\'s keys, newest first, never with their secret', async () => {
    const owner = await t.newUser();
    const a = await t.newApiKey(owner, { name: 'first' });
    t.clock.advance(1000);
    const b = await t.newApiKey(owner, { name: 'second' });
    await t.newApiKey(member, { name: 'someone else' });

    const res = await t.call('GET', '/api/api-keys', { as: owner });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, per_page: 100, total: 2, total_pages: 1 });
    expect(res.body.data.map((k: { id: string }) => k.id)).toEqual([b.id, a.id]);
    for (const key of res.body.data) {
      expect(Object.keys(key).sort()).toEqual(['course_ids', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'scopes']);
    }
    expect(res.text).not.toContain(a.key);
    expect(res.text).not.toContain(b.key);
  });

  it('works as Authorization: Bearer and as X-API-Key', async () => {
    const { key } = await t.newApiKey(member);
    const viaBearer = await meWithBearer(key);
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.id).toBe(member.user.id);
    const viaHeader = await meWithHeader(key);
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.id).toBe(member.user.id);
  });

  it('keeps last_used_at', async () => {
    const created = await t.newApiKey(member);
    const before = await t.call('GET', `/api/api-keys/${created.id}`, { as: member });
    expect(before.body.last_used_at).toBeNull();

    const usedAt = t.clock.now().toISOString();
    expect((await meWithBearer(created.key)).status).toBe(200);
    const after = await t.call('GET', `/api/api-keys/${created.id}`, { as: member });
    expect(after.body.last_used_at).toBe(usedAt);

    t.clock.advance(2 * 60_000);
    const laterUse = t.clock.now().toISOString();
    expect((await meWithHeader(created.key)).status).toBe(200);
    const list = await t.call('GET', '/api/api-keys', { as: member });
    expect(list.body.data.find((k: { id: string }) => k.id === created.id).last_used_at).toBe(laterUse);
  });

  it('stops working at once when deleted, even right after being used', async () => {
    const created = await t.newApiKey(member);
    expect((await meWithBearer(created.key)).status).toBe(200);
    expect((await meWithHeader(created.key)).status).toBe(200);

    const res = await t.call('DELETE', `/api/api-keys/${created.id}`, { as: member });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    for (const r of [await meWithBearer(created.key), await meWithHeader(created.key)]) {
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect((await t.call('GET', `/api/api-keys/${created.id}`, { as: member })).status).toBe(404);
    expect((await t.call('DELETE', `/api/api-keys/${created.id}`, { as: member })).status).toBe(404);
  });

  it('deleting one key leaves the others working', async () => {
    const keep = await t.newApiKey(member);
    const drop = await t.newApiKey(member);
    await meWithBearer(keep.key);
    await t.call('DELETE', `/api/api-keys/${drop.id}`, { as: member });
    expect((await meWithBearer(keep.key)).status).toBe(200);
  });

  it('refuses an expired key', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + HOUR).toISOString();
    const created = await t.newApiKey(member, { expires_at: expiresAt });
    expect(created).toMatchObject({ expires_at: expiresAt });
    expect((await meWithBearer(created.key)).status).toBe(200);

    t.clock.advance(HOUR + 1000);
    expect((await meWithBearer(created.key)).status).toBe(401);
    expect((await meWithHeader(created.key)).status).toBe(401);
    expect((await t.call('POST', '/api/auth/token', { body: { api_key: created.key } })).status).toBe(401);
  });

  it('validates the new key: name required, expires_at a future ISO time', async () => {
    const bad = async (body: unknown, status: number) => {
      const res = await t.call('POST', '/api/api-keys', { as: member, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.code).toBe('validation_failed');
      return res;
    };
    await bad({}, 400);
    await bad({ name: '   ' }, 400);
    await bad({ name: 'x', expires_at: 'tomorrow' }, 400);
    await bad({ name: 'x', secret: 'mine' }, 400);
    const past = await bad({ name: 'x', expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() }, 422);
    expect(past.body.errors).toEqual([{ path: 'expires_at', message: 'must be in the future' }]);
  });

  it('another user\'s key does not exist for the caller (404), in this tenant or another', async () => {
    const other = await t.newUser();
    const othersKey = await t.newApiKey(other);
    const elsewhere = await t.newTenant('keys-elsewhere');
    const foreignKey = await t.newApiKey(elsewhere.admin);

    for (const id of [othersKey.id, foreignKey.id]) {
      expect((await t.call('GET', `/api/api-keys/${id}`, { as: member })).status).toBe(404);
      const del = await t.call('DELETE', `/api/api-keys/${id}`, { as: member });
      expect(del.status).toBe(404);
      expect(del.body.code).toBe('not_found');
    }
    // Even an admin cannot delete someone else's key through this endpoint.
    expect((await t.call('DELETE', `/api/api-keys/${othersKey.id}`, { as: t.admin })).status).toBe(404);
    expect((await meWithBearer(othersKey.key)).status).toBe(200);
    expect((await meWithBearer(foreignKey.key)).body.tenant_id).toBe(elsewhere.tenantId);
  });

  it('400 for a malformed id, 401 without a credential', async () => {
    expect((await t.call('GET', '/api/api-keys/not-a-uuid', { as: member })).status).toBe(400);
    expect((await t.call('DELETE', '/api/api-keys/123', { as: member })).status).toBe(400);
    expect((await t.call('GET', '/api/api-keys')).status).toBe(401);
    expect((await t.call('POST', '/api/api-keys', { body: { name: 'x' } })).status).toBe(401);
  });

  it('403 for creating a key with a key, or with a token obtained with a key', async () => {
    const { key } = await t.newApiKey(member);
    const derived = (await t.call('POST', '/api/auth/token', { body: { api_key: key } })).body.access_token as string;
    for (const res of [
      await t.call('POST', '/api/api-keys', { as: key, body: { name: 'minted' } }),
      await t.call('POST', '/api/api-keys', { headers: { 'X-API-Key': key }, body: { name: 'minted' } }),
      await t.call('POST', '/api/api-keys', { as: derived, body: { name: 'minted' } }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    // Reading and deleting work with a key, so a script can clean up after itself.
    expect((await t.call('GET', '/api/api-keys', { as: key })).status).toBe(200);
  });

  it('a key acts with its user\'s current rights: a member\'s key is refused on admin endpoints', async () => {
    const { key } = await t.newApiKey(member);
    expect((await t.call('GET', '/api/users', { as: key })).status).toBe(403);
  });

  it('paginates the list with a Link header', async () => {
    const owner = await t.newUser();
    for (let i = 0; i < 3; i++) await t.newApiKey(owner, { name: `k${i}` });
    const res = await t.call('GET', '/api/api-keys?per_page=2&page=2', { as: owner });
    expect(res.body.data).toHaveLength(1);
    expect(res.body.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(res.headers.get('link')).toContain('rel="prev"');
  });
});
