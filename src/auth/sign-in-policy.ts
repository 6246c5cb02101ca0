// Whether a user may sign in with a password: a tenant can send its members (not its admins)
// through single sign-on only (sso_settings, managed in src/sso/settings.ts).
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoSettings, type users } from '../../db/schema';
import { AppError } from '../http/errors';

export function checkPasswordSignInAllowed(db: Db, user: Pick<typeof users.$inferSelect, 'tenantId' | 'role'>): void {
  if (user.role === 'admin') return;
  const settings = db.select({ allowed: ssoSettings.memberPasswordSignIn }).from(ssoSettings).where(eq(ssoSettings.tenantId, user.tenantId)).get();
  if (settings && !settings.allowed) {
    throw new AppError('password_sign_in_disabled', "This organisation's members sign in through its identity provider (single sign-on), not with a password");
  }
}
