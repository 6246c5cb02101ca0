// A user's time zone: an IANA zone set through PATCH /api/users/{id} (by the user or an admin),
// checked against the time-zone tables the server computes calendar days with, stored in its
// name as given (only its case corrected), shown on the user; null resets it to UTC.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { localDay, previousDay } from '../src/lib/timezone';

describe('PATCH /api/users/{id} timezone', () => {
  let t: TestApp;
  let user: TestUser;
  let other: TestUser;
  const patch = (body: unknown, as: TestUser = user, id = user.user.id) => t.call('PATCH', `/api/users/${id}`, { as, body });

  beforeAll(async () => {
    t = await makeTestApp();
    user = await t.newUser();
    other = await t.newUser();
  });
  afterAll(() => t.close());

  it('is null (UTC) until set, on every user JSON', async () => {
    const me = await t.call('GET', '/api/users/me', { as: user });
    expect(me.body.timezone).toBeNull();
    const created = await t.call('POST', '/api/users', { as: t.admin, body: { email: 'tz-new@example.com', name: 'New' } });
    expect(created.body.timezone).toBeNull();
  });

  it('a user sets their own; it reads back canonical, on /me and on the user', async () => {
    const res = await patch({ timezone: 'europe/paris' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.timezone).toBe('Europe/Paris');
    expect((await t.call('GET', '/api/users/me', { as: user })).body.timezone).toBe('Europe/Paris');
    expect((await t.call('GET', `/api/users/${user.user.id}`, { as: t.admin })).body.timezone).toBe('Europe/Paris');
    expect((await patch({ timezone: 'Asia/Tokyo', name: 'Renamed' })).body).toMatchObject({ timezone: 'Asia/Tokyo', name: 'Renamed' });
  });

  it('an alias the runtime calls by another name is kept as given (Asia/Kolkata is not turned into Asia/Calcutta)', async () => {
    for (const zone of ['Asia/Kolkata', 'US/Eastern', 'Europe/Kyiv', 'Etc/UTC']) {
      const res = await patch({ timezone: zone });
      expect(res.status, res.text).toBe(200);
      expect(res.body.timezone).toBe(zone);
      expect((await t.call('GET', '/api/users/me', { as: user })).body.timezone).toBe(zone);
    }
    expect(localDay(new Date('2026-03-11T20:00:00.000Z'), 'Asia/Kolkata')).toBe('2026-03-12');
  });

  it('null resets it to UTC; leaving it out keeps it', async () => {
    await patch({ timezone: 'America/New_York' });
    expect((await patch({ name: 'Kept' })).body.timezone).toBe('America/New_York');
    const res = await patch({ timezone: null });
    expect(res.status).toBe(200);
    expect(res.body.timezone).toBeNull();
  });

  it('422 for anything that is not a time zone, naming the field; nothing changes', async () => {
    await patch({ timezone: 'Europe/Berlin' });
    for (const timezone of ['Mars/Olympus_Mons', '+01:00', 'UTC+1', '', ' Europe/Paris', 'Europe/Paris\n', 'x'.repeat(100)]) {
      const res = await patch({ timezone });
      expectProblem(res, 422, 'validation_failed', JSON.stringify(timezone));
      expect(res.body.errors).toEqual([{ path: 'timezone', message: expect.any(String) }]);
    }
    expect((await t.call('GET', '/api/users/me', { as: user })).body.timezone).toBe('Europe/Berlin');
  });

  it('400 for a value that is not a string, or too long', async () => {
    for (const timezone of [1, true, ['UTC'], { zone: 'UTC' }, 'x'.repeat(101)]) {
      expectProblem(await patch({ timezone }), 400, 'validation_failed', JSON.stringify(timezone));
    }
  });

  it("an admin sets anyone's; another member may not (403 before any check of the value); another tenant's user is 404", async () => {
    expect((await patch({ timezone: 'Australia/Sydney' }, t.admin as TestUser, other.user.id)).body.timezone).toBe('Australia/Sydney');
    expectProblem(await patch({ timezone: 'Europe/Paris' }, user, other.user.id), 403, 'forbidden');
    expectProblem(await patch({ timezone: 'Nowhere/At_All' }, user, other.user.id), 403, 'forbidden');
    // Even the value it already has: another user is not theirs to write to.
    expectProblem(await patch({ timezone: 'Australia/Sydney' }, user, other.user.id), 403, 'forbidden');
    const b = await t.newTenant('tz-other');
    expectProblem(await patch({ timezone: 'Europe/Paris' }, b.admin as TestUser, user.user.id), 404, 'not_found');
    expectUnauthorized(await t.call('PATCH', `/api/users/${user.user.id}`, { body: { timezone: 'UTC' } }));
  });
});

describe('calendar days in a time zone', () => {
  it('counts the day where the learner is', () => {
    const at = new Date('2026-03-11T23:30:00.000Z');
    expect(localDay(at, null)).toBe('2026-03-11');
    expect(localDay(at, 'UTC')).toBe('2026-03-11');
    expect(localDay(at, 'Europe/Paris')).toBe('2026-03-12');
    expect(localDay(at, 'America/Los_Angeles')).toBe('2026-03-11');
    expect(localDay(new Date('2026-03-12T05:00:00.000Z'), 'America/Los_Angeles')).toBe('2026-03-11');
    expect(localDay(new Date('2026-03-11T23:30:00.000Z'), 'Pacific/Kiritimati')).toBe('2026-03-12');
    // A stored zone the runtime no longer knows counts as UTC.
    expect(localDay(at, 'Gone/Zone')).toBe('2026-03-11');
  });

  it('knows the day before, across months and leap days', () => {
    expect(previousDay('2026-03-01')).toBe('2026-02-28');
    expect(previousDay('2028-03-01')).toBe('2028-02-29');
    expect(previousDay('2027-01-01')).toBe('2026-12-31');
  });
});
