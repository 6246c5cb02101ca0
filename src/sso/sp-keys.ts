// Our own key pair per SAML connection: it signs our AuthnRequests and decrypts encrypted assertions,
// and its certificate is what our SP metadata shows the IdP. IdPs only want the public key in an
// X.509 wrapper, so the certificate is self-signed (RSA 2048, SHA-256), made by `selfsigned`.
// Nothing here verifies anything; the private key is stored sealed (secret-box.ts).
import { generate } from 'selfsigned';

export interface SpKeyPair {
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** Base64 of the DER. */
  certificate: string;
}

export async function newSpKeyPair(cn: string, now: Date): Promise<SpKeyPair> {
  // A minute back: an IdP whose clock is a little behind ours still takes the certificate as valid.
  const notBeforeDate = new Date(now.getTime() - 60_000);
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + 10);
  const pems = await generate([{ name: 'commonName', value: cn }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    ],
  });
  return {
    privateKeyPem: pems.private,
    certificate: pems.cert.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, ''),
  };
}
