// Opaque secrets (API keys, refresh tokens): random, shown once, stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('base64url');

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

export const API_KEY_PREFIX = 'lms_';

/** `lms_<prefix>_<secret>`: the prefix identifies the key in lists, the secret is never stored. */
export function generateApiKey(): { key: string; prefix: string } {
  const prefix = randomBytes(6).toString('hex');
  return { key: `${API_KEY_PREFIX}${prefix}_${randomToken(32)}`, prefix };
}

export const looksLikeApiKey = (credential: string): boolean => credential.startsWith(API_KEY_PREFIX);
