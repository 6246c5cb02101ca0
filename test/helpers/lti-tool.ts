// A small LTI 1.3 tool written on `jose`, as a vendor's would be: its RS256 key (served as a JWKS
// by a real server on 127.0.0.1 when asked), the OIDC login it answers to the platform's
// initiation, verification of the id_token against the platform's key set, and the JWTs it signs
// (deep linking responses, client assertions for the token endpoint).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { TestApp } from './app';

export const DL = 'https://purl.imsglobal.org/spec/lti-dl/claim/';
export const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';

export interface ToolKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export async function toolKey(kid: string = randomUUID()): Promise<ToolKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** A JWKS server on 127.0.0.1; `keys` may be changed while it runs (rotation); counts its reads. */
export async function jwksServer(keys: ToolKey[]): Promise<{ url: string; keys: ToolKey[]; reads: () => number; close: () => Promise<void> }> {
  let reads = 0;
  const state = { keys };
  const server = http.createServer((_req, res) => {
    reads++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys: state.keys.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    get keys() {
      return state.keys;
    },
    set keys(k: ToolKey[]) {
      state.keys = k;
    },
    reads: () => reads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  } as never;
}

/** The action and fields of an auto-submitting (or error) page's form. */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
  return { action: unescape(action), fields };
}

export interface RegisteredTool {
  id: string;
  client_id: string;
  deployment_ids: string[];
  platform: { issuer: string; token_endpoint: string; jwks_uri: string; deep_linking_return_url: string; authorization_endpoint: string };
}

export const toolUrls = {
  login: 'https://tool.example.com/login',
  launch: 'https://tool.example.com/launch',
  redirect: 'https://tool.example.com/redirect',
  deepLinking: 'https://tool.example.com/deep-linking',
};

/** What a tool's login endpoint sends back to the platform: the authentication request. */
export function authRequest(initiation: Record<string, string>, overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const params: Record<string, string | undefined> = {
    scope: 'openid',
    response_type: 'id_token',
    response_mode: 'form_post',
    prompt: 'none',
    client_id: initiation.client_id,
    redirect_uri: toolUrls.redirect,
    login_hint: initiation.login_hint,
    lti_message_hint: initiation.lti_message_hint,
    nonce: randomUUID(),
    state: randomUUID(),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** Verifies an id_token as a tool does: the platform's key set, iss, aud. */
export async function verifyIdToken(t: TestApp, idToken: string, tool: RegisteredTool): Promise<JWTPayload & Record<string, any>> {
  const jwks = (await t.call('GET', '/api/lti/jwks')).body;
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), { issuer: tool.platform.issuer, audience: tool.client_id, currentDate: t.clock.now() });
  return payload as JWTPayload & Record<string, any>;
}

/** Signs a JWT with the tool's key (RS256, its kid) at the test clock's time. */
export async function signAsTool(t: TestApp, key: ToolKey, payload: JWTPayload, opts: { expiresIn?: number; kid?: string } = {}): Promise<string> {
  const iat = Math.floor(t.clock.now().getTime() / 1000);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? key.kid, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + (opts.expiresIn ?? 300))
    .sign(key.privateKey);
}

export function deepLinkingResponse(tool: RegisteredTool, data: string, items: unknown[], overrides: Record<string, unknown> = {}): JWTPayload {
  return {
    iss: tool.client_id,
    aud: tool.platform.issuer,
    nonce: randomUUID(),
    [`${LTI}message_type`]: 'LtiDeepLinkingResponse',
    [`${LTI}version`]: '1.3.0',
    [`${LTI}deployment_id`]: tool.deployment_ids[0],
    [`${DL}data`]: data,
    [`${DL}content_items`]: items,
    ...overrides,
  };
}

export function clientAssertion(tool: RegisteredTool, overrides: Record<string, unknown> = {}): JWTPayload {
  return { iss: tool.client_id, sub: tool.client_id, aud: tool.platform.token_endpoint, jti: randomUUID(), ...overrides };
}

export const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
