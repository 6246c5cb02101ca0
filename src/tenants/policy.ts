// Who may manage tenants: the platform operator alone (the admin of the first tenant, made at the
// first start). Everyone else is refused with 403: the routes say what they are for.
import type { PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canManageTenants = (actor: Pick<Actor, 'isPlatformAdmin'>): boolean => actor.isPlatformAdmin;

export const permissions: PermissionRules = { 'tenants:manage': canManageTenants };

const refusals = {
  list: 'Only the platform operator can list tenants',
  create: 'Only the platform operator can create tenants',
  read: 'Only the platform operator can read tenants',
} as const;

export function authorizeTenants(actor: Actor, action: keyof typeof refusals): void {
  if (!canManageTenants(actor)) throw forbidden(refusals[action]);
}
