// TRUST_PROXY: which reverse proxies in front of the server may say who the client is. Off, a hop
// count (`true` is one: the nearest), or the proxies' addresses and CIDRs; parsed once at start.
import { BlockList, isIP } from 'node:net';

export type TrustProxy = false | { hops: number } | { proxies: string[] };

/** An IPv4 client seen on a dual-stack socket (`::ffff:10.0.0.1`) is the IPv4 address. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

const KEYWORDS: Record<string, string[]> = { loopback: ['127.0.0.0/8', '::1/128'] };

/** Parses TRUST_PROXY; throws an Error saying what is wrong (config names the variable). */
export function parseTrustProxy(raw: string | boolean): TrustProxy {
  if (typeof raw === 'boolean') return raw ? { hops: 1 } : false;
  const value = raw.trim().toLowerCase();
  if (['', 'false', 'no', 'off', '0'].includes(value)) return false;
  if (['true', 'yes', 'on'].includes(value)) return { hops: 1 };
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 32) throw new Error('a hop count must be at most 32');
    return { hops };
  }
  const proxies = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of proxies) {
    if (KEYWORDS[entry]) continue;
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const bits = family === 4 ? 32 : 128;
    if (!family || extra !== undefined || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits))) {
      throw new Error(`"${entry}" is neither true, false, a hop count, an IP address, a CIDR nor "loopback"`);
    }
  }
  return { proxies };
}

const blockLists = new WeakMap<{ proxies: string[] }, BlockList>();

/** Whether `address` (a socket's or a forwarded one) is one of the trusted proxies. */
export function isTrustedProxy(trust: TrustProxy, address: string, hop: number): boolean {
  if (!trust) return false;
  if ('hops' in trust) return hop < trust.hops;
  let list = blockLists.get(trust);
  if (!list) {
    list = new BlockList();
    for (const entry of trust.proxies.flatMap((e) => KEYWORDS[e] ?? [e])) {
      const [ip, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) list.addAddress(ip, family);
      else list.addSubnet(ip, Number(prefix), family);
    }
    blockLists.set(trust, list);
  }
  const plain = plainAddress(address);
  const family = isIP(plain);
  return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}
