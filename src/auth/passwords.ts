// Password hashing with scrypt (memory-hard, in node:crypto) and timing-safe verification.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const KEY_LENGTH = 32;
const R = 8;
const P = 1;

function scrypt(password: string, salt: Buffer, cost: number, keylen: number): Promise<Buffer> {
  const options: ScryptOptions = { N: cost, r: R, p: P, maxmem: 256 * cost * R + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Format: `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, cost, KEY_LENGTH);
  return ['scrypt', cost, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const cost = Number(parts[1]);
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (!Number.isInteger(cost) || expected.length === 0) return false;
  const actual = await scrypt(password, salt, cost, expected.length);
  return timingSafeEqual(actual, expected);
}

/** A hash to verify against when the account does not exist, so both answers take the same time. */
export async function makeDummyHash(cost: number): Promise<string> {
  return hashPassword(randomBytes(12).toString('hex'), cost);
}

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
