// Fixtures of the SSO tests: throwaway certificates (selfsigned), IdP metadata built from them,
// and a bare OpenID discovery document served on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

export interface Keypair {
  cert: string;
  key: string;
  /** The base64 of the DER, as metadata and the API carry it. */
  certBase64: string;
}

export async function keypair(commonName = 'idp.example.edu'): Promise<Keypair> {
  const pems = await generate([{ name: 'commonName', value: commonName }], { keySize: 2048, algorithm: 'sha256' });
  return { cert: pems.cert, key: pems.private, certBase64: pems.cert.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '') };
}

export function idpMetadata(entityId: string, ssoUrl: string, certs: string[]): string {
  const keys = certs
    .map((c) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${c}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
    .join('');
  return (
    `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">` +
    `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${keys}` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ssoUrl}/post"/>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor>`
  );
}

/** A server that answers only OpenID discovery, naming `issuerOverride` or its own URL as issuer. */
export async function discoveryServer(issuerOverride?: string): Promise<{ issuer: string; close: () => Promise<void> }> {
  let issuer = '';
  const server = http.createServer((req, res) => {
    if (req.url !== '/.well-known/openid-configuration') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer: issuerOverride ?? issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
