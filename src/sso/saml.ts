// The SAML 2.0 service provider of a connection, on @node-saml/node-saml 5: our SP metadata, the
// AuthnRequest sent by HTTP-Redirect (signed with the connection's own key), and the checks of a
// response posted to the ACS. node-saml verifies the XML signatures (on the response or on the
// assertion, from one of the connection's certificates, refusing wrapped and multiple assertions),
// decrypts encrypted assertions with our key and checks the audience. What it leaves to us is done
// here, on the assertion it verified: Destination and Recipient are our ACS URL, the Issuer is the
// connection's IdP, the times hold (with the injected clock, at most 3 minutes of skew), and the
// InResponseTo that the assertion carries (signed) is the one the caller must find among our requests.
import { randomBytes } from 'node:crypto';
import type { Profile, SAML, SamlConfig } from '@node-saml/node-saml';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { certificatesOf, mappingOf, type ConnectionRow } from './connections';
import { toPem } from './saml-metadata';
import { SsoRefusal, type IdpIdentity } from './signin';

export const SAML_CLOCK_SKEW_MS = 3 * 60_000;

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

/** What our side of a connection is: its entity ID and ACS URL, and its own key pair. */
export interface ServiceProvider {
  entityId: string;
  acsUrl: string;
  privateKeyPem: string;
  /** Base64 of the DER. */
  certificate: string;
}

/**
 * node-saml, with its XML signature and encryption libraries, is loaded with the first SAML
 * sign-in or metadata request (Node keeps it once loaded): some 4.5 MiB of heap that a server
 * without a SAML connection would carry for nothing.
 */
const samlLibrary = () => import('@node-saml/node-saml');
type SamlLibrary = Awaited<ReturnType<typeof samlLibrary>>;

function serviceProvider({ SAML, ValidateInResponseTo }: SamlLibrary, row: ConnectionRow, sp: ServiceProvider, requestId?: string): SAML {
  const config: SamlConfig = {
    issuer: sp.entityId,
    audience: sp.entityId,
    callbackUrl: sp.acsUrl,
    entryPoint: row.idpSsoUrl!,
    idpCert: certificatesOf(row),
    // A signature on the response or on the assertion will do (most IdPs sign only the assertion):
    // with both false, node-saml requires the assertion's own signature whenever the response has
    // no valid one, and hands out a profile only from signed content.
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    // Time conditions are checked below against the injected clock (node-saml reads Date.now()).
    acceptedClockSkewMs: -1,
    // InResponseTo is checked by the caller against our stored requests (one use, 5 minutes).
    validateInResponseTo: ValidateInResponseTo.never,
    privateKey: sp.privateKeyPem,
    decryptionPvk: sp.privateKeyPem,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    // No NameID format and no authentication context asked for: whatever the IdP does by default.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  };
  if (requestId) config.generateUniqueId = () => requestId;
  return new SAML(config);
}

/** Our SP metadata: entity ID, the ACS (HTTP-POST), our certificate for signing and encryption. */
export async function spMetadata(sp: ServiceProvider): Promise<string> {
  const pem = toPem(sp.certificate);
  const { generateServiceProviderMetadata } = await samlLibrary();
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    privateKey: sp.privateKeyPem,
    publicCerts: pem,
    decryptionPvk: sp.privateKeyPem,
    decryptionCert: pem,
    signatureAlgorithm: 'sha256',
    wantAssertionsSigned: true,
    identifierFormat: null,
  });
}

/** A new AuthnRequest (signed, HTTP-Redirect binding): the URL at the IdP and the request's ID. */
export async function samlLoginUrl(row: ConnectionRow, sp: ServiceProvider, relayState: string): Promise<{ url: string; requestId: string }> {
  // An XML ID must not start with a digit.
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const url = await serviceProvider(await samlLibrary(), row, sp, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, requestId };
}

export interface SamlAssertionResult {
  identity: IdpIdentity;
  /** From the signed assertion's bearer confirmation; null: an IdP-initiated response. */
  inResponseTo: string | null;
  assertionId: string;
  /** Until when the assertion could be presented (the later of its NotOnOrAfter times). */
  validUntil: Date;
}

const parse = (xml: string): Element | null => {
  let failed = false;
  const doc = new DOMParser({ onError: (level) => void (level !== 'warning' && (failed = true)) }).parseFromString(xml, 'text/xml');
  return failed ? null : doc.documentElement;
};
const children = (el: Element, ns: string, name: string): Element[] =>
  Array.from(el.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name);
const child = (el: Element | undefined, ns: string, name: string): Element | undefined => (el ? children(el, ns, name)[0] : undefined);
const attr = (el: Element | undefined, name: string): string | null => (el?.hasAttribute(name) ? el.getAttribute(name) : null);

/** A refusal for what node-saml threw: the reason by what it says, its message in the log. */
function libraryRefusal({ SamlStatusError }: SamlLibrary, err: unknown, encrypted: boolean): SsoRefusal {
  const message = (err as Error).message ?? String(err);
  if (err instanceof SamlStatusError) return new SsoRefusal('idp_error', message);
  if (/audience/i.test(message)) return new SsoRefusal('audience_mismatch', message);
  if (/signature|signed|assertions/i.test(message)) return new SsoRefusal('signature_invalid', message);
  // What xml-encryption and OpenSSL say of a key or content they cannot decrypt varies ("oaep decoding error", "unsupported state").
  if (encrypted) return new SsoRefusal('decryption_failed', message);
  return new SsoRefusal('response_invalid', message);
}

function timeOf(value: string | null, name: string): number | null {
  if (value === null) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new SsoRefusal('response_invalid', `${name} is not a time`);
  return ms;
}

/** NotBefore / NotOnOrAfter of an element against now, with the allowed skew. */
function checkWindow(el: Element, what: string, now: number, requireEnd: boolean): number | null {
  const notBefore = timeOf(attr(el, 'NotBefore'), `${what} NotBefore`);
  const notOnOrAfter = timeOf(attr(el, 'NotOnOrAfter'), `${what} NotOnOrAfter`);
  if (notBefore !== null && now + SAML_CLOCK_SKEW_MS < notBefore) throw new SsoRefusal('assertion_not_yet_valid', `${what} NotBefore ${attr(el, 'NotBefore')}`);
  if (notOnOrAfter === null && requireEnd) throw new SsoRefusal('response_invalid', `${what} has no NotOnOrAfter`);
  if (notOnOrAfter !== null && now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) throw new SsoRefusal('assertion_expired', `${what} NotOnOrAfter ${attr(el, 'NotOnOrAfter')}`);
  return notOnOrAfter;
}

/**
 * The person a posted SAMLResponse signs in, once every check holds; SsoRefusal otherwise. The
 * caller still checks `inResponseTo` against our requests, and the assertion ID against replays.
 */
export async function validateSamlResponse(row: ConnectionRow, sp: ServiceProvider, samlResponse: string, now: Date): Promise<SamlAssertionResult> {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  // No DTD at all: entity expansion is how a small document becomes a large one.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SsoRefusal('response_invalid', 'DOCTYPE in the response');
  const response = parse(xml);
  if (!response || response.namespaceURI !== PROTOCOL || response.localName !== 'Response') throw new SsoRefusal('response_invalid', 'not a SAML Response');

  const library = await samlLibrary();
  let profile: Profile | null;
  try {
    ({ profile } = await serviceProvider(library, row, sp).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    throw libraryRefusal(library, err, children(response, ASSERTION, 'EncryptedAssertion').length > 0);
  }
  if (!profile?.getAssertionXml) throw new SsoRefusal('response_invalid', 'no assertion');

  const statusCode = attr(child(child(response, PROTOCOL, 'Status'), PROTOCOL, 'StatusCode'), 'Value');
  if (statusCode !== SUCCESS) throw new SsoRefusal('idp_error', `status ${statusCode}`);
  const destination = attr(response, 'Destination');
  if (destination !== sp.acsUrl) throw new SsoRefusal('destination_mismatch', `Destination ${destination}`);

  // Everything below is read from the assertion whose signature node-saml verified (decrypted if need be).
  const assertion = parse(profile.getAssertionXml());
  if (!assertion || assertion.namespaceURI !== ASSERTION || assertion.localName !== 'Assertion') throw new SsoRefusal('response_invalid', 'the signed content is not an Assertion');
  const assertionId = attr(assertion, 'ID');
  if (!assertionId) throw new SsoRefusal('response_invalid', 'assertion without ID');
  const issuer = child(assertion, ASSERTION, 'Issuer')?.textContent?.trim();
  if (issuer !== row.idpEntityId) throw new SsoRefusal('issuer_mismatch', `Issuer ${issuer}`);

  const nowMs = now.getTime();
  const conditions = children(assertion, ASSERTION, 'Conditions');
  if (conditions.length !== 1) throw new SsoRefusal('response_invalid', 'the assertion must have one Conditions');
  const conditionsEnd = checkWindow(conditions[0]!, 'Conditions', nowMs, false);

  const subject = child(assertion, ASSERTION, 'Subject');
  const confirmations = subject ? children(subject, ASSERTION, 'SubjectConfirmation').filter((c) => attr(c, 'Method') === BEARER) : [];
  const data = confirmations.map((c) => child(c, ASSERTION, 'SubjectConfirmationData')).filter((d): d is Element => d !== undefined);
  const ours = data.filter((d) => attr(d, 'Recipient') === sp.acsUrl);
  if (ours.length === 0) throw new SsoRefusal('recipient_mismatch', `Recipient ${data.map((d) => attr(d, 'Recipient')).join(', ') || 'none'}`);
  const confirmation = ours[0]!;
  const confirmationEnd = checkWindow(confirmation, 'SubjectConfirmationData', nowMs, true)!;

  // The response's InResponseTo is not covered by an assertion-only signature: the assertion's is the one that counts.
  const inResponseTo = attr(confirmation, 'InResponseTo');
  const responseInResponseTo = attr(response, 'InResponseTo');
  if (responseInResponseTo !== null && responseInResponseTo !== inResponseTo) {
    throw new SsoRefusal('response_invalid', 'the InResponseTo of the response and of its assertion differ');
  }

  const nameIdElement = child(subject, ASSERTION, 'NameID');
  const nameId = nameIdElement?.textContent?.trim() || null;
  const mapping = mappingOf(row);
  const attributes: Record<string, unknown> = { ...((profile.attributes as Record<string, unknown> | undefined) ?? {}) };
  if (nameId && !('NameID' in attributes)) attributes.NameID = nameId;
  let subjectId: string | null;
  if (mapping.subject) {
    const value = attributes[mapping.subject];
    subjectId = typeof (Array.isArray(value) ? value[0] : value) === 'string' ? String(Array.isArray(value) ? value[0] : value).trim() || null : null;
  } else {
    // A transient NameID changes with every sign-in: it cannot stand for the person.
    subjectId = attr(nameIdElement, 'Format') === TRANSIENT ? null : nameId;
  }
  if (!subjectId) throw new SsoRefusal('subject_missing', mapping.subject ? `attribute ${mapping.subject}` : 'no persistent NameID');

  return {
    identity: { subject: subjectId, attributes, emailVerified: true },
    inResponseTo,
    assertionId,
    validUntil: new Date(Math.max(confirmationEnd, conditionsEnd ?? 0) + SAML_CLOCK_SKEW_MS),
  };
}
