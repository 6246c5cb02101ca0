// A SAML identity provider made of parts, for the SAML tests: responses written out as XML,
// signed with xml-crypto (on the assertion, the response, or both) by a throwaway certificate, the
// assertion optionally encrypted (AES-256-GCM, the key by RSA-OAEP) to a certificate, so that each
// test can forge exactly the flaw it is about.
import { createCipheriv, createPublicKey, publicEncrypt, randomBytes, constants } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';

export interface Signer {
  key: string;
  cert: string;
}

export interface ResponseOptions {
  issuer: string;
  /** Our ACS URL: Destination and Recipient unless overridden. */
  acsUrl: string;
  /** Our entity ID: the Audience unless overridden. */
  audience: string;
  /** The AuthnRequest answered; null: IdP-initiated (no InResponseTo anywhere). */
  inResponseTo: string | null;
  nameId: string;
  nameIdFormat?: string;
  attributes?: Record<string, string | string[]>;
  now: Date;
  destination?: string;
  recipient?: string;
  /** Conditions and SubjectConfirmationData window, relative to now (ms). */
  notBeforeMs?: number;
  notOnOrAfterMs?: number;
  signAssertion?: Signer;
  signResponse?: Signer;
  /** Encrypt the (signed) assertion to this certificate (PEM). */
  encryptTo?: string;
  assertionId?: string;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const iso = (at: number) => new Date(at).toISOString();
export const newXmlId = () => `_${randomBytes(16).toString('hex')}`;

export function assertionXml(o: ResponseOptions): string {
  const now = o.now.getTime();
  const notBefore = iso(now + (o.notBeforeMs ?? -60_000));
  const notOnOrAfter = iso(now + (o.notOnOrAfterMs ?? 5 * 60_000));
  const irt = o.inResponseTo ? ` InResponseTo="${esc(o.inResponseTo)}"` : '';
  const attributes = Object.entries(o.attributes ?? {})
    .map(
      ([name, values]) =>
        `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri">` +
        (Array.isArray(values) ? values : [values]).map((v) => `<saml:AttributeValue>${esc(v)}</saml:AttributeValue>`).join('') +
        `</saml:Attribute>`,
    )
    .join('');
  return (
    `<saml:Assertion xmlns:saml="${SAML}" ID="${o.assertionId ?? newXmlId()}" Version="2.0" IssueInstant="${iso(now)}">` +
    `<saml:Issuer>${esc(o.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${o.nameIdFormat ?? 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'}">${esc(o.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData${irt} NotOnOrAfter="${notOnOrAfter}" Recipient="${esc(o.recipient ?? o.acsUrl)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${esc(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="${newXmlId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>`
  );
}

/** An enveloped signature (RSA-SHA256, exclusive c14n) of the element `localName` (the first one), placed after its Issuer. */
export function sign(xml: string, localName: 'Assertion' | 'Response', signer: Signer): string {
  const sig = new SignedXml({
    privateKey: signer.key,
    publicCert: signer.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const element = `//*[local-name(.)='${localName}']`;
  sig.addReference({
    xpath: element,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { location: { reference: `${element}/*[local-name(.)='Issuer']`, action: 'after' } });
  return sig.getSignedXml();
}

/** XML Encryption of an element: AES-256-GCM content, its key by RSA-OAEP (SHA-1 MGF1) to the certificate. */
export function encryptAssertion(assertion: string, certPem: string): string {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([iv, cipher.update(assertion, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const wrapped = publicEncrypt({ key: createPublicKey(certPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, key);
  return (
    `<saml:EncryptedAssertion xmlns:saml="${SAML}">` +
    `<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Type="http://www.w3.org/2001/04/xmlenc#Element">` +
    `<xenc:EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"/>` +
    `<ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><xenc:EncryptedKey>` +
    `<xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>` +
    `<xenc:CipherData><xenc:CipherValue>${wrapped.toString('base64')}</xenc:CipherValue></xenc:CipherData>` +
    `</xenc:EncryptedKey></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${body.toString('base64')}</xenc:CipherValue></xenc:CipherData>` +
    `</xenc:EncryptedData></saml:EncryptedAssertion>`
  );
}

/** The Response around an assertion (XML as given: signed, encrypted or forged). */
export function responseAround(o: Pick<ResponseOptions, 'issuer' | 'acsUrl' | 'inResponseTo' | 'now' | 'destination'>, inner: string, id = newXmlId()): string {
  const irt = o.inResponseTo ? ` InResponseTo="${esc(o.inResponseTo)}"` : '';
  return (
    `<samlp:Response xmlns:samlp="${SAMLP}" xmlns:saml="${SAML}" ID="${id}" Version="2.0" IssueInstant="${o.now.toISOString()}" Destination="${esc(o.destination ?? o.acsUrl)}"${irt}>` +
    `<saml:Issuer>${esc(o.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    inner +
    `</samlp:Response>`
  );
}

/** A whole response as an IdP sends it: the assertion signed (and encrypted) as asked, then the response signed as asked. */
export function buildResponse(o: ResponseOptions): string {
  let assertion = assertionXml(o);
  if (o.signAssertion) assertion = sign(assertion, 'Assertion', o.signAssertion);
  if (o.encryptTo) assertion = encryptAssertion(assertion, o.encryptTo);
  let response = responseAround(o, assertion);
  if (o.signResponse) response = sign(response, 'Response', o.signResponse);
  return response;
}

/** The AuthnRequest in an HTTP-Redirect URL, inflated. */
export function authnRequestOf(url: string): { xml: string; id: string; relayState: string | null } {
  const u = new URL(url);
  const xml = inflateRawSync(Buffer.from(u.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  return { xml, id: /\sID="([^"]+)"/.exec(xml)![1]!, relayState: u.searchParams.get('RelayState') };
}

/** A form body of the HTTP-POST binding. */
export const postForm = (xml: string, relayState?: string) =>
  `SAMLResponse=${encodeURIComponent(Buffer.from(xml, 'utf8').toString('base64'))}` + (relayState !== undefined ? `&RelayState=${encodeURIComponent(relayState)}` : '');
