// Our own key pair per SAML connection: it signs our AuthnRequests and decrypts encrypted assertions,
// and its certificate is what our SP metadata shows the IdP. IdPs only want the public key in an
// X.509 wrapper, so the certificate is self-signed, made here with node:crypto (RSA 2048, SHA-256):
// the DER of a version 1 certificate is a few nested sequences, signed by Node. Nothing here
// verifies anything; the private key is stored sealed (secret-box.ts).
import { generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsa = promisify(generateKeyPair);

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...parts: Buffer[]) => tlv(0x30, ...parts);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a! + b!];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128);
      if (v < 128) break;
    }
    out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280, 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}

const commonName = (cn: string) => sequence(tlv(0x31, sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const sha256WithRsa = sequence(oid('1.2.840.113549.1.1.11'), tlv(0x05));

/** A self-signed X.509 certificate (base64 of the DER) for this key pair. */
export function selfSignedCertificate(keys: { publicKey: KeyObject; privateKey: KeyObject }, cn: string, notBefore: Date, years = 10): string {
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // a positive INTEGER
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + years);
  const tbs = sequence(
    tlv(0x02, serial),
    sha256WithRsa,
    commonName(cn),
    sequence(time(notBefore), time(notAfter)),
    commonName(cn),
    keys.publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, keys.privateKey);
  return sequence(tbs, sha256WithRsa, tlv(0x03, Buffer.from([0]), signature)).toString('base64');
}

export interface SpKeyPair {
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** Base64 of the DER. */
  certificate: string;
}

export async function newSpKeyPair(cn: string, now: Date): Promise<SpKeyPair> {
  const keys = await generateRsa('rsa', { modulusLength: 2048 });
  // A minute back: an IdP whose clock is a little behind ours still takes the certificate as valid.
  return {
    privateKeyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certificate: selfSignedCertificate(keys, cn, new Date(now.getTime() - 60_000)),
  };
}
