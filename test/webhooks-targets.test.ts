// What a webhook may target: https:// only unless WEBHOOK_ALLOW_HTTP, and never an address that is
// not public unless WEBHOOK_ALLOW_PRIVATE_TARGETS, checked at creation and again at delivery (DNS
// rebinding), with the connection made to the checked address. Redirects are not followed and
// answers are read up to 64 KiB.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSubscriptions } from '../db/schema';
import { isPublicAddress, systemResolver, type Resolver } from '../src/webhooks/targets';
import { expectProblem, makeTestApp, type TestApp, type TestUser } from './helpers/app';
import { emitEvent, startReceiver, type Receiver } from './helpers/webhooks';

const PUBLIC = '93.184.216.34';

/** Fake DNS for made-up names; everything else (localhost) through the system's resolver. */
let rebindAnswer = PUBLIC;
const resolver: Resolver = async (host) => {
  switch (host) {
    case 'loopback.test':
      return [{ address: '127.0.0.1', family: 4 }];
    case 'mixed.test':
      return [
        { address: PUBLIC, family: 4 },
        { address: '10.0.0.5', family: 4 },
      ];
    case 'public.test':
      return [{ address: PUBLIC, family: 4 }];
    case 'rebind.test':
      return [{ address: rebindAnswer, family: 4 }];
    case 'pinned.test':
      return [{ address: '127.0.0.1', family: 4 }];
    default:
      return systemResolver(host);
  }
};

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, CGNAT, multicast, unspecified, documentation and IPv4-mapped forms of them', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.2.1',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:a00:1',
      '::ffff:169.254.169.254',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '2001:db8::1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('accepts public unicast addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });
});

describe('webhook targets when private targets are not allowed', () => {
  let t: TestApp;
  let admin: TestUser;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await makeTestApp({ config: { webhookAllowHttp: 'true' }, webhooks: { resolver, timeoutMs: 2_000 } });
    admin = await t.newUser({ role: 'admin' });
    receiver = await startReceiver(t.clock);
  });
  afterAll(async () => {
    await receiver.close();
    t.close();
  });

  it.each([
    'http://127.0.0.1/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://localhost:8080/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[fe80::1]/hook',
    'http://0.0.0.0/hook',
    'http://100.64.0.1/hook',
    'http://192.168.0.10/hook',
    'http://2130706433/hook', // 127.0.0.1 as one number
    'http://0x7f.1/hook',
    'http://loopback.test/hook', // a name that resolves to loopback
    'http://mixed.test/hook', // one public address and one private: refused
  ])('refuses %s with a 422 naming the url, creating nothing', async (url) => {
    const before = t.db.select().from(webhookSubscriptions).all().length;
    const res = await t.call('POST', '/api/webhooks', { as: admin, body: { url } });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors[0].path).toBe('url');
    expect(res.body.errors[0].message).toMatch(/not a public address/);
    expect(t.db.select().from(webhookSubscriptions).all()).toHaveLength(before);
  });

  it('refuses a URL with credentials, and a change of URL to a private address', async () => {
    expectProblem(await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'https://user:pw@public.test/hook' } }), 422, 'validation_failed');
    const ok = await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'https://public.test/hook' } });
    expect(ok.status, ok.text).toBe(201);
    expectProblem(await t.call('PATCH', `/api/webhooks/${ok.body.id}`, { as: admin, body: { url: 'http://10.1.2.3/' } }), 422, 'validation_failed');
    expect((await t.call('GET', `/api/webhooks/${ok.body.id}`, { as: admin })).body.url).toBe('https://public.test/hook');
    await t.call('DELETE', `/api/webhooks/${ok.body.id}`, { as: admin });
  });

  it('checks again at delivery: a name that now resolves to loopback (rebinding) gets nothing sent', async () => {
    rebindAnswer = PUBLIC;
    const created = await t.call('POST', '/api/webhooks', { as: admin, body: { url: `http://rebind.test:${receiver.port}/hook` } });
    expect(created.status, created.text).toBe(201);
    rebindAnswer = '127.0.0.1';
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 1, total_xp: 1 });
    await t.deps.webhooks.drain();
    expect(receiver.received).toEqual([]);
    const log = (await t.call('GET', `/api/webhooks/${created.body.id}/deliveries`, { as: admin })).body.data[0];
    expect(log).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(log.last_error).toMatch(/^refused: the host rebind\.test resolves to 127\.0\.0\.1/);
    // The test message is refused the same way.
    const test = await t.call('POST', `/api/webhooks/${created.body.id}/test`, { as: admin });
    expect(test.body).toMatchObject({ status: 'failed', last_status_code: null });
    expect(receiver.received).toEqual([]);
    await t.call('DELETE', `/api/webhooks/${created.body.id}`, { as: admin });
  });
});

describe('webhook targets: scheme', () => {
  it('accepts only https:// unless WEBHOOK_ALLOW_HTTP', async () => {
    const t = await makeTestApp({ webhooks: { resolver } });
    try {
      const admin = await t.newUser({ role: 'admin' });
      const http = await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'http://public.test/hook' } });
      expectProblem(http, 422, 'validation_failed');
      expect(http.body.detail).toMatch(/https/);
      for (const url of ['ftp://public.test/x', 'file:///etc/passwd', 'javascript:alert(1)']) {
        expectProblem(await t.call('POST', '/api/webhooks', { as: admin, body: { url } }), 422, 'validation_failed');
      }
      expect((await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'https://public.test/hook' } })).status).toBe(201);
      // A name that does not resolve yet is accepted; every delivery checks it again.
      expect((await t.call('POST', '/api/webhooks', { as: admin, body: { url: 'https://not-yet.invalid/hook' } })).status).toBe(201);
    } finally {
      t.close();
    }
  });
});

describe('webhook connections', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await makeTestApp({ config: { webhookAllowHttp: 'true', webhookAllowPrivateTargets: 'true' }, webhooks: { resolver, timeoutMs: 2_000 } });
    admin = await t.newUser({ role: 'admin' });
  });
  afterAll(() => t.close());

  async function deliverOne(url: string) {
    const created = await t.call('POST', '/api/webhooks', { as: admin, body: { url } });
    expect(created.status, created.text).toBe(201);
    emitEvent(t.db, t.clock, t.defaultTenantId, 'level.reached', { user_id: admin.user.id, level: 1, total_xp: 1 });
    await t.deps.webhooks.drain();
    const log = (await t.call('GET', `/api/webhooks/${created.body.id}/deliveries`, { as: admin })).body.data[0];
    await t.call('DELETE', `/api/webhooks/${created.body.id}`, { as: admin });
    return log;
  }

  it('connects to the address it resolved and checked, sending the URL host as Host', async () => {
    const receiver = await startReceiver(t.clock);
    try {
      const log = await deliverOne(`http://pinned.test:${receiver.port}/hook`);
      expect(log.status).toBe('succeeded');
      expect(receiver.received[0]!.headers.host).toBe(`pinned.test:${receiver.port}`);
    } finally {
      await receiver.close();
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt and the redirect target gets nothing', async () => {
    const target = await startReceiver(t.clock);
    const redirecting = await startReceiver(t.clock);
    redirecting.fallback = { status: 302, headers: { Location: target.url } };
    try {
      const log = await deliverOne(redirecting.url);
      expect(log).toMatchObject({ status: 'pending', last_status_code: 302, last_error: 'redirect (302) not followed' });
      expect(redirecting.received).toHaveLength(1);
      expect(target.received).toEqual([]);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('reads at most 64 KiB of an answer: an endless body does not hold the attempt', async () => {
    let written = 0;
    const endless = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.byteLength;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const port = (endless.address() as AddressInfo).port;
      const log = await deliverOne(`http://127.0.0.1:${port}/hook`);
      expect(log).toMatchObject({ status: 'succeeded', last_status_code: 200 });
      expect(log.last_latency_ms).toBeLessThan(2_000);
      // Socket buffers hold some more than what was read, never the unbounded stream.
      expect(written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      endless.close();
    }
  });
});
