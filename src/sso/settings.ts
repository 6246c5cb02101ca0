// A tenant's sign-in policy (admins set it): whether its members may still sign in with a
// password, or only through the tenant's identity provider. The password grant reads it
// (src/auth/sign-in-policy.ts); admins always keep their password, so that a broken IdP cannot
// lock the tenant out.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoSettings } from '../../db/schema';
import type { Clock } from '../lib/clock';

export interface SsoSettings {
  member_password_sign_in: boolean;
  updated_at: string | null;
}

export function getSsoSettings(db: Db, tenantId: string): SsoSettings {
  const row = db.select().from(ssoSettings).where(eq(ssoSettings.tenantId, tenantId)).get();
  return { member_password_sign_in: row?.memberPasswordSignIn ?? true, updated_at: row?.updatedAt ?? null };
}

export function updateSsoSettings(db: Db, clock: Clock, tenantId: string, changes: { member_password_sign_in: boolean }): SsoSettings {
  const updatedAt = clock.now().toISOString();
  db.insert(ssoSettings)
    .values({ tenantId, memberPasswordSignIn: changes.member_password_sign_in, updatedAt })
    .onConflictDoUpdate({ target: ssoSettings.tenantId, set: { memberPasswordSignIn: changes.member_password_sign_in, updatedAt } })
    .run();
  return getSsoSettings(db, tenantId);
}
