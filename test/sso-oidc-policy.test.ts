// What OpenID Connect sign-in adds to the basics (test/sso-oidc.test.ts), against the same real
// provider (oidc-provider 8 on 127.0.0.1): a tenant that turns password sign-in off for its members,
// an id_token issued for another client refused, discovery fetched once per version of a connection,
// and two concurrent first sign-ins of one person ending in one user.
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoHandles, ssoLinks, users } from '../db/schema';
import { sha256 } from '../src/auth/secrets';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';
import { followToApp, startProvider, type Account, type TestProvider } from './helpers/oidc-provider';

const APP = 'https://app.example.org';
const BASE = 'http://localhost:3000';
const DISCOVERY = '/.well-known/openid-configuration';
let t: TestApp;
let provider: TestProvider;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  provider = await startProvider();
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  t = await makeTestApp({
    logger,
    config: { outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'true', ssoSecretKey: 's'.repeat(40), frontendOrigins: APP, signInMaxFailuresPerIp: '100' },
  });
});
afterAll(async () => {
  await Promise.all([t.close(), provider.close()]);
});

async function connection(clientId: string, body: object = {}): Promise<{ id: string; redirectUri: string }> {
  const res = await t.call('POST', '/api/sso/connections', {
    as: t.admin,
    body: { protocol: 'oidc', name: clientId, issuer: provider.issuer, client_id: clientId, client_secret: `${clientId}-secret`, provisioning: 'jit', ...body },
  });
  expect(res.status, res.text).toBe(201);
  provider.addClient(clientId, `${clientId}-secret`, [res.body.oidc.redirect_uri]);
  return { id: res.body.id, redirectUri: res.body.oidc.redirect_uri };
}

/** Our login, through the provider, up to (not including) our callback: its URL. */
async function toCallback(connectionId: string, account: Account): Promise<URL> {
  provider.signInAs(account);
  const start = await t.call('GET', `/sso/default/${connectionId}/login?return_to=${encodeURIComponent(`${APP}/signed-in`)}`);
  expect(start.status, start.text).toBe(302);
  return new URL(await followToApp(start.headers.get('location')!, BASE));
}
const callback = (url: URL) => t.call('GET', url.pathname + url.search);
const stateData = (url: URL) => {
  const hash = sha256(url.searchParams.get('state')!);
  return { hash, data: JSON.parse(t.db.select().from(ssoHandles).where(eq(ssoHandles.hash, hash)).get()!.data) as { code_verifier: string; nonce: string } };
};

async function tokensOf(res: { status: number; headers: Headers; text: string }) {
  expect(res.status, res.text).toBe(302);
  const to = new URL(res.headers.get('location')!);
  expect(to.searchParams.get('error'), 'refused').toBeNull();
  const tokens = await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code: to.searchParams.get('code') } });
  expect(tokens.status, tokens.text).toBe(200);
  return tokens.body as { access_token: string };
}
const errorOf = (res: { status: number; headers: Headers; text: string }) => {
  expect(res.status, res.text).toBe(302);
  return new URL(res.headers.get('location')!).searchParams.get('error');
};
const counts = () => ({ users: t.db.select().from(users).all().length, links: t.db.select().from(ssoLinks).all().length });

describe('password sign-in off for members', () => {
  it('refuses members the password grant (403 password_sign_in_disabled) once an admin turns it off, keeps admins, and leaves SSO open', async () => {
    const member = await t.newUser({ email: 'pat@uni.example.edu', password: 'member-password-1' });
    const grant = (email: string, password: string) => t.call('POST', '/api/auth/token', { body: { email, password } });
    expect((await grant('pat@uni.example.edu', 'member-password-1')).status).toBe(200);
    const initial = await t.call('GET', '/api/sso/settings', { as: t.admin });
    expect(initial.body).toEqual({ member_password_sign_in: true, updated_at: null });

    expectProblem(await t.call('PATCH', '/api/sso/settings', { as: member, body: { member_password_sign_in: false } }), 403, 'forbidden');
    expectProblem(await t.call('GET', '/api/sso/settings', { as: member }), 403, 'forbidden');
    expectProblem(await t.call('PATCH', '/api/sso/settings', { as: t.admin, body: { member_password_sign_in: 'no' } }), 400, 'validation_failed');
    const off = await t.call('PATCH', '/api/sso/settings', { as: t.admin, body: { member_password_sign_in: false } });
    expect(off.status, off.text).toBe(200);
    expect(off.body.member_password_sign_in).toBe(false);

    const refused = await grant('pat@uni.example.edu', 'member-password-1');
    expectProblem(refused, 403, 'password_sign_in_disabled');
    expect(refused.body.detail).toMatch(/single sign-on/);
    // A wrong password still says only that: the policy is told to those who know the password.
    expectProblem(await grant('pat@uni.example.edu', 'wrong-password-1'), 401, 'unauthorized');
    expect((await grant('admin@example.com', 'admin-password-1')).status).toBe(200);
    // Another tenant's members are not affected.
    const other = await t.newTenant('policy-other');
    const outsider = await t.newUser({ tenantId: other.tenantId, email: 'sam@other.example.edu', password: 'member-password-2' });
    expect((await grant(outsider.user.email, 'member-password-2')).status).toBe(200);
    expect((await t.call('GET', '/api/sso/settings', { as: other.admin })).body.member_password_sign_in).toBe(true);

    // The member signs in through the identity provider instead (linked by verified email).
    const { id } = await connection('lms-policy');
    const tokens = await tokensOf(await callback(await toCallback(id, { sub: 'pat-sub', email: 'pat@uni.example.edu', email_verified: true })));
    const me = await t.call('GET', '/api/users/me', { as: tokens.access_token });
    expect(me.body.id).toBe(member.user.id);
    expect((await t.call('PATCH', '/api/sso/settings', { as: t.admin, body: { member_password_sign_in: true } })).status).toBe(200);
    expect((await grant('pat@uni.example.edu', 'member-password-1')).status).toBe(200);
  });
});

describe('OIDC id_token checks, discovery cache and concurrent first sign-ins', () => {
  let a: { id: string; redirectUri: string };
  let b: { id: string; redirectUri: string };
  beforeAll(async () => {
    a = await connection('lms-client-a');
    b = await connection('lms-client-b');
  });

  it('refuses an id_token the provider issued for another client (its audience), with nothing created', async () => {
    // An id_token for client B, obtained by B's own code exchange.
    const bCallback = await toCallback(b.id, { sub: 'oscar', email: 'oscar@uni.example.edu', email_verified: true });
    const bState = stateData(bCallback);
    const exchanged = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('lms-client-b:lms-client-b-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: bCallback.searchParams.get('code')!, redirect_uri: b.redirectUri, code_verifier: bState.data.code_verifier }),
    });
    expect(exchanged.status).toBe(200);
    const idTokenForB = ((await exchanged.json()) as { id_token: string }).id_token;
    expect(JSON.parse(Buffer.from(idTokenForB.split('.')[1]!, 'base64url').toString()).aud).toBe('lms-client-b');

    // A's sign-in gets B's id_token from the token endpoint; A's nonce is made B's, so that only the audience differs.
    const before = counts();
    const aCallback = await toCallback(a.id, { sub: 'oscar', email: 'oscar@uni.example.edu', email_verified: true });
    const aState = stateData(aCallback);
    t.db.update(ssoHandles).set({ data: JSON.stringify({ ...aState.data, nonce: bState.data.nonce }) }).where(eq(ssoHandles.hash, aState.hash)).run();
    provider.rewriteTokenResponse((body) => ({ ...body, id_token: idTokenForB }));
    logLines.length = 0;
    try {
      expect(errorOf(await callback(aCallback))).toBe('token_invalid');
    } finally {
      provider.rewriteTokenResponse(undefined);
    }
    const refusal = logLines.find((l) => l.msg === 'sso sign-in refused');
    expect(refusal).toMatchObject({ connectionId: a.id, reason: 'token_invalid' });
    expect(String(refusal!.detail)).toMatch(/aud/);
    expect(counts()).toEqual(before);

    // The same sign-in untouched is accepted: the refusal was the audience.
    const tokens = await tokensOf(await callback(await toCallback(a.id, { sub: 'oscar', email: 'oscar@uni.example.edu', email_verified: true })));
    expect((await t.call('GET', '/api/users/me', { as: tokens.access_token })).body.email).toBe('oscar@uni.example.edu');
  });

  it('fetches discovery once per version of a connection, not on every sign-in', async () => {
    const c = await connection('lms-cached');
    const account = { sub: 'peggy', email: 'peggy@uni.example.edu', email_verified: true };
    const start = provider.hits(DISCOVERY);
    let tokens = await tokensOf(await callback(await toCallback(c.id, account)));
    expect(provider.hits(DISCOVERY)).toBe(start + 1);
    await tokensOf(await callback(await toCallback(c.id, account)));
    await tokensOf(await callback(await toCallback(c.id, account)));
    expect(provider.hits(DISCOVERY)).toBe(start + 1);

    // Changed (a new secret, checked by discovery once more), it is read again, and then kept.
    const patched = await t.call('PATCH', `/api/sso/connections/${c.id}`, { as: t.admin, body: { client_secret: 'lms-cached-secret' } });
    expect(patched.status, patched.text).toBe(200);
    const afterPatch = provider.hits(DISCOVERY);
    await tokensOf(await callback(await toCallback(c.id, account)));
    tokens = await tokensOf(await callback(await toCallback(c.id, account)));
    expect(provider.hits(DISCOVERY)).toBe(afterPatch + 1);
    expect((await t.call('GET', '/api/users/me', { as: tokens.access_token })).body.email).toBe('peggy@uni.example.edu');
  });

  it('answers two concurrent first sign-ins of one person with two codes for one user (one link, no 500)', async () => {
    const account = { sub: 'quentin', email: 'quentin@uni.example.edu', email_verified: true };
    const before = counts();
    const first = await toCallback(a.id, account);
    const second = await toCallback(a.id, account);
    const [one, two] = await Promise.all([callback(first), callback(second)]);
    const [t1, t2] = await Promise.all([tokensOf(one), tokensOf(two)]);
    const [me1, me2] = await Promise.all([t.call('GET', '/api/users/me', { as: t1.access_token }), t.call('GET', '/api/users/me', { as: t2.access_token })]);
    expect(me1.status).toBe(200);
    expect(me1.body.id).toBe(me2.body.id);
    expect(counts()).toEqual({ users: before.users + 1, links: before.links + 1 });
  });
});
