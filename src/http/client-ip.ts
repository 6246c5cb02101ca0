// Who the client is, for the rate limits, the access log and the links the server builds. The
// connection's address, unless it comes from a trusted proxy (TRUST_PROXY): then the address that
// proxy forwarded (X-Forwarded-For, or RFC 7239 Forwarded), walked from the nearest hop back past
// every trusted one, so that a client can name any address it likes only in hops no one trusts.
import type { Context } from 'hono';
import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import { isTrustedProxy, plainAddress, type TrustProxy } from '../lib/trusted-proxies';

function socketAddress(c: Context): string {
  try {
    const address = getConnInfo(c).remote.address;
    return address ? plainAddress(address) : 'unknown';
  } catch {
    // app.request() in tests has no socket.
    return 'local';
  }
}

/** One `for=`/`proto=`/`host=` value of a Forwarded element: unquoted, an IPv6 address unbracketed, a port dropped. */
function forwardedParameter(element: string, name: string): string | undefined {
  for (const pair of element.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim().toLowerCase() !== name) continue;
    return pair.slice(at + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

const nodeAddress = (value: string): string => {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) return bracketed[1]!;
  const withPort = /^([\d.]+):\d+$/.exec(value);
  return plainAddress(withPort ? withPort[1]! : value);
};

/** The forwarded client addresses, farthest first, as the proxies appended them. */
function forwardedChain(c: Context): string[] {
  const xff = c.req.header('X-Forwarded-For');
  if (xff) return xff.split(',').map((s) => nodeAddress(s.trim())).filter(Boolean);
  const forwarded = c.req.header('Forwarded');
  if (!forwarded) return [];
  return forwarded
    .split(',')
    .map((element) => forwardedParameter(element, 'for'))
    .filter((v): v is string => !!v)
    .map(nodeAddress);
}

export function clientIp(c: Context, trust: TrustProxy): string {
  const remote = socketAddress(c);
  if (!trust) return remote;
  // From the nearest hop (the connection) back: the first address that is not a trusted proxy.
  const chain = [...forwardedChain(c), remote];
  let at = chain.length - 1;
  while (at > 0 && isTrustedProxy(trust, chain[at]!, chain.length - 1 - at)) at--;
  const address = chain[at]!;
  // A trusted proxy passes on whatever it was sent; what is not an address is not one.
  return at === chain.length - 1 || isIP(address) ? address : 'unknown';
}

/**
 * The scheme and host a trusted proxy says the client used (X-Forwarded-Proto and
 * X-Forwarded-Host or Host, or Forwarded's proto= and host=), or undefined when the connection is
 * not from a trusted proxy or they are not a plain http(s) origin.
 */
export function forwardedOrigin(c: Context, trust: TrustProxy): string | undefined {
  if (!trust || !isTrustedProxy(trust, socketAddress(c), 0)) return undefined;
  const forwarded = c.req.header('Forwarded')?.split(',')[0] ?? '';
  const proto = (c.req.header('X-Forwarded-Proto')?.split(',')[0] ?? forwardedParameter(forwarded, 'proto'))?.trim().toLowerCase();
  const host = (c.req.header('X-Forwarded-Host')?.split(',')[0] ?? forwardedParameter(forwarded, 'host') ?? c.req.header('Host'))?.trim();
  if ((proto !== 'http' && proto !== 'https') || !host || !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return undefined;
  return `${proto}://${host.toLowerCase()}`;
}
