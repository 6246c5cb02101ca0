// Verifying what a tool signed: with its public JWK, or with the key set at its JWKS URL, fetched
// through the outbound guard and cached (10 minutes, per tool and URL). A `kid` the cached set
// does not hold makes one re-read (not more often than every 5 seconds per tool), so that a tool
// that rotated its key is believed at once.
import { createLocalJWKSet, errors as joseErrors, importJWK, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { outboundFetch, type TargetPolicy } from '../http/outbound';
import type { Clock } from '../lib/clock';
import { publicJwkOf, type ToolRow } from './tools';

const CACHE_MS = 10 * 60_000;
const REFETCH_COOLDOWN_MS = 5_000;

interface CachedSet {
  url: string;
  keys: JSONWebKeySet;
  fetchedAt: number;
}

export interface ToolKeyDeps {
  clock: Clock;
  outbound: TargetPolicy;
}

/** The reason a tool's message was refused, safe to tell the tool. */
export class ToolJwtRefused extends Error {}

const cache = new WeakMap<ToolKeyDeps['outbound'], Map<string, CachedSet>>();

async function fetchKeySet(deps: ToolKeyDeps, url: string): Promise<JSONWebKeySet> {
  let res: Response;
  try {
    res = await outboundFetch(url, deps.outbound, { headers: { Accept: 'application/json' }, maxBytes: 256 * 1024 });
  } catch (err) {
    throw new ToolJwtRefused(`the tool's key set could not be read: ${(err as Error).message}`);
  }
  if (res.status !== 200) throw new ToolJwtRefused(`the tool's key set answered ${res.status}`);
  try {
    const body = (await res.json()) as JSONWebKeySet;
    if (!Array.isArray(body?.keys)) throw new Error('no keys');
    return body;
  } catch {
    throw new ToolJwtRefused("the tool's key set is not a JWKS");
  }
}

async function keySetOf(deps: ToolKeyDeps, tool: ToolRow, fresh: boolean): Promise<JSONWebKeySet> {
  let perPolicy = cache.get(deps.outbound);
  if (!perPolicy) cache.set(deps.outbound, (perPolicy = new Map()));
  const now = deps.clock.now().getTime();
  const cached = perPolicy.get(tool.id);
  const usable = cached && cached.url === tool.jwksUrl && now - cached.fetchedAt < CACHE_MS;
  if (usable && (!fresh || now - cached.fetchedAt < REFETCH_COOLDOWN_MS)) return cached.keys;
  const keys = await fetchKeySet(deps, tool.jwksUrl!);
  perPolicy.set(tool.id, { url: tool.jwksUrl!, keys, fetchedAt: now });
  return keys;
}

/** Verifies a JWT the tool signed (RS256): signature by its key and kid, then the claims asked for. */
export async function verifyToolJwt(deps: ToolKeyDeps, tool: ToolRow, jwt: string, options: JWTVerifyOptions): Promise<JWTPayload> {
  const verifyOptions: JWTVerifyOptions = { algorithms: ['RS256'], currentDate: deps.clock.now(), clockTolerance: 5, ...options };
  try {
    const jwk = publicJwkOf(tool);
    if (jwk) {
      const { payload, protectedHeader } = await jwtVerify(jwt, await importJWK(jwk, 'RS256'), verifyOptions);
      if (jwk.kid && protectedHeader.kid && protectedHeader.kid !== jwk.kid) throw new ToolJwtRefused(`unknown kid ${protectedHeader.kid}`);
      return payload;
    }
    try {
      return (await jwtVerify(jwt, createLocalJWKSet(await keySetOf(deps, tool, false)), verifyOptions)).payload;
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      return (await jwtVerify(jwt, createLocalJWKSet(await keySetOf(deps, tool, true)), verifyOptions)).payload;
    }
  } catch (err) {
    if (err instanceof ToolJwtRefused) throw err;
    if (err instanceof joseErrors.JWKSNoMatchingKey) throw new ToolJwtRefused('no key of the tool matches the kid');
    if (err instanceof joseErrors.JWTExpired) throw new ToolJwtRefused('the JWT has expired');
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw new ToolJwtRefused(`claim ${err.claim} is not valid: ${err.reason}`);
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new ToolJwtRefused('the signature does not verify');
    if (err instanceof joseErrors.JOSEError) throw new ToolJwtRefused(`the JWT is not valid (${err.code})`);
    throw err;
  }
}
