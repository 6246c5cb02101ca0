// Invitations: a user created without a password gets a one-time link (7 days), in the admin's
// answer when no mail is sent; accepting it sets the password (and name) and signs in as the
// password grant does; the link works once, expires, dies when sent again, when a password is set
// otherwise, or when the user is deleted. And the security matrix of the admin-only routes.
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { accountTokens, users } from '../db/schema';
import type { ConfigInput } from '../src/config';
import { expectProblem, makeTestApp, MISSING_ID, uniqueEmail, type TestApp } from './helpers/app';
import { adminsOnly, countRows, securityMatrix, useCast, type Cast, type Side } from './helpers/security';

const PUBLIC_URL = 'https://lms.example.org';

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

async function setup(config: ConfigInput = {}) {
  const t = await makeTestApp({ config: { publicUrl: PUBLIC_URL, ...config } });
  opened.push(t);
  return t;
}

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

async function invite(t: TestApp, name = 'Invited Person') {
  const email = uniqueEmail('invited');
  const res = await t.call('POST', '/api/users', { as: t.admin, body: { email, name } });
  expect(res.status, res.text).toBe(201);
  return { email, id: res.body.id as string, url: res.body.invitation_url as string, body: res.body };
}

const accept = (t: TestApp, body: unknown) => t.call('POST', '/api/auth/invitations/accept', { body });

describe('invitations', () => {
  it('answers the link when no mail is sent; accepting sets the password and name and signs in', async () => {
    const t = await setup();
    const { email, id, url, body } = await invite(t);
    expect(body).toMatchObject({ email, role: 'member', invitation_mailed: false });
    expect(url.startsWith(`${PUBLIC_URL}/accept-invitation?token=`)).toBe(true);
    expect(Date.parse(body.invitation_expires_at) - t.clock.now().getTime()).toBe(7 * 24 * 3600 * 1000);
    // Only the hash is stored.
    const stored = t.db.select().from(accountTokens).where(eq(accountTokens.userId, id)).all();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.tokenHash).not.toBe(tokenOf(url));
    // No password yet: signing in fails.
    expect((await t.call('POST', '/api/auth/token', { body: { email, password: 'whatever-it-is' } })).status).toBe(401);

    const res = await accept(t, { token: tokenOf(url), password: 'my-own-password', name: 'Chosen Name' });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(res.body.token_type).toBe('Bearer');
    const me = await t.call('GET', '/api/users/me', { as: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id, email, name: 'Chosen Name' });
    // The refresh token works as a password grant's does, and so does the password.
    expect((await t.call('POST', '/api/auth/refresh', { body: { refresh_token: res.body.refresh_token } })).status).toBe(200);
    await t.signIn(email, 'my-own-password');
    // Once only.
    expectProblem(await accept(t, { token: tokenOf(url), password: 'another-password' }), 422, 'validation_failed');
    await t.signIn(email, 'my-own-password');
    // Accepted: nothing to send again.
    expectProblem(await t.call('POST', `/api/users/${id}/invitation`, { as: t.admin }), 409, 'conflict');
  });

  it('opens the configured page (INVITATION_URL)', async () => {
    const t = await setup({ invitationUrl: 'https://app.example.org/welcome?lang=en' });
    const { url } = await invite(t);
    expect(url).toMatch(/^https:\/\/app\.example\.org\/welcome\?lang=en&token=[A-Za-z0-9_-]{43}$/);
    expect((await accept(t, { token: tokenOf(url), password: 'password-123' })).status).toBe(200);
  });

  it('invites nobody when a password is given', async () => {
    const t = await setup();
    const res = await t.call('POST', '/api/users', { as: t.admin, body: { email: uniqueEmail('direct'), name: 'Direct', password: 'direct-password' } });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('invitation_url');
    expect(res.body).not.toHaveProperty('invitation_mailed');
    expect(countRows({ t } as Cast, accountTokens)).toBe(0);
  });

  it('expires after 7 days', async () => {
    const t = await setup();
    const early = await invite(t);
    const late = await invite(t);
    t.clock.advance(7 * 24 * 3600 * 1000 - 1);
    expect((await accept(t, { token: tokenOf(early.url), password: 'in-time-password' })).status).toBe(200);
    t.clock.advance(1);
    expectProblem(await accept(t, { token: tokenOf(late.url), password: 'too-late-password' }), 422, 'validation_failed');
  });

  it('sending again kills the previous link', async () => {
    const t = await setup();
    const { id, url: first } = await invite(t);
    const again = await t.call('POST', `/api/users/${id}/invitation`, { as: t.admin });
    expect(again.status, again.text).toBe(200);
    expect(again.body.invitation_mailed).toBe(false);
    const second = again.body.invitation_url as string;
    expect(tokenOf(second)).not.toBe(tokenOf(first));
    const dead = await accept(t, { token: tokenOf(first), password: 'first-link-pass' });
    expectProblem(dead, 422, 'validation_failed');
    expect(dead.body.errors).toEqual([{ path: 'token', message: 'is invalid, expired or already used' }]);
    expect((await accept(t, { token: tokenOf(second), password: 'second-link-pass' })).status).toBe(200);
  });

  it('kills the link when an admin sets a password, or deletes the user', async () => {
    const t = await setup();
    const set = await invite(t);
    expect((await t.call('PATCH', `/api/users/${set.id}`, { as: t.admin, body: { password: 'admin-chosen-1' } })).status).toBe(200);
    expectProblem(await accept(t, { token: tokenOf(set.url), password: 'invitee-chosen' }), 422, 'validation_failed');
    await t.signIn(set.email, 'admin-chosen-1');

    const gone = await invite(t);
    expect((await t.call('DELETE', `/api/users/${gone.id}`, { as: t.admin })).status).toBe(204);
    expectProblem(await accept(t, { token: tokenOf(gone.url), password: 'invitee-chosen' }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/users/${gone.id}/invitation`, { as: t.admin }), 404, 'not_found');
  });

  it('refuses bad input: 400 for malformed bodies, 422 for a dead token, 404 for an unknown user', async () => {
    const t = await setup();
    const { url } = await invite(t);
    const token = tokenOf(url);
    expectProblem(await accept(t, { token }), 400, 'validation_failed');
    expectProblem(await accept(t, { password: 'long-enough-1' }), 400, 'validation_failed');
    expectProblem(await accept(t, { token, password: 'short' }), 400, 'validation_failed');
    expectProblem(await accept(t, { token, password: 'long-enough-1', role: 'admin' }), 400, 'validation_failed');
    expectProblem(await accept(t, { token, password: 'long-enough-1', name: '   ' }), 400, 'validation_failed');
    expectProblem(await accept(t, { token, password: 'long-enough-1', name: 'Bad\u0007Name' }), 422, 'validation_failed');
    const text = await t.call('POST', '/api/auth/invitations/accept', { rawBody: 'token=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expectProblem(text, 415, 'unsupported_media_type');
    expectProblem(await accept(t, { token: 'not-a-token', password: 'long-enough-1' }), 422, 'validation_failed');
    expectProblem(await t.call('POST', `/api/users/${MISSING_ID}/invitation`, { as: t.admin }), 404, 'not_found');
    expectProblem(await t.call('POST', '/api/users/not-a-uuid/invitation', { as: t.admin }), 400, 'validation_failed');
    // None of that used the link.
    expect((await accept(t, { token, password: 'long-enough-1' })).status).toBe(200);
  });

  it('counts dead tokens against the client address as failed sign-ins (429)', async () => {
    const t = await setup({ signInMaxFailuresPerIp: 3 });
    for (let i = 0; i < 3; i += 1) expectProblem(await accept(t, { token: `guess-${i}`, password: 'long-enough-1' }), 422, 'validation_failed');
    const limited = await accept(t, { token: 'guess-4', password: 'long-enough-1' });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

// ---- security matrix of the admin-only routes ----

const cast = useCast('invitations-sec');


let created = 0;

securityMatrix(cast, {
  name: 'POST /api/users',
  crossTenant: false,
  setup: () => ({}),
  request: () => ({ method: 'POST', path: '/api/users', body: { email: `invited-sec-${++created}@example.com`, name: 'Invited' } }),
  snapshot: (_f, c) => [countRows(c, users), countRows(c, accountTokens)],
  roles: { ...adminsOnly(201), otherTenantAdmin: 201, otherTenantUser: 403 },
});

async function invitedUser(side: Side, c: Cast) {
  const res = await c.t.call('POST', '/api/users', { as: side.admin, body: { email: uniqueEmail(`sec-${side.name}`), name: `Invited ${side.name}` } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string };
}

securityMatrix(cast, {
  name: 'POST /api/users/{id}/invitation',
  setup: invitedUser,
  request: (f) => ({ method: 'POST', path: `/api/users/${f.id}/invitation` }),
  snapshot: (f, c) => c.t.db.select({ id: accountTokens.id, usedAt: accountTokens.usedAt }).from(accountTokens).where(eq(accountTokens.userId, f.id)).all(),
  roles: adminsOnly(200),
});
