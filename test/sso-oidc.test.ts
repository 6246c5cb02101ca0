// OpenID Connect sign-in end to end against a real provider (oidc-provider 8 on 127.0.0.1): the
// login redirect, the provider's sign-in, the callback that verifies the id_token, the one-time code
// exchanged at POST /api/auth/token, and a call of the API with the tokens. Then each refusal, with
// nothing created or changed.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoHandles, ssoLinks, users } from '../db/schema';
import { sha256 } from '../src/auth/secrets';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';
import { keypair } from './helpers/sso';
import { followToApp, startProvider, type Account, type TestProvider } from './helpers/oidc-provider';

const APP = 'https://app.example.org';
/** What a browser sends when it navigates: refusals are pages to it. */
const browser = { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const BASE = 'http://localhost:3000';
let t: TestApp;
let provider: TestProvider;

beforeAll(async () => {
  provider = await startProvider();
  t = await makeTestApp({
    config: { outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'true', ssoSecretKey: 's'.repeat(40), frontendOrigins: APP, signInMaxFailuresPerIp: '40' },
  });
});
afterAll(async () => {
  await Promise.all([t.close(), provider.close()]);
});

async function connection(clientId: string, body: object = {}): Promise<string> {
  const res = await t.call('POST', '/api/sso/connections', {
    as: t.admin,
    body: { protocol: 'oidc', name: clientId, issuer: provider.issuer, client_id: clientId, client_secret: `${clientId}-secret`, ...body },
  });
  expect(res.status, res.text).toBe(201);
  provider.addClient(clientId, `${clientId}-secret`, [res.body.oidc.redirect_uri]);
  return res.body.id;
}

/** Starts at our login, signs in at the provider, and returns our callback's answer (and the callback URL it was given). */
async function signIn(connectionId: string, account: Account, options: { returnTo?: string; beforeCallback?: (callback: URL) => URL | void } = {}) {
  provider.signInAs(account);
  const start = await t.call('GET', `/sso/default/${connectionId}/login?return_to=${encodeURIComponent(options.returnTo ?? `${APP}/signed-in?x=1`)}`);
  expect(start.status, start.text).toBe(302);
  const location = new URL(start.headers.get('location')!);
  expect(location.origin).toBe(provider.issuer);
  expect(location.searchParams.get('code_challenge_method')).toBe('S256');
  expect(location.searchParams.get('nonce')).toBeTruthy();
  let callback = new URL(await followToApp(location.toString(), BASE));
  callback = options.beforeCallback?.(callback) ?? callback;
  const done = await t.call('GET', callback.pathname + callback.search, { headers: browser });
  return { done, callback };
}

const codeOf = (res: { status: number; headers: Headers; text: string }) => {
  expect(res.status, res.text).toBe(302);
  const to = new URL(res.headers.get('location')!);
  expect(to.origin + to.pathname).toBe(`${APP}/signed-in`);
  expect(to.searchParams.get('x')).toBe('1');
  expect(to.searchParams.get('error'), 'refused').toBeNull();
  return to.searchParams.get('code')!;
};
const errorOf = (res: { status: number; headers: Headers; text: string }) => {
  expect(res.status, res.text).toBe(302);
  const to = new URL(res.headers.get('location')!);
  expect(to.searchParams.get('code')).toBeNull();
  return to.searchParams.get('error');
};

async function tokensFor(code: string) {
  const res = await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code } });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.any(String) });
  return res.body as { access_token: string; refresh_token: string };
}

const userCount = () => t.db.select().from(users).all().length;
const linkCount = () => t.db.select().from(ssoLinks).all().length;

describe('OIDC sign-in', () => {
  let jit: string;
  let existingOnly: string;
  beforeAll(async () => {
    jit = await connection('lms-jit', { provisioning: 'jit', allowed_email_domains: ['uni.example.edu'] });
    existingOnly = await connection('lms-existing');
  });

  it('creates the user on first sign-in (jit), and signs the same person in again as the same user; the tokens work', async () => {
    const before = userCount();
    const alice = { sub: 'alice-1', email: 'Alice@uni.example.edu', email_verified: true, name: 'Alice Liddell' };
    const { done } = await signIn(jit, alice);
    expect(done.headers.get('referrer-policy')).toBe('no-referrer');
    expect(done.headers.get('cache-control')).toBe('no-store');
    const tokens = await tokensFor(codeOf(done));
    const me = await t.call('GET', '/api/users/me', { as: tokens.access_token });
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ email: 'alice@uni.example.edu', name: 'Alice Liddell', role: 'member' });
    expect(userCount()).toBe(before + 1);

    const again = await tokensFor(codeOf((await signIn(jit, alice)).done));
    expect((await t.call('GET', '/api/users/me', { as: again.access_token })).body.id).toBe(me.body.id);
    expect(userCount()).toBe(before + 1);
    const refreshed = await t.call('POST', '/api/auth/refresh', { body: { refresh_token: again.refresh_token } });
    expect(refreshed.status).toBe(200);
  });

  it('uses a code once, and not after 60 s', async () => {
    const code = codeOf((await signIn(jit, { sub: 'alice-1', email: 'alice@uni.example.edu', email_verified: true })).done);
    await tokensFor(code);
    expectProblem(await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code } }), 401, 'unauthorized');
    const late = codeOf((await signIn(jit, { sub: 'alice-1', email: 'alice@uni.example.edu', email_verified: true })).done);
    t.clock.advance(61_000);
    expectProblem(await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code: late } }), 401, 'unauthorized');
    const fresh = await tokensFor(codeOf((await signIn(jit, { sub: 'alice-1', email: 'alice@uni.example.edu', email_verified: true })).done));
    expect((await t.call('GET', '/api/users/me', { as: fresh.access_token })).status).toBe(200);
  });

  it('links an existing user by verified email, and refuses an unverified one, an unknown one (existing_only) and a domain not allowed, creating nothing', async () => {
    const bob = await t.newUser({ email: 'bob@uni.example.edu', name: 'Bob' });
    const carol = await t.newUser({ email: 'carol@uni.example.edu', name: 'Carol' });
    const [users0, links0] = [userCount(), linkCount()];
    expect(errorOf((await signIn(existingOnly, { sub: 'carol-sub', email: carol.user.email, email_verified: false })).done)).toBe('email_not_verified');
    expect(errorOf((await signIn(existingOnly, { sub: 'dan-sub', email: 'dan@uni.example.edu', email_verified: true })).done)).toBe('no_account');
    expect(errorOf((await signIn(jit, { sub: 'eve-sub', email: 'eve@elsewhere.example.com', email_verified: true })).done)).toBe('email_domain_not_allowed');
    expect([userCount(), linkCount()]).toEqual([users0, links0]);

    const tokens = await tokensFor(codeOf((await signIn(existingOnly, { sub: 'bob-sub', email: bob.user.email, email_verified: true })).done));
    expect((await t.call('GET', '/api/users/me', { as: tokens.access_token })).body.id).toBe(bob.user.id);
    expect(linkCount()).toBe(links0 + 1);

    // Linked to this connection, bob cannot be taken over through another one with the same email.
    expect(errorOf((await signIn(jit, { sub: 'mallory', email: bob.user.email, email_verified: true })).done)).toBe('linked_elsewhere');
    // Deleted, bob cannot come back through SSO.
    expect((await t.call('DELETE', `/api/users/${bob.user.id}`, { as: t.admin })).status).toBe(204);
    expect(errorOf((await signIn(existingOnly, { sub: 'bob-sub', email: bob.user.email, email_verified: true })).done)).toBe('account_deleted');
    expect(errorOf((await signIn(jit, { sub: 'bob-new-sub', email: bob.user.email, email_verified: true })).done)).toBe('account_deleted');
    expect(userCount()).toBe(users0);
    expect((await t.call('GET', '/api/users/me', { as: t.admin })).status).toBe(200);
  });

  it('refuses a callback with a wrong or replayed state: a plain page to a browser (problem+json to other callers), nothing created', async () => {
    const before = [userCount(), linkCount()];
    const { done, callback } = await signIn(jit, { sub: 'frank', email: 'frank@uni.example.edu', email_verified: true }, {
      beforeCallback: (cb) => {
        cb.searchParams.set('state', 'forged-state');
        return cb;
      },
    });
    expect(done.status).toBe(400);
    expect(done.headers.get('content-type')).toMatch(/^text\/html/);
    expect(done.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(done.headers.get('referrer-policy')).toBe('no-referrer');
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.text).toContain('was not started here');
    const json = await t.call('GET', callback.pathname + callback.search);
    expectProblem(json, 400, 'bad_request');
    expect(json.body.detail).toMatch(/state_unknown/);
    expect([userCount(), linkCount()]).toEqual(before);

    const ok = await signIn(jit, { sub: 'grace', email: 'grace@uni.example.edu', email_verified: true });
    const tokens = await tokensFor(codeOf(ok.done));
    const replay = await t.call('GET', ok.callback.pathname + ok.callback.search, { headers: browser });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already been completed');
    expect((await t.call('GET', '/api/users/me', { as: tokens.access_token })).body.email).toBe('grace@uni.example.edu');
  });

  it('refuses an id_token whose nonce is not the one sent, and a code issued to another client', async () => {
    const before = [userCount(), linkCount()];
    const wrongNonce = await signIn(jit, { sub: 'heidi', email: 'heidi@uni.example.edu', email_verified: true }, {
      beforeCallback: (cb) => {
        // The nonce we keep for this sign-in is not the one the provider put in the id_token.
        const hash = sha256(cb.searchParams.get('state')!);
        const handle = t.db.select().from(ssoHandles).where(eq(ssoHandles.hash, hash)).get()!;
        t.db.update(ssoHandles).set({ data: JSON.stringify({ ...JSON.parse(handle.data), nonce: 'another-nonce' }) }).where(eq(ssoHandles.hash, hash)).run();
      },
    });
    expect(errorOf(wrongNonce.done)).toBe('token_invalid');

    // A code the provider issued to the other connection's client, brought to this one's callback with this one's state.
    provider.signInAs({ sub: 'ivan', email: 'ivan@uni.example.edu', email_verified: true });
    const startOther = await t.call('GET', `/sso/default/${existingOnly}/login?return_to=${encodeURIComponent(`${APP}/signed-in?x=1`)}`);
    const otherCallback = new URL(await followToApp(startOther.headers.get('location')!, BASE));
    const startJit = await t.call('GET', `/sso/default/${jit}/login?return_to=${encodeURIComponent(`${APP}/signed-in?x=1`)}`);
    const jitCallback = new URL(await followToApp(startJit.headers.get('location')!, BASE));
    jitCallback.searchParams.set('code', otherCallback.searchParams.get('code')!);
    expect(errorOf(await t.call('GET', jitCallback.pathname + jitCallback.search))).toBe('token_invalid');
    expect([userCount(), linkCount()]).toEqual(before);
    expect((await t.call('GET', '/api/users/me', { as: t.admin })).status).toBe(200);
  });

  it('refuses a return_to outside PUBLIC_URL and FRONTEND_ORIGINS, an unknown or disabled connection, and a SAML connection at the OIDC callback', async () => {
    const handles = t.db.select().from(ssoHandles).all().length;
    const evil = await t.call('GET', `/sso/default/${jit}/login?return_to=${encodeURIComponent('https://evil.example.com/steal')}`, { headers: browser });
    expect(evil.status).toBe(400);
    expect(evil.text).toContain('not one this server may send you to');
    expect((await t.call('GET', `/sso/default/${jit}/login?return_to=${encodeURIComponent(`${BASE}/ok`)}`)).status).toBe(302);
    expect((await t.call('GET', `/sso/other-tenant/${jit}/login`)).status).toBe(404);
    expect((await t.call('PATCH', `/api/sso/connections/${existingOnly}`, { as: t.admin, body: { enabled: false } })).status).toBe(200);
    expect((await t.call('GET', `/sso/default/${existingOnly}/login`)).status).toBe(404);
    expect((await t.call('PATCH', `/api/sso/connections/${existingOnly}`, { as: t.admin, body: { enabled: true } })).status).toBe(200);
    const saml = await t.call('POST', '/api/sso/connections', {
      as: t.admin,
      body: { protocol: 'saml', name: 'SAML', idp_entity_id: 'urn:idp', idp_sso_url: 'https://idp.example.edu/sso', idp_certificates: [(await keypair()).certBase64] },
    });
    const samlCallback = await t.call('GET', `/sso/default/${saml.body.id}/oidc/callback?state=x&code=y`, { headers: browser });
    expect(samlCallback.status).toBe(400);
    expect(samlCallback.text).toContain('does not offer this step of signing in');
    expect(t.db.select().from(ssoHandles).all().length).toBe(handles + 1);
  });

  it('limits failed code exchanges per client address, as the password grant does', async () => {
    let last = 0;
    for (let i = 0; i < 45 && last !== 429; i++) last = (await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code: `wrong-${i}` } })).status;
    expect(last).toBe(429);
    const login = await t.call('GET', `/sso/default/${jit}/login`);
    expect(login.status).toBe(429);
    t.clock.advance(16 * 60_000);
    const tokens = await tokensFor(codeOf((await signIn(jit, { sub: 'judy', email: 'judy@uni.example.edu', email_verified: true })).done));
    expect((await t.call('GET', '/api/users/me', { as: tokens.access_token })).status).toBe(200);
  });
});
