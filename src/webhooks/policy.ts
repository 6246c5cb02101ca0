// Who manages webhooks: tenant admins, for their own tenant. A subscription of another tenant is
// never found (the service filters by tenant first, so its id answers 404); a member is 403.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canManageWebhooks = (actor: Actor): boolean => isTenantAdmin(actor);

export const permissions: PermissionRules = { 'webhooks:manage': canManageWebhooks };

export function authorizeWebhooks(actor: Actor): void {
  if (!canManageWebhooks(actor)) throw forbidden('Only admins manage webhooks');
}
