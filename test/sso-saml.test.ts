// SAML 2.0 sign-in end to end with responses built here (xml-crypto, throwaway certificates from
// selfsigned): our SP metadata, the signed AuthnRequest by HTTP-Redirect, the ACS, the one-time code
// and a call of the API with the tokens. Then each forged, replayed, misdirected or expired response,
// each refused with nothing created (no user, no link, no code).
import { createVerify, X509Certificate } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoHandles, ssoLinks, users } from '../db/schema';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';
import { assertionXml, authnRequestOf, buildResponse, encryptAssertion, newXmlId, postForm, responseAround, sign, type ResponseOptions } from './helpers/saml-idp';
import { idpMetadata, keypair, type Keypair } from './helpers/sso';

const APP = 'https://app.example.org';
const IDP = 'https://idp.uni.example.edu/idp/shibboleth';
const IDP_SSO = 'https://idp.uni.example.edu/idp/profile/SAML2/Redirect/SSO';
const EMAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const NAME = 'urn:oid:2.16.840.1.113730.3.1.241';
const browser = { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

let t: TestApp;
let idp: Keypair;
let idpNext: Keypair;
let stranger: Keypair;

beforeAll(async () => {
  [idp, idpNext, stranger] = await Promise.all([keypair('idp.uni.example.edu'), keypair('idp-2026.uni.example.edu'), keypair('evil.example.com')]);
  t = await makeTestApp({ config: { ssoSecretKey: 's'.repeat(40), frontendOrigins: APP, signInMaxFailuresPerIp: '200' } });
});
afterAll(async () => {
  await t.close();
});

interface Connection {
  id: string;
  entityId: string;
  acsUrl: string;
  spCertificate: string;
}

async function connection(body: object = {}): Promise<Connection> {
  const res = await t.call('POST', '/api/sso/connections', {
    as: t.admin,
    body: { protocol: 'saml', name: 'University', idp_metadata_xml: idpMetadata(IDP, IDP_SSO, [idp.certBase64, idpNext.certBase64]), provisioning: 'jit', ...body },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, entityId: res.body.saml.sp_entity_id, acsUrl: res.body.saml.acs_url, spCertificate: res.body.saml.sp_certificate };
}

/** Our login: the AuthnRequest's ID, from the redirect to the IdP. */
async function login(c: Connection, returnTo = `${APP}/signed-in?x=1`): Promise<string> {
  const res = await t.call('GET', `/sso/default/${c.id}/login?return_to=${encodeURIComponent(returnTo)}`);
  expect(res.status, res.text).toBe(302);
  return authnRequestOf(res.headers.get('location')!).id;
}

const post = (c: Connection, xml: string, relayState?: string, headers: Record<string, string> = browser) =>
  t.call('POST', `/sso/default/${c.id}/saml/acs`, { rawBody: postForm(xml, relayState), headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers } });

function options(c: Connection, requestId: string | null, who: { sub: string; email: string; name?: string }, extra: Partial<ResponseOptions> = {}): ResponseOptions {
  return {
    issuer: IDP,
    acsUrl: c.acsUrl,
    audience: c.entityId,
    inResponseTo: requestId,
    nameId: who.sub,
    attributes: { [EMAIL]: who.email, [NAME]: who.name ?? 'Someone' },
    now: t.clock.now(),
    signAssertion: idp,
    ...extra,
  };
}

const codeOf = (res: { status: number; headers: Headers; text: string }, where = `${APP}/signed-in`) => {
  expect(res.status, res.text).toBe(302);
  const to = new URL(res.headers.get('location')!);
  expect(to.origin + to.pathname).toBe(where);
  expect(to.searchParams.get('error'), 'refused').toBeNull();
  return to.searchParams.get('code')!;
};

async function me(code: string) {
  const tokens = await t.call('POST', '/api/auth/token', { body: { grant_type: 'sso_code', code } });
  expect(tokens.status, tokens.text).toBe(200);
  const res = await t.call('GET', '/api/users/me', { as: tokens.body.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; email: string; name: string; role: string };
}

const counts = () => ({
  users: t.db.select().from(users).all().length,
  links: t.db.select().from(ssoLinks).all().length,
  codes: t.db.select().from(ssoHandles).where(eq(ssoHandles.kind, 'code')).all().length,
});

/** A refused response: a plain page with the reason's message, and nothing created. */
async function expectRefused(c: Connection, xml: string, reason: string, status = 400, relayState?: string) {
  const before = counts();
  const res = await post(c, xml, relayState);
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const json = await post(c, xml, relayState, {});
  expect(json.body.detail, json.text).toContain(`(${reason})`);
  expect(counts()).toEqual(before);
}

describe('SAML service provider', () => {
  let c: Connection;
  beforeAll(async () => {
    c = await connection();
  });

  it('publishes our metadata: entity ID, ACS, our own certificate (signing and encryption)', async () => {
    const res = await t.call('GET', `/sso/default/${c.id}/saml/metadata`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.text).toContain(`entityID="${c.entityId}"`);
    expect(res.text).toContain(`Location="${c.acsUrl}"`);
    expect(res.text).toContain('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
    expect(res.text).toMatch(/WantAssertionsSigned="true"/);
    expect(res.text).toMatch(/AuthnRequestsSigned="true"/);
    const certs = [...res.text.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1]!.replace(/\s+/g, ''));
    const ours = c.spCertificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '');
    expect(certs).toEqual([ours, ours]);
    expect(res.text).toContain('use="signing"');
    expect(res.text).toContain('use="encryption"');
    const cert = new X509Certificate(Buffer.from(ours, 'base64'));
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect((await t.call('GET', `/sso/default/00000000-0000-7000-8000-000000000000/saml/metadata`)).status).toBe(404);
  });

  it('sends a signed AuthnRequest by HTTP-Redirect, with RelayState carrying return_to', async () => {
    const res = await t.call('GET', `/sso/default/${c.id}/login?return_to=${encodeURIComponent(`${APP}/back`)}`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${IDP_SSO}?`)).toBe(true);
    const { xml, relayState } = authnRequestOf(location);
    expect(relayState).toBe(`${APP}/back`);
    expect(xml).toContain(`AssertionConsumerServiceURL="${c.acsUrl}"`);
    expect(xml).toContain(`Destination="${IDP_SSO}"`);
    expect(xml).toContain(`>${c.entityId}</saml:Issuer>`);
    // The redirect binding's signature: over SAMLRequest, RelayState and SigAlg as sent.
    const query = location.slice(location.indexOf('?') + 1);
    const part = (name: string) => query.split('&').find((p) => p.startsWith(`${name}=`))!;
    const signed = [part('SAMLRequest'), part('RelayState'), part('SigAlg')].join('&');
    expect(decodeURIComponent(part('SigAlg').slice(7))).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const verifier = createVerify('RSA-SHA256').update(signed);
    expect(verifier.verify(new X509Certificate(c.spCertificate).publicKey, decodeURIComponent(part('Signature').slice(10)), 'base64')).toBe(true);
    const evil = await t.call('GET', `/sso/default/${c.id}/login?return_to=${encodeURIComponent('https://evil.example.com/')}`, { headers: browser });
    expect(evil.status).toBe(400);
  });

  it('accepts a response whose assertion alone is signed: the user is created (jit) and the tokens work', async () => {
    const before = counts();
    const request = await login(c);
    const code = codeOf(await post(c, buildResponse(options(c, request, { sub: 'alice-persistent-id', email: 'Alice@uni.example.edu', name: 'Alice Liddell' }))));
    const alice = await me(code);
    expect(alice).toMatchObject({ email: 'alice@uni.example.edu', name: 'Alice Liddell', role: 'member' });
    expect(counts().users).toBe(before.users + 1);
    // The same person again: the same user.
    const again = await me(codeOf(await post(c, buildResponse(options(c, await login(c), { sub: 'alice-persistent-id', email: 'alice@uni.example.edu' })))));
    expect(again.id).toBe(alice.id);
    expect(counts().users).toBe(before.users + 1);
  });

  it('accepts a response signed as a whole (assertion unsigned), and one signed twice', async () => {
    const onlyResponse = options(c, await login(c), { sub: 'bob-id', email: 'bob@uni.example.edu' }, { signAssertion: undefined, signResponse: idp });
    expect((await me(codeOf(await post(c, buildResponse(onlyResponse))))).email).toBe('bob@uni.example.edu');
    const both = options(c, await login(c), { sub: 'bob-id', email: 'bob@uni.example.edu' }, { signResponse: idp });
    expect((await me(codeOf(await post(c, buildResponse(both))))).email).toBe('bob@uni.example.edu');
  });

  it('accepts a response signed with the second certificate of the metadata (rollover)', async () => {
    const res = await post(c, buildResponse(options(c, await login(c), { sub: 'carol-id', email: 'carol@uni.example.edu' }, { signAssertion: idpNext })));
    expect((await me(codeOf(res))).email).toBe('carol@uni.example.edu');
  });

  it('accepts an assertion encrypted to our certificate, and refuses one encrypted to another key', async () => {
    const request = await login(c);
    const encrypted = buildResponse(options(c, request, { sub: 'dave-id', email: 'dave@uni.example.edu' }, { encryptTo: c.spCertificate }));
    expect(encrypted).toContain('EncryptedAssertion');
    expect(encrypted).not.toContain('dave@uni.example.edu');
    expect((await me(codeOf(await post(c, encrypted)))).email).toBe('dave@uni.example.edu');
    await expectRefused(c, buildResponse(options(c, await login(c), { sub: 'dave-id', email: 'dave@uni.example.edu' }, { encryptTo: stranger.cert })), 'decryption_failed');
  });

  it('refuses an unsigned response, one signed by another certificate, and one altered after signing', async () => {
    const who = { sub: 'erin-id', email: 'erin@uni.example.edu' };
    await expectRefused(c, buildResponse(options(c, await login(c), who, { signAssertion: undefined })), 'signature_invalid');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { signAssertion: stranger })), 'signature_invalid');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { signAssertion: undefined, signResponse: stranger })), 'signature_invalid');
    // A certificate of the connection's, but the NameID, an attribute, or the audience changed afterwards.
    const signed = buildResponse(options(c, await login(c), who));
    await expectRefused(c, signed.replace('>erin-id<', '>admin-id<'), 'signature_invalid');
    await expectRefused(c, signed.replace('erin@uni.example.edu', 'admin@example.com'), 'signature_invalid');
    const responseSigned = buildResponse(options(c, await login(c), who, { signAssertion: undefined, signResponse: idp }));
    await expectRefused(c, responseSigned.replace('erin@uni.example.edu', 'admin@example.com'), 'signature_invalid');
    expect(t.db.select().from(users).where(eq(users.email, 'erin@uni.example.edu')).all()).toEqual([]);
  });

  it('refuses signature wrapping: a signed assertion next to, or hidden under, an injected unsigned one', async () => {
    const request = await login(c);
    const o = options(c, request, { sub: 'frank-id', email: 'frank@uni.example.edu' });
    const signedAssertion = sign(assertionXml(o), 'Assertion', idp);
    const signedId = /ID="([^"]+)"/.exec(signedAssertion)![1]!;
    const forged = assertionXml({ ...o, nameId: 'victim-id', attributes: { [EMAIL]: t.admin.user.email } });
    // The forged assertion first, the signed one after it.
    await expectRefused(c, responseAround(o, forged + signedAssertion), 'signature_invalid');
    // The forged assertion carrying the signed one's ID, the signed one moved into Extensions.
    const sameId = forged.replace(/ID="[^"]+"/, `ID="${signedId}"`);
    await expectRefused(c, responseAround(o, `<samlp:Extensions>${signedAssertion}</samlp:Extensions>${sameId}`), 'signature_invalid');
    // The signed assertion's signature moved onto the forged one.
    const signature = /<ds:Signature[\s\S]*<\/ds:Signature>|<Signature[\s\S]*<\/Signature>/.exec(signedAssertion)![0];
    const stolen = sameId.replace('</saml:Issuer>', `</saml:Issuer>${signature}`);
    await expectRefused(c, responseAround(o, `<samlp:Extensions>${signedAssertion.replace(signature, '')}</samlp:Extensions>${stolen}`), 'signature_invalid');
    // A signed response whose assertion was swapped for a forged one.
    const signedResponse = buildResponse({ ...o, signAssertion: undefined, signResponse: idp });
    const swapped = signedResponse.replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, forged);
    await expectRefused(c, swapped, 'signature_invalid');
    expect(t.db.select().from(ssoLinks).where(eq(ssoLinks.subject, 'victim-id')).all()).toEqual([]);
  });

  it('refuses a wrong audience, recipient, destination or issuer', async () => {
    const who = { sub: 'grace-id', email: 'grace@uni.example.edu' };
    await expectRefused(c, buildResponse(options(c, await login(c), who, { audience: 'https://other-sp.example.com/metadata' })), 'audience_mismatch');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { recipient: 'https://other-sp.example.com/acs' })), 'recipient_mismatch');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { destination: 'https://other-sp.example.com/acs' })), 'destination_mismatch');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { issuer: 'https://other-idp.example.com' })), 'issuer_mismatch');
  });

  it('refuses an expired assertion and one not yet valid, allowing 3 minutes of clock skew', async () => {
    const who = { sub: 'heidi-id', email: 'heidi@uni.example.edu' };
    await expectRefused(c, buildResponse(options(c, await login(c), who, { notBeforeMs: -10 * 60_000, notOnOrAfterMs: -4 * 60_000 })), 'assertion_expired');
    await expectRefused(c, buildResponse(options(c, await login(c), who, { notBeforeMs: 4 * 60_000, notOnOrAfterMs: 10 * 60_000 })), 'assertion_not_yet_valid');
    // Two minutes off either way is within the skew.
    expect((await me(codeOf(await post(c, buildResponse(options(c, await login(c), who, { notBeforeMs: 2 * 60_000, notOnOrAfterMs: 8 * 60_000 })))))).email).toBe('heidi@uni.example.edu');
    expect((await me(codeOf(await post(c, buildResponse(options(c, await login(c), who, { notBeforeMs: -10 * 60_000, notOnOrAfterMs: -2 * 60_000 })))))).email).toBe('heidi@uni.example.edu');
  });

  it('refuses a replayed response, an unknown InResponseTo, and a request older than 5 minutes', async () => {
    const who = { sub: 'ivan-id', email: 'ivan@uni.example.edu' };
    const request = await login(c);
    const response = buildResponse(options(c, request, who));
    const first = await me(codeOf(await post(c, response)));
    await expectRefused(c, response, 'request_used');
    // A fresh response (new assertion) answering the same, used request.
    await expectRefused(c, buildResponse(options(c, request, who)), 'request_used');
    await expectRefused(c, buildResponse(options(c, newXmlId(), who)), 'request_unknown');
    const old = await login(c);
    t.clock.advance(5 * 60_000 + 1000);
    await expectRefused(c, buildResponse(options(c, old, who)), 'request_expired');
    expect((await me(codeOf(await post(c, buildResponse(options(c, await login(c), who)))))).id).toBe(first.id);
  });

  it('refuses an IdP-initiated response unless the connection allows it, then takes it to RelayState', async () => {
    const who = { sub: 'judy-id', email: 'judy@uni.example.edu' };
    await expectRefused(c, buildResponse(options(c, null, who)), 'idp_initiated_refused', 403, `${APP}/from-idp`);
    const patched = await t.call('PATCH', `/api/sso/connections/${c.id}`, { as: t.admin, body: { allow_idp_initiated: true } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.saml.allow_idp_initiated).toBe(true);
    const response = buildResponse(options(c, null, who));
    expect((await me(codeOf(await post(c, response, `${APP}/from-idp`), `${APP}/from-idp`))).email).toBe('judy@uni.example.edu');
    // The same IdP-initiated response again: a replay.
    await expectRefused(c, response, 'assertion_replayed', 400, `${APP}/from-idp`);
    await expectRefused(c, buildResponse(options(c, null, who)), 'return_to_refused', 400, 'https://evil.example.com/');
    expect((await t.call('PATCH', `/api/sso/connections/${c.id}`, { as: t.admin, body: { allow_idp_initiated: false } })).status).toBe(200);
  });

  it('links by email, refuses deleted users and takeovers through another connection, and sends refusals of the person back with ?error=', async () => {
    const other = await connection({ name: 'Other IdP', provisioning: 'existing_only' });
    const kim = await t.newUser({ email: 'kim@uni.example.edu', name: 'Kim' });
    expect((await me(codeOf(await post(c, buildResponse(options(c, await login(c), { sub: 'kim-id', email: kim.user.email })))))).id).toBe(kim.user.id);
    const before = counts();
    const errorOf = async (conn: Connection, who: { sub: string; email: string }) => {
      const res = await post(conn, buildResponse(options(conn, await login(conn), who)));
      expect(res.status, res.text).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(to.searchParams.get('code')).toBeNull();
      return to.searchParams.get('error');
    };
    expect(await errorOf(other, { sub: 'mallory', email: kim.user.email })).toBe('linked_elsewhere');
    expect(await errorOf(other, { sub: 'nobody', email: 'nobody@uni.example.edu' })).toBe('no_account');
    expect((await t.call('DELETE', `/api/users/${kim.user.id}`, { as: t.admin })).status).toBe(204);
    expect(await errorOf(c, { sub: 'kim-id', email: kim.user.email })).toBe('account_deleted');
    expect(counts()).toEqual({ ...before, users: before.users });
  });

  it('refuses a transient NameID unless a subject attribute is mapped, and maps the subject and the email from the NameID', async () => {
    const transient = { nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' };
    await expectRefused(c, buildResponse(options(c, await login(c), { sub: '_tr4ns13nt', email: 'liam@uni.example.edu' }, transient)), 'subject_missing');
    const mapped = await connection({ name: 'Mapped', attribute_mapping: { subject: 'urn:oasis:names:tc:SAML:attribute:subject-id', email: 'NameID', name: 'displayName' } });
    const o = options(mapped, await login(mapped), { sub: 'liam@uni.example.edu', email: 'unused' }, {
      attributes: { 'urn:oasis:names:tc:SAML:attribute:subject-id': 'liam-42@uni.example.edu', displayName: 'Liam' },
    });
    const liam = await me(codeOf(await post(mapped, buildResponse(o))));
    expect(liam).toMatchObject({ email: 'liam@uni.example.edu', name: 'Liam' });
    expect(t.db.select().from(ssoLinks).where(and(eq(ssoLinks.connectionId, mapped.id), eq(ssoLinks.userId, liam.id))).get()?.subject).toBe('liam-42@uni.example.edu');
  });

  it('signs in two concurrent first sign-ins of one person as one user, with one link', async () => {
    const before = counts();
    const who = { sub: 'concurrent-id', email: 'concurrent@uni.example.edu' };
    const [a, b] = await Promise.all([login(c), login(c)]);
    const [ra, rb] = await Promise.all([post(c, buildResponse(options(c, a, who))), post(c, buildResponse(options(c, b, who)))]);
    const [ua, ub] = await Promise.all([me(codeOf(ra)), me(codeOf(rb))]);
    expect(ua.id).toBe(ub.id);
    expect(counts().users).toBe(before.users + 1);
    expect(counts().links).toBe(before.links + 1);
  });

  it('refuses what is not a SAML response: garbage, a DOCTYPE, no SAMLResponse, and a SAML connection at the OIDC callback', async () => {
    await expectRefused(c, '<not-saml/>', 'response_invalid');
    await expectRefused(c, '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&x;</samlp:Response>', 'response_invalid');
    const empty = await t.call('POST', `/sso/default/${c.id}/saml/acs`, { rawBody: 'RelayState=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expectProblem(empty, 400, 'validation_failed');
    const json = await t.call('POST', `/sso/default/${c.id}/saml/acs`, { body: { SAMLResponse: 'x' } });
    expect(json.status).toBe(415);
    const callback = await t.call('GET', `/sso/default/${c.id}/oidc/callback?state=x&code=y`);
    expect(callback.body.detail).toContain('(protocol_unavailable)');
  });
});

describe('SAML sign-in attempts are rate limited', () => {
  it('answers 429 past the failures allowed per address, as the password grant does', async () => {
    const limited = await makeTestApp({ config: { ssoSecretKey: 's'.repeat(40), frontendOrigins: APP, signInMaxFailuresPerIp: '3' } });
    try {
      const created = await limited.call('POST', '/api/sso/connections', {
        as: limited.admin,
        body: { protocol: 'saml', name: 'U', idp_entity_id: IDP, idp_sso_url: IDP_SSO, idp_certificates: [idp.cert] },
      });
      const acs = `/sso/default/${created.body.id}/saml/acs`;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await limited.call('POST', acs, { rawBody: postForm('<forged/>'), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([400, 400, 400, 429]);
      expect((await limited.call('GET', '/api/users/me', { as: limited.admin })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
