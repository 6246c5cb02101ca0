// SSO connections through the API: SAML from metadata (two certificates for a rollover) or from
// fields, OIDC checked by discovery through the outbound guard, the client secret sealed at rest and
// never shown; bad input refused with nothing stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoConnections } from '../db/schema';
import { SecretBox, SECRET_KEY_FILE } from '../src/sso/secret-box';
import { expectProblem, makeTestApp, type TestApp } from './helpers/app';
import { discoveryServer, idpMetadata, keypair, type Keypair } from './helpers/sso';

let t: TestApp;
let closedT: TestApp;
let idp: Keypair;
let rollover: Keypair;
let discovery: Awaited<ReturnType<typeof discoveryServer>>;
const SECRET = 'client-secret-that-must-not-leak';

beforeAll(async () => {
  [idp, rollover] = await Promise.all([keypair(), keypair('idp-next.example.edu')]);
  discovery = await discoveryServer();
  t = await makeTestApp({ config: { outboundAllowHttp: 'true', outboundAllowPrivateTargets: 'true', ssoSecretKey: 'k'.repeat(40) } });
  closedT = await makeTestApp({ config: { ssoSecretKey: 'k'.repeat(40) } });
});
afterAll(async () => {
  await Promise.all([t.close(), closedT.close(), discovery.close()]);
});

const count = (app: TestApp) => app.db.select().from(ssoConnections).all().length;

describe('SAML connections', () => {
  it('are made from the IdP metadata, with each signing certificate (rollover), and show the URLs to give the IdP', async () => {
    const xml = idpMetadata('https://idp.example.edu/idp', 'https://idp.example.edu/sso', [idp.certBase64, rollover.certBase64]);
    const res = await t.call('POST', '/api/sso/connections', { as: t.admin, body: { protocol: 'saml', name: 'University', idp_metadata_xml: xml, provisioning: 'jit' } });
    expect(res.status, res.text).toBe(201);
    const id = res.body.id;
    expect(res.headers.get('location')).toBe(`/api/sso/connections/${id}`);
    expect(res.body).toMatchObject({
      protocol: 'saml',
      name: 'University',
      enabled: true,
      provisioning: 'jit',
      allowed_email_domains: null,
      attribute_mapping: { email: 'urn:oid:0.9.2342.19200300.100.1.3', name: 'urn:oid:2.16.840.1.113730.3.1.241' },
      login_url: `http://localhost:3000/sso/default/${id}/login`,
      oidc: null,
      saml: {
        idp_entity_id: 'https://idp.example.edu/idp',
        idp_sso_url: 'https://idp.example.edu/sso',
        allow_idp_initiated: false,
        sp_entity_id: `http://localhost:3000/sso/default/${id}/saml/metadata`,
        metadata_url: `http://localhost:3000/sso/default/${id}/saml/metadata`,
        acs_url: `http://localhost:3000/sso/default/${id}/saml/acs`,
      },
    });
    expect(res.body.saml.idp_certificates.map((c: { subject: string }) => c.subject)).toEqual(['CN=idp.example.edu', 'CN=idp-next.example.edu']);
    expect(res.body.saml.idp_certificates[0].sha256_fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);

    const read = await t.call('GET', `/api/sso/connections/${id}`, { as: t.admin });
    expect(read.body).toEqual(res.body);
    const list = await t.call('GET', '/api/sso/connections', { as: t.admin });
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(id);
  });

  it('are made from fields (PEM or base64), changed, and deleted', async () => {
    const res = await t.call('POST', '/api/sso/connections', {
      as: t.admin,
      body: {
        protocol: 'saml',
        name: 'Fields',
        idp_entity_id: 'urn:idp',
        idp_sso_url: 'https://idp.example.org/saml',
        idp_certificates: [idp.cert],
        attribute_mapping: { email: 'mail', name: 'cn', role: 'groups', admin_values: ['lms-admins'] },
        allowed_email_domains: ['Example.EDU'],
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.allowed_email_domains).toEqual(['example.edu']);
    const id = res.body.id;
    const changed = await t.call('PATCH', `/api/sso/connections/${id}`, {
      as: t.admin,
      body: { idp_certificates: [idp.certBase64, rollover.certBase64], allow_idp_initiated: true, enabled: false, allowed_email_domains: null },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ enabled: false, allowed_email_domains: null, saml: { idp_entity_id: 'urn:idp', allow_idp_initiated: true } });
    expect(changed.body.saml.idp_certificates).toHaveLength(2);

    const wrongProtocol = await t.call('PATCH', `/api/sso/connections/${id}`, { as: t.admin, body: { client_secret: 'x' } });
    expectProblem(wrongProtocol, 422, 'validation_failed');
    expect((await t.call('GET', `/api/sso/connections/${id}`, { as: t.admin })).body).toEqual(changed.body);

    expect((await t.call('DELETE', `/api/sso/connections/${id}`, { as: t.admin })).status).toBe(204);
    expectProblem(await t.call('GET', `/api/sso/connections/${id}`, { as: t.admin }), 404, 'not_found');
  });

  it('refuses metadata with a DOCTYPE, malformed XML, no certificate, a bad certificate, missing fields, or both forms at once: nothing stored', async () => {
    const before = count(t);
    const good = idpMetadata('urn:idp', 'https://idp.example.org/sso', [idp.certBase64]);
    const cases: [unknown, RegExp][] = [
      [{ idp_metadata_xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${good.replace('<?xml version="1.0"?>', '')}` }, /DOCTYPE/],
      [{ idp_metadata_xml: '<md:EntityDescriptor' }, /well-formed/],
      [{ idp_metadata_xml: idpMetadata('urn:idp', 'https://idp.example.org/sso', []) }, /no signing certificate/],
      [{ idp_metadata_xml: '<x/>' }, /EntityDescriptor/],
      [{ idp_entity_id: 'urn:idp', idp_sso_url: 'https://idp.example.org/sso', idp_certificates: ['bm90IGEgY2VydA=='] }, /not an X.509 certificate/],
      [{ idp_entity_id: 'urn:idp', idp_certificates: [idp.certBase64] }, /idp_sso_url/],
      [{ idp_metadata_xml: good, idp_entity_id: 'urn:other' }, /either/],
    ];
    for (const [fields, detail] of cases) {
      const res = await t.call('POST', '/api/sso/connections', { as: t.admin, body: { protocol: 'saml', name: 'Bad', ...(fields as object) } });
      expectProblem(res, 422, 'validation_failed', JSON.stringify(fields).slice(0, 80));
      expect(res.body.detail).toMatch(detail);
    }
    const invalid = await t.call('POST', '/api/sso/connections', { as: t.admin, body: { protocol: 'ldap', name: 'x' } });
    expectProblem(invalid, 400, 'validation_failed');
    expect(count(t)).toBe(before);
  });
});

describe('OIDC connections', () => {
  it('are checked by discovery, and keep the client secret sealed: never shown, not in the database as given', async () => {
    const res = await t.call('POST', '/api/sso/connections', {
      as: t.admin,
      body: { protocol: 'oidc', name: 'Keycloak', issuer: discovery.issuer, client_id: 'lms', client_secret: SECRET },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      protocol: 'oidc',
      saml: null,
      attribute_mapping: { email: 'email', name: 'name' },
      provisioning: 'existing_only',
      oidc: { issuer: discovery.issuer, client_id: 'lms', redirect_uri: `http://localhost:3000/sso/default/${res.body.id}/oidc/callback` },
    });
    expect(res.text).not.toContain(SECRET);
    const read = await t.call('GET', `/api/sso/connections/${res.body.id}`, { as: t.admin });
    expect(read.text).not.toContain(SECRET);
    const row = t.db.select().from(ssoConnections).all().find((r) => r.id === res.body.id)!;
    expect(row.clientSecretEncrypted).not.toContain(SECRET);
    expect(t.deps.secretBox.open(row.clientSecretEncrypted!)).toBe(SECRET);

    const renamed = await t.call('PATCH', `/api/sso/connections/${res.body.id}`, { as: t.admin, body: { client_secret: 'rotated-secret' } });
    expect(renamed.status, renamed.text).toBe(200);
    const after = t.db.select().from(ssoConnections).all().find((r) => r.id === res.body.id)!;
    expect(t.deps.secretBox.open(after.clientSecretEncrypted!)).toBe('rotated-secret');
    expectProblem(await t.call('PATCH', `/api/sso/connections/${res.body.id}`, { as: t.admin, body: { idp_entity_id: 'x' } }), 422, 'validation_failed');
  });

  it('are refused when discovery fails: an issuer the guard refuses (http://, private), one that names another issuer, one with no discovery', async () => {
    const before = [count(t), count(closedT)];
    const refused = await closedT.call('POST', '/api/sso/connections', { as: closedT.admin, body: { protocol: 'oidc', name: 'x', issuer: discovery.issuer, client_id: 'c', client_secret: 's' } });
    expectProblem(refused, 422, 'validation_failed');
    expect(refused.body.detail).toMatch(/https/i);
    const privateHttps = await closedT.call('POST', '/api/sso/connections', { as: closedT.admin, body: { protocol: 'oidc', name: 'x', issuer: 'https://127.0.0.1:1', client_id: 'c', client_secret: 's' } });
    expect(privateHttps.body.detail).toMatch(/not a public address/);

    const liar = await discoveryServer('https://login.example.com');
    try {
      const res = await t.call('POST', '/api/sso/connections', { as: t.admin, body: { protocol: 'oidc', name: 'x', issuer: liar.issuer, client_id: 'c', client_secret: 's' } });
      expectProblem(res, 422, 'validation_failed');
      expect(res.body.detail).toMatch(/discovery/);
    } finally {
      await liar.close();
    }
    const missing = await t.call('POST', '/api/sso/connections', { as: t.admin, body: { protocol: 'oidc', name: 'x', issuer: `${discovery.issuer}/nothing`, client_id: 'c', client_secret: 's' } });
    expectProblem(missing, 422, 'validation_failed');
    expect([count(t), count(closedT)]).toEqual(before);
  });
});

describe('the secret box', () => {
  it('keeps its key in the data directory when SSO_SECRET_KEY is unset (owner-only), and a second instance opens what the first sealed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-key-'));
    try {
      const sealed = new SecretBox({ dataDir: dir }).seal('hello');
      expect(fs.statSync(path.join(dir, SECRET_KEY_FILE)).mode & 0o777).toBe(0o600);
      expect(new SecretBox({ dataDir: dir }).open(sealed)).toBe('hello');
      expect(() => new SecretBox({ dataDir: dir, secretKey: 'x'.repeat(32) }).open(sealed)).toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
