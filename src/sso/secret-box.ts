// Client secrets of SSO connections are stored encrypted (AES-256-GCM), so that a copy of the
// database alone (a backup, a support dump) does not hand out the tenant's IdP credentials. The key
// is SSO_SECRET_KEY when set, otherwise 32 random bytes kept in DATA_DIR/sso-secret.key, made on
// first use with owner-only permissions.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const SECRET_KEY_FILE = 'sso-secret.key';

export class SecretBox {
  private key: Buffer | undefined;

  constructor(private readonly source: { secretKey?: string; dataDir: string }) {}

  private keyBytes(): Buffer {
    if (this.key) return this.key;
    if (this.source.secretKey) return (this.key = createHash('sha256').update(this.source.secretKey).digest());
    const file = path.join(this.source.dataDir, SECRET_KEY_FILE);
    try {
      fs.mkdirSync(this.source.dataDir, { recursive: true });
      // `wx`: two processes starting together never each write their own key.
      fs.writeFileSync(file, randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`);
    return (this.key = key);
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keyBytes(), iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.keyBytes(), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
