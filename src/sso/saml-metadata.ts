// Reading what an admin gives us of a SAML IdP: its metadata XML (entity ID, the HTTP-Redirect
// SingleSignOnService, the signing certificates) and certificates as PEM or base64. Metadata with a
// DOCTYPE is refused before parsing (no entity expansion, no external entities).
import { X509Certificate, createHash } from 'node:crypto';
import { DOMParser, type Element } from '@xmldom/xmldom';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** Something the admin gave that cannot be used; the message names what. */
export class SamlInputRefused extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export interface IdpDescription {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

export function parseIdpMetadata(xml: string): IdpDescription {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw new SamlInputRefused('idp_metadata_xml', 'metadata must not contain a DOCTYPE or entities');
  const errors: string[] = [];
  let root: Element | null = null;
  try {
    root = new DOMParser({ onError: (level, message) => void (level !== 'warning' && errors.push(message)) }).parseFromString(xml, 'text/xml').documentElement;
  } catch (err) {
    errors.push((err as Error).message);
  }
  if (errors.length || !root) throw new SamlInputRefused('idp_metadata_xml', 'metadata is not well-formed XML');
  const entity =
    root.namespaceURI === MD && root.localName === 'EntityDescriptor'
      ? root
      : root.namespaceURI === MD && root.localName === 'EntitiesDescriptor'
        ? (Array.from(root.getElementsByTagNameNS(MD, 'EntityDescriptor')).find((e) => e.getElementsByTagNameNS(MD, 'IDPSSODescriptor').length > 0) ?? null)
        : null;
  if (!entity) throw new SamlInputRefused('idp_metadata_xml', 'metadata must be an EntityDescriptor of an identity provider');
  const entityId = entity.getAttribute('entityID')?.trim();
  const idp = entity.getElementsByTagNameNS(MD, 'IDPSSODescriptor')[0];
  if (!entityId || !idp) throw new SamlInputRefused('idp_metadata_xml', 'metadata has no entityID or no IDPSSODescriptor');
  const sso = Array.from(idp.getElementsByTagNameNS(MD, 'SingleSignOnService')).find((s) => s.getAttribute('Binding') === REDIRECT);
  const ssoUrl = sso?.getAttribute('Location')?.trim();
  if (!ssoUrl) throw new SamlInputRefused('idp_metadata_xml', 'metadata has no SingleSignOnService with the HTTP-Redirect binding');
  const certificates = Array.from(idp.getElementsByTagNameNS(MD, 'KeyDescriptor'))
    .filter((k) => (k.getAttribute('use') ?? 'signing') === 'signing')
    .flatMap((k) => Array.from(k.getElementsByTagNameNS(DS, 'X509Certificate')).map((c) => c.textContent ?? ''));
  if (certificates.length === 0) throw new SamlInputRefused('idp_metadata_xml', 'metadata has no signing certificate');
  return { entityId, ssoUrl, certificates: certificates.map((c, i) => normalizeCertificate(c, `idp_metadata_xml certificate ${i + 1}`)) };
}

/** The base64 of the DER, from PEM or bare base64 (whitespace ignored); refused unless it is an X.509 certificate. */
export function normalizeCertificate(text: string, field: string): string {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  try {
    if (!/^[A-Za-z0-9+/]+=*$/.test(body)) throw new Error('not base64');
    new X509Certificate(Buffer.from(body, 'base64'));
  } catch {
    throw new SamlInputRefused(field, `${field} is not an X.509 certificate (PEM or base64)`);
  }
  return body;
}

export function certificateInfo(base64: string) {
  const cert = new X509Certificate(Buffer.from(base64, 'base64'));
  return {
    sha256_fingerprint: createHash('sha256').update(cert.raw).digest('hex').toUpperCase().replace(/(..)(?!$)/g, '$1:'),
    subject: cert.subject.replace(/\n/g, ', '),
    not_after: new Date(cert.validTo).toISOString(),
  };
}

export const toPem = (base64: string): string => `-----BEGIN CERTIFICATE-----\n${base64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
