// The first admin's generated password: written once to a file in the data folder that only the
// server's user can read (never to the console or the log, which end up in journald and log
// collectors), and removed when that admin first signs in, or their password is reset.
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { systemState } from '../../db/schema';

export const INITIAL_PASSWORD_FILE = 'initial-admin-password';
/** system_state row naming the admin whose password the file holds, while it exists. */
const HELD_FOR = 'initial_admin_password_user';

export const initialPasswordFile = (dataDir: string): string => path.join(dataDir, INITIAL_PASSWORD_FILE);

/** Writes the file (0600, replacing any earlier one); throws when it cannot, before anyone is created. */
export function writeInitialPassword(dataDir: string, password: string): string {
  const file = initialPasswordFile(dataDir);
  rmSync(file, { force: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  // The mode given at creation is narrowed by the umask only, never widened; made exact anyway.
  chmodSync(file, 0o600);
  return file;
}

/** Records, in the transaction that creates the admin, whose password the file holds. */
export function recordInitialPasswordHolder(tx: Db, userId: string): void {
  tx.insert(systemState).values({ key: HELD_FOR, value: userId }).run();
}

/** Removes the file once its admin has signed in (or had the password reset); a no-op otherwise. */
export function forgetInitialPassword(db: Db, dataDir: string, userId: string): void {
  const held = db.select().from(systemState).where(eq(systemState.key, HELD_FOR)).get();
  if (held?.value !== userId) return;
  rmSync(initialPasswordFile(dataDir), { force: true });
  db.delete(systemState).where(eq(systemState.key, HELD_FOR)).run();
}
