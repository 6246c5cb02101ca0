// The one outbound guard: every request the server makes to the outside (webhook deliveries, OIDC
// discovery, JWKS and token calls) goes to a URL and addresses vetted here, so that the server can
// never be turned into a proxy into the private network: `https://` only (or `http://` when
// OUTBOUND_ALLOW_HTTP), no credentials in the URL, and every address the host resolves to public
// (unless OUTBOUND_ALLOW_PRIVATE_TARGETS). The connection is made to the very address that was
// checked, so a DNS answer that changes in between (rebinding) gains nothing; no redirect is
// followed, and answers are bounded in size and time (outboundFetch).
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (dns.lookup with `all`); injectable for tests. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  resolver: Resolver;
}

/** A refused target: the reason is safe to show to the admin who configured it. */
export class TargetRefused extends Error {}

/** A target whose host name does not resolve (yet): refused at delivery, accepted at creation. */
class TargetUnresolved extends TargetRefused {}

/** Not public: special-purpose ranges of RFC 6890 and the IANA registries. */
const nonPublic = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['64:ff9b::', 96], // NAT64: would reach an IPv4 address through a translator
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID…)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  nonPublic.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d` in any spelling), or null. */
function mappedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  if (groups.slice(0, 5).some((g) => g !== 0) || groups[5] !== 0xffff) return null;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parts = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** Whether an IP address is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family === 6) {
    const v4 = mappedIpv4(address);
    if (v4) return isPublicAddress(v4);
    return !nonPublic.check(address.replace(/%.*$/, ''), 'ipv6');
  }
  return false;
}

/** Checks the URL's form (scheme, no credentials); throws TargetRefused. */
export function checkTargetUrl(raw: string, policy: Pick<TargetPolicy, 'allowHttp'>): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('url must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new TargetRefused(policy.allowHttp ? 'url must be http:// or https://' : 'url must be https:// (http:// is not allowed on this server)');
  }
  if (url.username || url.password) throw new TargetRefused('url must not contain credentials');
  if (!url.hostname) throw new TargetRefused('url must have a host');
  return url;
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The addresses to connect to for this URL, every one of them vetted. A host that does not
 * resolve is a TargetRefused too (at delivery time: an attempt that fails).
 */
export async function resolveTarget(url: URL, policy: TargetPolicy): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await policy.resolver(host);
    } catch (err) {
      throw new TargetUnresolved(`the host ${host} does not resolve (${(err as { code?: string }).code ?? 'lookup failed'})`);
    }
    if (addresses.length === 0) throw new TargetUnresolved(`the host ${host} does not resolve`);
  }
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) throw new TargetRefused(`the host ${host} resolves to ${refused.address}, which is not a public address`);
  }
  return addresses;
}

/**
 * The check made when a subscription is created or its URL changed: the form, and when the host
 * resolves, that it resolves only to public addresses. A host that does not resolve yet is
 * accepted (its DNS may come later); every delivery checks again.
 */
export async function vetNewTarget(raw: string, policy: TargetPolicy): Promise<URL> {
  const url = checkTargetUrl(raw, policy);
  // Only a host name can fail to resolve (an address literal never does).
  await resolveTarget(url, policy).catch((err: unknown) => {
    if (!(err instanceof TargetUnresolved)) throw err;
  });
  return url;
}

export const OUTBOUND_TIMEOUT_MS = 10_000;
export const OUTBOUND_MAX_ANSWER_BYTES = 1024 * 1024;

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

/** A connection lookup that answers the vetted address, whatever DNS says now. */
export function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    // Node asks with `all: true` when autoSelectFamily is on: answer in the form it asked for.
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
}

/**
 * One request through the guard, answered as a fetch `Response` (so that libraries taking a
 * custom fetch, openid-client among them, go through it). A redirect is answered as it is, never
 * followed; an answer larger than `maxBytes` or slower than `timeoutMs` is a TargetRefused.
 */
export async function outboundFetch(raw: string | URL, policy: TargetPolicy, req: OutboundRequest = {}): Promise<Response> {
  const url = checkTargetUrl(raw.toString(), policy);
  const [address] = await resolveTarget(url, policy);
  const timeoutMs = req.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = req.maxBytes ?? OUTBOUND_MAX_ANSWER_BYTES;
  const client = url.protocol === 'https:' ? https : http;
  const payload = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(req.body);
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      reject(new TargetRefused(message));
    };
    const request = client.request(
      url,
      {
        method: req.method ?? 'GET',
        lookup: pinnedLookup(address!),
        agent: false,
        headers: { ...req.headers, ...(payload ? { 'content-length': String(payload.byteLength) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.byteLength;
          if (read > maxBytes) return fail(`the answer of ${url.host} is larger than ${maxBytes} bytes`);
          chunks.push(chunk);
        });
        res.on('error', (err: NodeJS.ErrnoException) => fail(`network error: ${err.code ?? err.message}`));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
          }
          const status = res.statusCode ?? 502;
          // A Response cannot carry a body with these statuses.
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers }));
        });
      },
    );
    const timer = setTimeout(() => fail(`${url.host} did not answer within ${timeoutMs} ms`), timeoutMs);
    const onAbort = () => fail('aborted');
    req.signal?.addEventListener('abort', onAbort);
    request.on('error', (err: NodeJS.ErrnoException) => fail(`network error: ${err.code ?? err.message}`));
    request.end(payload);
  });
}
