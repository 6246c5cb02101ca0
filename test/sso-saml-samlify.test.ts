// SAML sign-in against an independent implementation: samlify 2.13 plays the identity provider
// (its schema validator: @authenio/samlify-node-xmllint). It reads our SP metadata, reads and
// verifies our signed AuthnRequest from the redirect URL, and answers it with a signed response
// that our ACS accepts; the tokens it ends in then call the API.
import { createRequire } from 'node:module';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoLinks } from '../db/schema';
import { makeTestApp, type TestApp } from './helpers/app';
import { postForm } from './helpers/saml-idp';
import { keypair, type Keypair } from './helpers/sso';

const APP = 'https://app.example.org';
const IDP_ENTITY = 'https://samlify-idp.example.edu/metadata';
const IDP_SSO = 'https://samlify-idp.example.edu/sso';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

// Loaded without their type declarations: samlify's copy of @xmldom/xmldom pulls the DOM library
// into the whole project's type check.
const require = createRequire(import.meta.url);
const samlify = require('samlify');
const validator = require('@authenio/samlify-node-xmllint');

let t: TestApp;
let keys: Keypair;

beforeAll(async () => {
  samlify.setSchemaValidator(validator);
  keys = await keypair('samlify-idp.example.edu');
  t = await makeTestApp({ config: { ssoSecretKey: 's'.repeat(40), frontendOrigins: APP } });
});
afterAll(async () => {
  await t.close();
});

function identityProvider(options: { encrypt?: boolean } = {}): any {
  return samlify.IdentityProvider({
    entityID: IDP_ENTITY,
    privateKey: keys.key,
    signingCert: keys.cert,
    encPrivateKey: keys.key,
    encryptCert: keys.cert,
    isAssertionEncrypted: options.encrypt ?? false,
    wantAuthnRequestsSigned: true,
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    singleSignOnService: [{ Binding: REDIRECT, Location: IDP_SSO }],
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
  });
}

describe('SAML against samlify as the identity provider', () => {
  let connectionId: string;
  let sp: any;

  beforeAll(async () => {
    // The connection from the IdP's own metadata, as an admin would paste it.
    const created = await t.call('POST', '/api/sso/connections', {
      as: t.admin,
      body: { protocol: 'saml', name: 'samlify', idp_metadata_xml: identityProvider().getMetadata(), provisioning: 'jit', attribute_mapping: { email: 'NameID', name: 'NameID' } },
    });
    expect(created.status, created.text).toBe(201);
    connectionId = created.body.id;
    // The IdP knows us from our metadata alone.
    const metadata = await t.call('GET', `/sso/default/${connectionId}/saml/metadata`);
    expect(metadata.status).toBe(200);
    sp = samlify.ServiceProvider({ metadata: metadata.text });
  });

  async function signIn(idp: any, email: string) {
    const login = await t.call('GET', `/sso/default/${connectionId}/login?return_to=${encodeURIComponent(`${APP}/signed-in`)}`);
    expect(login.status, login.text).toBe(302);
    const url = new URL(login.headers.get('location')!);
    expect(url.origin + url.pathname).toBe(IDP_SSO);
    // The redirect binding's signed octets: the query as sent, without the signature.
    const raw = url.search.slice(1);
    const octetString = raw
      .split('&')
      .filter((p) => !p.startsWith('Signature='))
      .join('&');
    const parsed = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(url.searchParams), octetString });
    expect(parsed.extract.request.id).toMatch(/^_[0-9a-f]{40}$/);
    expect(parsed.extract.issuer).toBe(`http://localhost:3000/sso/default/${connectionId}/saml/metadata`);
    const relayState = url.searchParams.get('RelayState')!;
    expect(relayState).toBe(`${APP}/signed-in`);
    const response: { context: string; entityEndpoint: string } = await idp.createLoginResponse(sp, parsed, 'post', { email }, { relayState });
    expect(response.entityEndpoint).toBe(`http://localhost:3000/sso/default/${connectionId}/saml/acs`);
    const xml = Buffer.from(response.context, 'base64').toString('utf8');
    const acs = await t.call('POST', new URL(response.entityEndpoint).pathname, {
      rawBody: postForm(xml, relayState),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
    });
    return { acs, xml };
  }

  async function expectSignedIn(res: { status: number; headers: Headers; text: string }, email: string) {
    expect(res.status, res.text).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin + to.pathname).toBe(`${APP}/signed-in`);
    const tokens = await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code: to.searchParams.get('code') } });
    expect(tokens.status, tokens.text).toBe(200);
    const me = await t.call('GET', '/api/users/me', { as: tokens.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(email);
    return me.body.id as string;
  }

  it('signs in through a samlify response to our AuthnRequest (assertion signed), creating the user once', async () => {
    const { acs, xml } = await signIn(identityProvider(), 'ada@uni.example.edu');
    expect(xml).toMatch(/<saml:Assertion[^>]*>.*<(ds:)?Signature/s);
    const id = await expectSignedIn(acs, 'ada@uni.example.edu');
    expect(t.db.select().from(ssoLinks).where(eq(ssoLinks.userId, id)).get()?.subject).toBe('ada@uni.example.edu');
    const again = await signIn(identityProvider(), 'ada@uni.example.edu');
    expect(await expectSignedIn(again.acs, 'ada@uni.example.edu')).toBe(id);
  });

  it('signs in through a samlify response whose assertion is encrypted to our certificate', async () => {
    const { acs, xml } = await signIn(identityProvider({ encrypt: true }), 'grace@uni.example.edu');
    expect(xml).toContain('EncryptedAssertion');
    expect(xml).not.toContain('grace@uni.example.edu');
    await expectSignedIn(acs, 'grace@uni.example.edu');
  });

  it('refuses the same samlify response posted twice', async () => {
    const { acs, xml } = await signIn(identityProvider(), 'alan@uni.example.edu');
    await expectSignedIn(acs, 'alan@uni.example.edu');
    const replay = await t.call('POST', `/sso/default/${connectionId}/saml/acs`, {
      rawBody: postForm(xml),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
    });
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already been completed');
  });
});
