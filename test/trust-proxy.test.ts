// Behind a reverse proxy: TRUST_PROXY decides whose X-Forwarded-For / Forwarded is believed, over a
// real socket (the connection's address is what a proxy is recognised by). The client address
// reaches the sign-in rate limit, the access log and the sessions (refresh tokens); the scheme and host a trusted proxy forwards
// make the links (CASE URIs) unless PUBLIC_URL is set.
import { Writable } from 'node:stream';
import { asc } from 'drizzle-orm';
import { refreshTokens } from '../db/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, buildConfig, loadConfig } from '../src/config';
import type { ConfigInput } from '../src/config';
import { startHttpServer, type RunningServer } from '../src/http-server';
import { createLogger } from '../src/logger';
import { ADMIN_EMAIL, ADMIN_PASSWORD, makeTestApp, type TestApp } from './helpers/app';

describe('TRUST_PROXY', () => {
  it('is off by default; true is the nearest hop; a count; addresses and CIDRs; anything else names the variable', () => {
    expect(loadConfig({}, []).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }, []).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }, []).trustProxy).toEqual({ hops: 1 });
    expect(loadConfig({ TRUST_PROXY: '2' }, []).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,fd00::/8, loopback' }, []).trustProxy).toEqual({
      proxies: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'loopback'],
    });
    for (const bad of ['proxy.example.org', '10.0.0.0/33', '10.0.0.1/8/2', '100']) {
      let error: unknown;
      try {
        loadConfig({ TRUST_PROXY: bad }, []);
      } catch (err) {
        error = err;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect(String((error as Error).message)).toMatch(/TRUST_PROXY/);
    }
  });
});

describe('PUBLIC_URL', () => {
  it('defaults to http://localhost:<PORT>', () => {
    expect(loadConfig({ PORT: '8081' }, [])).toMatchObject({ publicUrl: 'http://localhost:8081', publicUrlSet: false });
    expect(loadConfig({}, ['--port', '4000'])).toMatchObject({ publicUrl: 'http://localhost:4000', publicUrlSet: false });
    expect(buildConfig({ publicUrl: 'https://lms.example.org' })).toMatchObject({ publicUrl: 'https://lms.example.org', publicUrlSet: true });
  });
});

/** The app on a real socket on 127.0.0.1, with its access log captured. */
async function serve(config: ConfigInput) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const t = await makeTestApp({ config: { signInMaxFailures: 100, signInMaxFailuresPerIp: 3, ...config }, logger: createLogger('info', sink) });
  const running = await startHttpServer({ app: t.app, port: 0, host: '127.0.0.1', shutdownTimeoutMs: 1_000 });
  opened.push({ t, running });
  const base = `http://127.0.0.1:${running.port}`;
  const signIn = (headers: Record<string, string>, password = 'wrong-password') =>
    fetch(`${base}/api/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ email: ADMIN_EMAIL, password }),
    });
  /** The address the access log gave the request with this id. */
  const loggedIp = async (headers: Record<string, string>) => {
    const id = crypto.randomUUID();
    await fetch(`${base}/api/health`, { headers: { ...headers, 'X-Request-Id': id } });
    return lines.find((l) => l.requestId === id)?.ip as string | undefined;
  };
  return { t, base, signIn, loggedIp };
}

const opened: { t: TestApp; running: RunningServer }[] = [];
afterEach(async () => {
  for (const { t, running } of opened.splice(0)) {
    await running.close();
    t.close();
  }
});

describe('the client address over a real connection', () => {
  it('off: X-Forwarded-For and Forwarded are ignored; every client is its connection', async () => {
    const s = await serve({});
    expect(await s.loggedIp({ 'X-Forwarded-For': '203.0.113.7' })).toBe('127.0.0.1');
    expect(await s.loggedIp({ Forwarded: 'for=203.0.113.7' })).toBe('127.0.0.1');
    // Naming a new address each time buys no fresh attempts.
    for (let i = 0; i < 3; i++) expect((await s.signIn({ 'X-Forwarded-For': `198.51.100.${i}` })).status).toBe(401);
    expect((await s.signIn({ 'X-Forwarded-For': '198.51.100.99' }, ADMIN_PASSWORD)).status).toBe(429);
  });

  it('from a trusted proxy: the forwarded client, walked back past trusted hops only; each client limited on its own', async () => {
    const s = await serve({ trustProxy: '127.0.0.1, 10.0.0.0/8' });
    expect(await s.loggedIp({ 'X-Forwarded-For': '203.0.113.7' })).toBe('203.0.113.7');
    // What the client itself put first is not believed: the nearest untrusted hop is the client.
    expect(await s.loggedIp({ 'X-Forwarded-For': '1.2.3.4, 203.0.113.7, 10.1.2.3' })).toBe('203.0.113.7');
    expect(await s.loggedIp({ Forwarded: 'for="[2001:db8::1]:4711";proto=https' })).toBe('2001:db8::1');
    expect(await s.loggedIp({ 'X-Forwarded-For': 'not-an-address' })).toBe('unknown');
    expect(await s.loggedIp({})).toBe('127.0.0.1');

    for (let i = 0; i < 3; i++) expect((await s.signIn({ 'X-Forwarded-For': '203.0.113.50' })).status).toBe(401);
    expect((await s.signIn({ 'X-Forwarded-For': '203.0.113.50' }, ADMIN_PASSWORD)).status).toBe(429);
    // The rest of the school, behind the same proxy, is not locked out.
    expect((await s.signIn({ 'X-Forwarded-For': '203.0.113.51' }, ADMIN_PASSWORD)).status).toBe(200);
  });

  it('a session (refresh token) keeps the address that signed in, and the one that refreshed it', async () => {
    const s = await serve({ trustProxy: 'loopback' });
    const signedIn = await s.signIn({ 'X-Forwarded-For': '203.0.113.60' }, ADMIN_PASSWORD);
    expect(signedIn.status).toBe(200);
    const first = (await signedIn.json()) as { refresh_token: string };
    const refreshed = await fetch(`${s.base}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '203.0.113.61' },
      body: JSON.stringify({ refresh_token: first.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    const stored = s.t.db.select().from(refreshTokens).orderBy(asc(refreshTokens.createdAt), asc(refreshTokens.id)).all();
    expect(stored.map((r) => r.clientIp)).toEqual(['203.0.113.60', '203.0.113.61']);
  });

  it('from a connection that is not a trusted proxy: the headers are ignored', async () => {
    const s = await serve({ trustProxy: '10.9.9.9' });
    expect(await s.loggedIp({ 'X-Forwarded-For': '203.0.113.7' })).toBe('127.0.0.1');
  });

  it('true, or a hop count: that many nearest hops are trusted whatever their address', async () => {
    const one = await serve({ trustProxy: 'true' });
    expect(await one.loggedIp({ 'X-Forwarded-For': '1.2.3.4, 203.0.113.7' })).toBe('203.0.113.7');
    const two = await serve({ trustProxy: '2' });
    expect(await two.loggedIp({ 'X-Forwarded-For': '1.2.3.4, 203.0.113.7, 10.0.0.2' })).toBe('203.0.113.7');
    expect(await two.loggedIp({ 'X-Forwarded-For': '203.0.113.8' })).toBe('203.0.113.8');
  });
});

describe('links', () => {
  async function casePackageUri(s: Awaited<ReturnType<typeof serve>>, headers: Record<string, string>) {
    const token = s.t.admin.token;
    const created = await s.t.call('POST', '/api/competencies/frameworks', { as: s.t.admin, body: { title: 'Links' } });
    expect(created.status).toBe(201);
    const res = await fetch(`${s.base}/api/competencies/frameworks/${created.body.id}/case`, { headers: { ...headers, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { CFDocument: { uri: string } }).CFDocument.uri;
  }

  it('follow the scheme and host a trusted proxy forwards, and PUBLIC_URL when it is set', async () => {
    const proxied = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'lms.example.org', 'X-Forwarded-For': '203.0.113.7' };
    const trusted = await serve({ trustProxy: 'loopback' });
    expect(await casePackageUri(trusted, proxied)).toMatch(/^https:\/\/lms\.example\.org\/api\/competencies\/frameworks\//);
    expect(await casePackageUri(trusted, { Forwarded: 'for=203.0.113.7;proto=https;host=school.example.org' })).toMatch(
      /^https:\/\/school\.example\.org\/api\//,
    );

    const untrusted = await serve({});
    expect(await casePackageUri(untrusted, proxied)).toMatch(/^http:\/\/localhost:3000\/api\//);

    const fixed = await serve({ trustProxy: 'loopback', publicUrl: 'https://learn.example.org/' });
    expect(await casePackageUri(fixed, proxied)).toMatch(/^https:\/\/learn\.example\.org\/api\//);
    const openapi = (await (await fetch(`${fixed.base}/api/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(openapi.servers[0]!.url).toBe('https://learn.example.org/');
  });
});
