// Who manages single sign-on: tenant admins, for their own tenant. Another tenant's connection is
// never found (the service filters by tenant first: 404); a member is 403. Signing in through a
// connection needs no rights: it is how a person gets them.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canManageSso = (actor: Actor): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'sso:manage': canManageSso };

export function authorizeSso(actor: Actor): void {
  if (!canManageSso(actor)) throw forbidden('Only admins manage single sign-on');
}
