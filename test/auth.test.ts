// Authentication: token grants, rate limits, refresh rotation and reuse detection, logout, JWKS,
// and every way a forged, stale or foreign credential must be refused.
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner } from '../src/auth/tokens';
import { ADMIN_EMAIL, ADMIN_PASSWORD, expectProblem, expectUnauthorized, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import {
  signWithForeignKey,
  signWithPublicKeyAsHmacSecret,
  signWithServerKey,
  standardClaims,
  unsignedToken,
  withTamperedPayload,
} from './helpers/jwt';

const MINUTE = 60_000;

describe('POST /api/auth/token: password grant', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('signs the admin in with access and refresh tokens that work', async () => {
    const res = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(typeof res.body.access_token).toBe('string');
    expect(typeof res.body.refresh_token).toBe('string');
    const claims = decodeJwt(res.body.access_token);
    expect(claims).toMatchObject({ sub: t.admin.user.id, tid: t.defaultTenantId, role: 'admin', aud: 'lms-api', iss: t.config.publicUrl });
    expect(claims.exp! - claims.iat!).toBe(900);

    const me = await t.call('GET', '/api/users/me', { as: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(t.admin.user.id);
  });

  it('stores no secret: the password as an scrypt hash, refresh tokens and API keys as SHA-256 digests', async () => {
    const password = 'stored-only-as-a-hash';
    const member = await t.newUser({ password });
    const signIn = await t.call('POST', '/api/auth/token', { body: { email: member.user.email, password } });
    expect(signIn.status).toBe(200);
    const created = await t.call('POST', '/api/api-keys', { as: member, body: { name: 'hashed' } });
    expect(created.status).toBe(201);
    const digest = (secret: string) => createHash('sha256').update(secret).digest('base64url');
    const sqlite = t.deps.sqlite;

    const { password_hash: passwordHash } = sqlite.prepare('SELECT password_hash FROM users WHERE id = ?').get(member.user.id) as { password_hash: string };
    expect(passwordHash).toMatch(/^scrypt\$\d+\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(passwordHash).not.toContain(password);

    const refreshRows = sqlite.prepare('SELECT * FROM refresh_tokens WHERE user_id = ?').all(member.user.id) as Record<string, unknown>[];
    expect(refreshRows.map((row) => row.token_hash)).toEqual([digest(signIn.body.refresh_token)]);
    expect(JSON.stringify(refreshRows)).not.toContain(signIn.body.refresh_token);

    const keyRows = sqlite.prepare('SELECT * FROM api_keys WHERE user_id = ?').all(member.user.id) as Record<string, unknown>[];
    expect(keyRows.map((row) => row.key_hash)).toEqual([digest(created.body.key)]);
    const secretPart = (created.body.key as string).split('_').slice(2).join('_');
    expect(JSON.stringify(keyRows)).not.toContain(secretPart);
  });

  it('treats the email case-insensitively', async () => {
    const res = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
  });

  it('answers a wrong password and an unknown email with the identical 401', async () => {
    const wrongPassword = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL, password: 'not-the-password' } });
    const unknownEmail = await t.call('POST', '/api/auth/token', { body: { email: 'nobody@example.com', password: 'not-the-password' } });
    expectUnauthorized(wrongPassword);
    expectUnauthorized(unknownEmail);
    expect(unknownEmail.text).toBe(wrongPassword.text);
    expect(wrongPassword.body).toEqual({
      type: 'urn:lms:problem:unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: 'Invalid credentials',
      code: 'unauthorized',
    });
  });

  it('refuses an account that has no password yet', async () => {
    const { user } = await t.newUser();
    const res = await t.call('POST', '/api/auth/token', { body: { email: user.email, password: 'anything-at-all' } });
    expectUnauthorized(res);
  });

  it('signs in where the password belongs when the same email exists in two tenants; the tenant slug picks one', async () => {
    const other = await t.newTenant('acme');
    const email = 'shared.person@example.com';
    const inDefault = await t.newUser({ email, password: 'default-pass-1' });
    const inAcme = await t.newUser({ email, password: 'acme-pass-123', tenantId: other.tenantId });

    // Another tenant creating an account with this email does not lock the first one out.
    const byPassword = await t.call('POST', '/api/auth/token', { body: { email, password: 'default-pass-1' } });
    expect(byPassword.status).toBe(200);
    expect(decodeJwt(byPassword.body.access_token)).toMatchObject({ sub: inDefault.user.id, tid: t.defaultTenantId });
    const acmeByPassword = await t.call('POST', '/api/auth/token', { body: { email, password: 'acme-pass-123' } });
    expect(decodeJwt(acmeByPassword.body.access_token)).toMatchObject({ sub: inAcme.user.id, tid: other.tenantId });
    expectUnauthorized(await t.call('POST', '/api/auth/token', { body: { email, password: 'neither-of-them' } }));

    const defaultSignIn = await t.call('POST', '/api/auth/token', { body: { email, password: 'default-pass-1', tenant: 'default' } });
    expect(defaultSignIn.status).toBe(200);
    expect(decodeJwt(defaultSignIn.body.access_token)).toMatchObject({ sub: inDefault.user.id, tid: t.defaultTenantId });

    const acmeSignIn = await t.call('POST', '/api/auth/token', { body: { email, password: 'acme-pass-123', tenant: 'acme' } });
    expect(acmeSignIn.status).toBe(200);
    expect(decodeJwt(acmeSignIn.body.access_token)).toMatchObject({ sub: inAcme.user.id, tid: other.tenantId });

    // The password of one tenant's account does not open the other's.
    expectUnauthorized(await t.call('POST', '/api/auth/token', { body: { email, password: 'default-pass-1', tenant: 'acme' } }));
    expectUnauthorized(await t.call('POST', '/api/auth/token', { body: { email, password: 'default-pass-1', tenant: 'no-such-tenant' } }));
  });

  it('asks for the tenant when one password opens accounts in two tenants', async () => {
    const other = await t.newTenant('twin');
    const email = 'same.password@example.com';
    await t.newUser({ email, password: 'one-password-1' });
    const inTwin = await t.newUser({ email, password: 'one-password-1', tenantId: other.tenantId });

    const ambiguous = await t.call('POST', '/api/auth/token', { body: { email, password: 'one-password-1' } });
    expectProblem(ambiguous, 400, 'validation_failed');
    expect(ambiguous.body.errors).toEqual([{ path: 'tenant', message: 'required: the email and password match accounts in several tenants' }]);
    const named = await t.call('POST', '/api/auth/token', { body: { email, password: 'one-password-1', tenant: 'twin' } });
    expect(decodeJwt(named.body.access_token)).toMatchObject({ sub: inTwin.user.id, tid: other.tenantId });
    // Without the password, nothing tells that the email is in two tenants.
    expectUnauthorized(await t.call('POST', '/api/auth/token', { body: { email, password: 'wrong-password-1' } }));
  });

  it('rejects malformed grants with 400', async () => {
    for (const body of [
      {},
      { email: ADMIN_EMAIL },
      { email: 'not-an-email', password: 'x' },
      { email: ADMIN_EMAIL, password: '' },
      { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, extra: true },
      { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, api_key: 'lms_x' },
    ]) {
      const res = await t.call('POST', '/api/auth/token', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    // A body that is neither grant says what a grant is; one that is nearly a grant names its field.
    const neither = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, api_key: 'lms_x' } });
    expect(neither.body.errors).toEqual([{ path: '(root)', message: 'send {email, password} (with tenant when asked for it), {api_key} or {grant_type: "sso_code", code}, with nothing else' }]);
    const badEmail = await t.call('POST', '/api/auth/token', { body: { email: 'not-an-email', password: 'x' } });
    expect(badEmail.body.errors).toEqual([{ path: 'email', message: 'Invalid email address' }]);
  });
});

describe('POST /api/auth/token: failed sign-ins are rate limited', () => {
  let t: TestApp;
  const fromIp = (ip: string) => ({ 'X-Forwarded-For': ip });
  const signIn = (email: string, password: string, ip: string) =>
    t.call('POST', '/api/auth/token', { body: { email, password }, headers: fromIp(ip) });

  beforeAll(async () => {
    t = await makeTestApp({
      config: { signInMaxFailures: 3, signInMaxFailuresPerIp: 5, signInWindowSeconds: 60, trustProxy: 'true' },
    });
  });
  afterAll(() => t.close());

  it('locks an account after repeated failures, from any address, until the window passes', async () => {
    const { user } = await t.newUser({ password: 'right-password' });
    for (let i = 0; i < 3; i++) expect((await signIn(user.email, 'wrong-password', '10.0.0.1')).status).toBe(401);

    const locked = await signIn(user.email, 'right-password', '10.0.0.1');
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('rate_limited');
    expect(locked.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(60);

    // Another address does not reset the account's count.
    expect((await signIn(user.email, 'right-password', '10.0.0.2')).status).toBe(429);
    // Naming the tenant is the same account, not a fresh counter.
    const withTenant = await t.call('POST', '/api/auth/token', {
      body: { email: user.email, password: 'right-password', tenant: 'default' },
      headers: fromIp('10.0.0.3'),
    });
    expect(withTenant.status).toBe(429);

    t.clock.advance(30_000);
    const later = await signIn(user.email, 'right-password', '10.0.0.1');
    expect(later.status).toBe(429);
    expect(Number(later.headers.get('retry-after'))).toBeLessThanOrEqual(30);

    t.clock.advance(31_000);
    expect((await signIn(user.email, 'right-password', '10.0.0.1')).status).toBe(200);
  });

  it('does not lock other accounts signing in from the same address', async () => {
    const victim = await t.newUser({ password: 'victim-password' });
    const bystander = await t.newUser({ password: 'bystander-password' });
    for (let i = 0; i < 3; i++) await signIn(victim.user.email, 'wrong-password', '10.0.1.1');
    expect((await signIn(victim.user.email, 'victim-password', '10.0.1.1')).status).toBe(429);
    expect((await signIn(bystander.user.email, 'bystander-password', '10.0.1.1')).status).toBe(200);
  });

  it('forgives earlier failures after a successful sign-in', async () => {
    const { user } = await t.newUser({ password: 'right-password' });
    for (let i = 0; i < 2; i++) await signIn(user.email, 'wrong-password', '10.0.2.1');
    expect((await signIn(user.email, 'right-password', '10.0.2.1')).status).toBe(200);
    for (let i = 0; i < 2; i++) await signIn(user.email, 'wrong-password', '10.0.2.2');
    expect((await signIn(user.email, 'right-password', '10.0.2.3')).status).toBe(200);
  });

  it('limits one address trying many accounts, until the window passes', async () => {
    const { user } = await t.newUser({ password: 'right-password' });
    for (let i = 0; i < 5; i++) expect((await signIn(`guess${i}@example.com`, 'wrong-password', '10.0.3.1')).status).toBe(401);

    const blocked = await signIn(user.email, 'right-password', '10.0.3.1');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // The account itself is fine from elsewhere.
    expect((await signIn(user.email, 'right-password', '10.0.3.2')).status).toBe(200);

    t.clock.advance(61_000);
    expect((await signIn(user.email, 'right-password', '10.0.3.1')).status).toBe(200);
  });

  it('counts bad API keys against the address too', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.call('POST', '/api/auth/token', { body: { api_key: `lms_bad_${i}` }, headers: fromIp('10.0.4.1') });
      expect(res.status).toBe(401);
    }
    const blocked = await t.call('POST', '/api/auth/token', { body: { api_key: 'lms_bad_again' }, headers: fromIp('10.0.4.1') });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).not.toBeNull();
  });
});

describe('POST /api/auth/token: the address a limit counts', () => {
  let t: TestApp;
  beforeAll(async () => {
    // TRUST_PROXY off, as by default: no proxy in front, so X-Forwarded-For is the client's own word.
    t = await makeTestApp({ config: { signInMaxFailures: 3, signInMaxFailuresPerIp: 5, signInWindowSeconds: 60 } });
  });
  afterAll(() => t.close());

  it('ignores X-Forwarded-For unless a proxy is trusted: a forged header does not escape the limit', async () => {
    const { user } = await t.newUser({ password: 'right-password' });
    for (let i = 0; i < 5; i++) {
      const res = await t.call('POST', '/api/auth/token', {
        body: { email: `guess${i}@example.com`, password: 'wrong-password' },
        headers: { 'X-Forwarded-For': `192.0.2.${i}` },
      });
      expect(res.status).toBe(401);
    }
    const blocked = await t.call('POST', '/api/auth/token', {
      body: { email: user.email, password: 'right-password' },
      headers: { 'X-Forwarded-For': '198.51.100.7' },
    });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('POST /api/auth/token: API-key grant', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('exchanges an API key for an access token without a refresh token', async () => {
    const member = await t.newUser();
    const { key } = await t.newApiKey(member);
    const res = await t.call('POST', '/api/auth/token', { body: { api_key: key } });
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(decodeJwt(res.body.access_token)).toMatchObject({ sub: member.user.id, tid: t.defaultTenantId, role: 'member' });
    const me = await t.call('GET', '/api/users/me', { as: res.body.access_token });
    expect(me.body.id).toBe(member.user.id);
  });

  it('answers an unknown key and a deleted key with the same 401 as a wrong password', async () => {
    const member = await t.newUser();
    const created = await t.newApiKey(member);
    expect((await t.call('DELETE', `/api/api-keys/${created.id}`, { as: member })).status).toBe(204);

    const deleted = await t.call('POST', '/api/auth/token', { body: { api_key: created.key } });
    const unknown = await t.call('POST', '/api/auth/token', { body: { api_key: 'lms_000000000000_nope' } });
    const notAKey = await t.call('POST', '/api/auth/token', { body: { api_key: 'something-else' } });
    const wrongPassword = await t.call('POST', '/api/auth/token', { body: { email: ADMIN_EMAIL, password: 'nope-nope' } });
    for (const res of [deleted, unknown, notAKey]) {
      expectUnauthorized(res);
      expect(res.text).toBe(wrongPassword.text);
    }
  });

  it('the token lives only as long as its key: deleting or expiring the key ends it at once', async () => {
    const member = await t.newUser();
    const deleted = await t.newApiKey(member);
    const fromDeleted = (await t.call('POST', '/api/auth/token', { body: { api_key: deleted.key } })).body.access_token;
    expect(decodeJwt(fromDeleted).akid).toBe(deleted.id);
    expect((await t.call('GET', '/api/users/me', { as: fromDeleted })).status).toBe(200);
    await t.call('DELETE', `/api/api-keys/${deleted.id}`, { as: member });
    expectUnauthorized(await t.call('GET', '/api/users/me', { as: fromDeleted }));

    const expiring = await t.newApiKey(member, { expires_at: new Date(t.clock.now().getTime() + 5 * MINUTE).toISOString() });
    const fromExpiring = (await t.call('POST', '/api/auth/token', { body: { api_key: expiring.key } })).body.access_token;
    expect((await t.call('GET', '/api/users/me', { as: fromExpiring })).status).toBe(200);
    t.clock.advance(5 * MINUTE + 1000);
    expectUnauthorized(await t.call('GET', '/api/users/me', { as: fromExpiring }));
  });

  it('does not accept an access token as an API key', async () => {
    const res = await t.call('POST', '/api/auth/token', { body: { api_key: t.admin.token } });
    expectUnauthorized(res);
  });
});

describe('POST /api/auth/refresh and /api/auth/logout', () => {
  let t: TestApp;
  let member: TestUser;
  const password = 'member-password';
  const refresh = (token: string) => t.call('POST', '/api/auth/refresh', { body: { refresh_token: token } });

  beforeAll(async () => {
    t = await makeTestApp();
    member = await t.newUser({ password });
  });
  afterAll(() => t.close());

  it('rotates: each refresh gives a new pair, and the new access token works', async () => {
    const first = await t.signIn(member.user.email, password);
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    expect((await t.call('GET', '/api/users/me', { as: second.body.access_token })).body.id).toBe(member.user.id);

    const third = await refresh(second.body.refresh_token);
    expect(third.status).toBe(200);
  });

  it('reusing a used refresh token fails and revokes its whole family, newest token included', async () => {
    const first = await t.signIn(member.user.email, password);
    const other = await t.signIn(member.user.email, password);
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);

    expectUnauthorized(await refresh(first.refresh_token));
    // The legitimate holder's newest token died with the family.
    expectUnauthorized(await refresh(second.body.refresh_token));
    // Another session (another family) is untouched.
    expect((await refresh(other.refresh_token)).status).toBe(200);
  });

  it('refuses unknown and expired refresh tokens', async () => {
    expectUnauthorized(await refresh('not-a-real-refresh-token'));
    const session = await t.signIn(member.user.email, password);
    t.clock.advance(30 * 24 * 60 * MINUTE + 1000);
    expectUnauthorized(await refresh(session.refresh_token));
  });

  it('rejects a malformed refresh body with 400', async () => {
    expect((await t.call('POST', '/api/auth/refresh', { body: {} })).status).toBe(400);
    expect((await t.call('POST', '/api/auth/refresh', { body: { refresh_token: '' } })).status).toBe(400);
    expect((await t.call('POST', '/api/auth/refresh', { body: { refresh_token: 42 } })).status).toBe(400);
  });

  it('logout ends the session: its refresh tokens stop working', async () => {
    const first = await t.signIn(member.user.email, password);
    const second = await refresh(first.refresh_token);
    const res = await t.call('POST', '/api/auth/logout', { body: { refresh_token: second.body.refresh_token } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectUnauthorized(await refresh(second.body.refresh_token));
  });

  it('logout is idempotent and needs no access token', async () => {
    expect((await t.call('POST', '/api/auth/logout', { body: { refresh_token: 'never-issued' } })).status).toBe(204);
    const session = await t.signIn(member.user.email, password);
    expect((await t.call('POST', '/api/auth/logout', { body: { refresh_token: session.refresh_token } })).status).toBe(204);
    expect((await t.call('POST', '/api/auth/logout', { body: { refresh_token: session.refresh_token } })).status).toBe(204);
    expect((await t.call('POST', '/api/auth/logout', { body: {} })).status).toBe(400);
  });
});

describe('GET /.well-known/jwks.json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('publishes public keys only, which verify the access tokens', async () => {
    const res = await t.call<{ keys: JWK[] }>('GET', '/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys.length).toBeGreaterThan(0);
    for (const key of res.body.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key.kid).toBeTruthy();
      expect(key.d).toBeUndefined();
    }
    const { access_token } = await t.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const { payload, protectedHeader } = await jwtVerify(access_token, createLocalJWKSet(res.body), {
      issuer: t.config.publicUrl,
      audience: 'lms-api',
      algorithms: ['ES256'],
      currentDate: t.clock.now(),
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: t.admin.user.id, tid: t.defaultTenantId, role: 'admin' });
  });

  it('keeps its signing key: a signer loaded again from the same database verifies earlier tokens', async () => {
    const reloaded = await TokenSigner.load(t.db, { issuer: t.config.publicUrl, ttlSeconds: 900, clock: t.clock });
    expect(reloaded.jwks()).toEqual(t.deps.signer.jwks());
    expect(await reloaded.verify(t.admin.token)).toMatchObject({ sub: t.admin.user.id, tid: t.defaultTenantId });
  });
});

describe('the caller behind a credential', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it('is one frozen actor per user for access tokens, replaced (not changed) after a write to the user', async () => {
    const member = await t.newUser({ name: 'Shared Actor' });
    const auth = t.deps.auth;
    const first = await auth.authenticate(member.token);
    const again = await auth.authenticate(await t.tokenFor(member.user));
    expect(first).not.toBeNull();
    // Every open WebSocket keeps its caller's actor: one per user, not one per connection.
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { role: string }).role = 'admin';
    }).toThrow(TypeError);

    const renamed = await t.call('PATCH', `/api/users/${member.user.id}`, { as: t.admin, body: { name: 'Renamed Actor' } });
    expect(renamed.status).toBe(200);
    const after = await auth.authenticate(member.token);
    expect(after).not.toBe(first);
    expect(after).toMatchObject({ userId: member.user.id, name: 'Renamed Actor', via: 'jwt' });
    expect(first).toMatchObject({ name: 'Shared Actor' });
    expect(auth.recheck(first!)).toBe(after);
  });

  it('is an actor of its own for an API key, naming the key', async () => {
    const member = await t.newUser();
    const { key, id } = await t.newApiKey(member);
    const viaKey = await t.deps.auth.authenticate(key);
    expect(viaKey).toMatchObject({ userId: member.user.id, via: 'api_key', apiKeyId: id });
    expect(viaKey).not.toBe(await t.deps.auth.authenticate(member.token));
  });
});

describe('credentials that must be refused', () => {
  let t: TestApp;
  let member: TestUser;
  beforeAll(async () => {
    t = await makeTestApp();
    member = await t.newUser();
  });
  afterAll(() => t.close());

  const me = (credential?: string, headers: Record<string, string> = {}) =>
    t.call('GET', '/api/users/me', { ...(credential ? { as: credential } : {}), headers });

  it('accepts the control: a token built by hand exactly like the server builds them', async () => {
    const token = await signWithServerKey(t, { claims: standardClaims(t, member.user) });
    const res = await me(token);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(member.user.id);
  });

  it('401 without a credential', async () => {
    const res = await me();
    expectUnauthorized(res);
    expect(res.body.detail).toMatch(/Authentication required/);
  });

  it('401 with garbage or a malformed Authorization header', async () => {
    expectUnauthorized(await me('garbage'));
    expectUnauthorized(await me('a.b.c'));
    expectUnauthorized(await me(undefined, { Authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` }));
    expectUnauthorized(await me(undefined, { Authorization: 'Bearer' }));
    expectUnauthorized(await me(undefined, { Authorization: `Bearer ${member.token} extra` }));
    expectUnauthorized(await me(undefined, { 'X-API-Key': 'lms_garbage' }));
    expectUnauthorized(await me(undefined, { 'X-API-Key': member.token }));
  });

  it('401 once the access token has expired, even after it was accepted (and cached) before', async () => {
    const { access_token } = await t.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    expect((await me(access_token)).status).toBe(200);
    t.clock.advance(14 * MINUTE);
    expect((await me(access_token)).status).toBe(200);
    t.clock.advance(MINUTE + 1000);
    expectUnauthorized(await me(access_token));
  });

  it('401 for an expired token never seen before', async () => {
    const token = await t.tokenFor(member.user);
    t.clock.advance(15 * MINUTE + 1000);
    expectUnauthorized(await me(token));
  });

  it('401 with a tampered payload (another user, a raised role, a later expiry)', async () => {
    const other = await t.newUser();
    const token = await t.tokenFor(member.user);
    expectUnauthorized(await me(withTamperedPayload(token, (c) => (c.sub = other.user.id))));
    expectUnauthorized(await me(withTamperedPayload(token, (c) => (c.role = 'admin'))));
    expectUnauthorized(await me(withTamperedPayload(token, (c) => (c.exp = Number(c.exp) + 3600))));
    // The untouched token still works: the refusals are about the tampering.
    expect((await me(token)).status).toBe(200);
  });

  it('401 with alg none', async () => {
    expectUnauthorized(await me(unsignedToken(standardClaims(t, member.user), t)));
  });

  it('401 with HS256 signed with the public key (algorithm confusion)', async () => {
    expectUnauthorized(await me(await signWithPublicKeyAsHmacSecret(t, standardClaims(t, member.user))));
  });

  it('401 with a token signed by another key', async () => {
    expectUnauthorized(await me(await signWithForeignKey(t, standardClaims(t, member.user))));
  });

  it('401 with a wrong audience, issuer, type, or missing claims', async () => {
    const base = () => standardClaims(t, member.user);
    expectUnauthorized(await me(await signWithServerKey(t, { claims: { ...base(), aud: 'some-other-api' } })));
    expectUnauthorized(await me(await signWithServerKey(t, { claims: { ...base(), iss: 'https://evil.example.com' } })));
    expectUnauthorized(await me(await signWithServerKey(t, { claims: base(), header: { typ: 'JWT' } })));
    const noExp = base();
    delete noExp.exp;
    expectUnauthorized(await me(await signWithServerKey(t, { claims: noExp })));
    const noTenant = base();
    delete noTenant.tid;
    expectUnauthorized(await me(await signWithServerKey(t, { claims: noTenant })));
  });

  it('401 with a token whose tenant claim does not match the user', async () => {
    const other = await t.newTenant('elsewhere');
    const token = await signWithServerKey(t, { claims: { ...standardClaims(t, member.user), tid: other.tenantId } });
    expectUnauthorized(await me(token));
  });

  it('401 with a token for a user that does not exist', async () => {
    const token = await signWithServerKey(t, { claims: { ...standardClaims(t, member.user), sub: crypto.randomUUID() } });
    expectUnauthorized(await me(token));
  });
});
