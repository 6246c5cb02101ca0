// Who may see and change groups. Any member of the tenant reads them (to share documents with a
// group); admins create, change, fill and delete them. A group of another tenant is never found:
// routes look the group up before asking, so its id answers 404 to everyone outside the tenant.
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canReadGroups = (_actor: Actor): boolean => true;

export const canManageGroups = (actor: Actor): boolean => isTenantAdmin(actor);

/**
 * A member may not read other users' emails (GET /api/users/{id} refuses them), so a group shows
 * every member's email to admins, and to a member their own.
 */
export const canSeeMemberEmail = (actor: Actor, memberId: string): boolean => isTenantAdmin(actor) || actor.userId === memberId;

export const permissions: PermissionRules = { 'groups:read': canReadGroups, 'groups:write': canManageGroups };

export function authorizeGroups(actor: Actor, action: 'read' | 'manage'): void {
  if (action === 'manage' && !canManageGroups(actor)) throw forbidden('Only admins can change groups');
}
