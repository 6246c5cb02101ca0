// Who imports rosters: tenant admins, for their own tenant. Another tenant's import is never found
// (the service filters by tenant first, so its id answers 404); a member is 403.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canImportRosters = (actor: Actor): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'rosters:import': canImportRosters };

export function authorizeRosters(actor: Actor): void {
  if (!canImportRosters(actor)) throw forbidden('Only admins import rosters');
}
