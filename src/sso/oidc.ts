// The OpenID Connect relying party (openid-client 6): discovery, the authorization URL with PKCE,
// state and nonce, and the code exchange whose id_token is verified against the provider's JWKS
// (enableNonRepudiationChecks: without it openid-client trusts the TLS channel and skips the
// signature). Every request goes through the outbound guard.
import * as client from 'openid-client';
import { outboundFetch, type TargetPolicy } from '../http/outbound';
import { BoundedMap } from '../lib/bounded-map';

export type OidcConfiguration = client.Configuration;

function guardedFetch(policy: TargetPolicy): client.CustomFetch {
  return async (url, options) => {
    const body = options.body;
    return outboundFetch(url, policy, {
      method: options.method,
      headers: options.headers as Record<string, string>,
      body: body === undefined || body === null ? undefined : body instanceof URLSearchParams ? body.toString() : typeof body === 'string' ? body : new Uint8Array(body as ArrayBuffer),
      signal: options.signal,
    });
  };
}

/** Discovers the provider at `issuer` (its metadata must name that same issuer) and sets the client up. */
export async function discoverProvider(issuer: string, clientId: string, clientSecret: string, policy: TargetPolicy): Promise<OidcConfiguration> {
  const customFetch = guardedFetch(policy);
  const config = await client.discovery(new URL(issuer), clientId, undefined, client.ClientSecretBasic(clientSecret), {
    [client.customFetch]: customFetch,
    // The guard has decided whether http:// may be reached; openid-client would refuse it on its own.
    ...(policy.allowHttp ? { execute: [client.allowInsecureRequests] } : {}),
    timeout: 10,
  });
  config[client.customFetch] = customFetch;
  client.enableNonRepudiationChecks(config);
  return config;
}

export interface AuthorizationStart {
  url: URL;
  codeVerifier: string;
  state: string;
  nonce: string;
}

export async function startAuthorization(config: OidcConfiguration, redirectUri: string): Promise<AuthorizationStart> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, codeVerifier, state, nonce };
}

/** The verified id_token claims of a callback; throws (openid-client's errors) on any failed check. */
export async function finishAuthorization(
  config: OidcConfiguration,
  callbackUrl: URL,
  checks: { codeVerifier: string; state: string; nonce: string },
): Promise<Record<string, unknown>> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: checks.codeVerifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (!claims) throw new Error('no id_token');
  return claims as Record<string, unknown>;
}

/**
 * Discovered providers per connection, so that a sign-in does not fetch discovery again: an entry
 * serves while the connection is unchanged (its `updated_at`, read with the row on every sign-in,
 * is the version) and for at most an hour, after which the provider's metadata is read again. A
 * failed discovery is not kept.
 */
export class OidcProviderCache {
  private readonly entries = new BoundedMap<string, { version: string; at: number; config: Promise<OidcConfiguration> }>(1000);

  constructor(private readonly ttlMs = 3600_000) {}

  get(connection: { id: string; version: string }, now: number, discover: () => Promise<OidcConfiguration>): Promise<OidcConfiguration> {
    const hit = this.entries.get(connection.id);
    if (hit && hit.version === connection.version && now - hit.at < this.ttlMs) return hit.config;
    const config = discover();
    this.entries.set(connection.id, { version: connection.version, at: now, config });
    config.catch(() => {
      if (this.entries.get(connection.id)?.config === config) this.entries.delete(connection.id);
    });
    return config;
  }
}
