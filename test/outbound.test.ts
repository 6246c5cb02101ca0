// The one outbound guard as any caller meets it (OIDC discovery and tokens, webhooks): https://
// only and public addresses only unless opened, the connection made to the vetted address, no
// redirect followed, answers bounded in size and time; and its two settings with their older names.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../src/config';
import { TargetRefused, outboundFetch, type Resolver, type TargetPolicy } from '../src/http/outbound';

const resolver: Resolver = async (host) => {
  if (host === 'loopback.test') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'public.test') return [{ address: '93.184.216.34', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

let server: http.Server;
let port: number;
const seen: { method: string; url: string; host: string; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, host: req.headers.host!, body });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      } else if (req.url === '/large') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(64 * 1024, 1));
      } else if (req.url === '/slow') {
        res.writeHead(200);
        res.write('x'); // and never the end
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const open: TargetPolicy = { allowHttp: true, allowPrivate: true, resolver };

describe('outboundFetch', () => {
  it('refuses http:// unless allowed, and credentials in the URL', async () => {
    await expect(outboundFetch(`http://127.0.0.1:${port}/`, { ...open, allowHttp: false })).rejects.toThrow(/must be https/);
    await expect(outboundFetch(`https://user:pw@public.test/`, open)).rejects.toThrow(/credentials/);
    expect(seen).toHaveLength(0);
  });

  it('refuses a host that is, or resolves to, a non-public address unless allowed', async () => {
    const closed = { ...open, allowPrivate: false };
    await expect(outboundFetch(`http://127.0.0.1:${port}/`, closed)).rejects.toBeInstanceOf(TargetRefused);
    await expect(outboundFetch(`http://loopback.test:${port}/`, closed)).rejects.toThrow(/not a public address/);
    await expect(outboundFetch(`http://nowhere.test:${port}/`, closed)).rejects.toThrow(/does not resolve/);
    expect(seen).toHaveLength(0);
  });

  it('connects to the address it vetted, with the name in the Host header, and answers as fetch does', async () => {
    const res = await outboundFetch(`http://loopback.test:${port}/token`, open, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/token', host: `loopback.test:${port}`, body: 'grant_type=authorization_code' });
  });

  it('answers a redirect as it is, without following it', async () => {
    const before = seen.length;
    const res = await outboundFetch(`http://127.0.0.1:${port}/redirect`, open);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere');
    expect(seen.length).toBe(before + 1);
  });

  it('refuses an answer larger than its bound, and one that does not end in time', async () => {
    await expect(outboundFetch(`http://127.0.0.1:${port}/large`, open, { maxBytes: 1024 })).rejects.toThrow(/larger than 1024 bytes/);
    expect((await outboundFetch(`http://127.0.0.1:${port}/large`, open)).status).toBe(200);
    await expect(outboundFetch(`http://127.0.0.1:${port}/slow`, open, { timeoutMs: 200 })).rejects.toThrow(/did not answer within 200 ms/);
  });
});

describe('outbound settings', () => {
  it('are closed by default, opened by OUTBOUND_ALLOW_*, and by the older WEBHOOK_ALLOW_* names when those are unset', () => {
    expect(buildConfig({})).toMatchObject({ outboundAllowHttp: false, outboundAllowPrivateTargets: false });
    expect(buildConfig({ outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'yes' })).toMatchObject({ outboundAllowHttp: true, outboundAllowPrivateTargets: true });
    expect(buildConfig({ webhookAllowHttp: 'true', webhookAllowPrivateTargets: '1' })).toMatchObject({ outboundAllowHttp: true, outboundAllowPrivateTargets: true });
    expect(buildConfig({ webhookAllowHttp: 'true', outboundAllowHttp: 'false' })).toMatchObject({ outboundAllowHttp: false });
  });
});
