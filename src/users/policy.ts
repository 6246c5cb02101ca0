// Who may see and change users. Pure functions; the facts they need are passed in (a fact that
// costs a query, such as sharing a course, as a function asked only when the rule needs it).
import { isTenantAdmin, type PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canListUsers = (actor: Actor): boolean => isTenantAdmin(actor);

export const canCreateUser = (actor: Actor): boolean => isTenantAdmin(actor);

/** Admins, and instructors of some course (to find people to enrol). */
export const canSearchUsers = (actor: Actor, teachesACourse: boolean): boolean => isTenantAdmin(actor) || teachesACourse;

/** Self, an admin, or someone sharing a course with the user. */
export const canViewUser = (actor: Actor, targetId: string, sharesACourse: boolean): boolean =>
  actor.userId === targetId || isTenantAdmin(actor) || sharesACourse;

/** Deleted users stay readable (and listable) by admins only. */
export const canSeeDeletedUsers = (actor: Actor): boolean => isTenantAdmin(actor);

export type UserField = 'name' | 'email' | 'password' | 'role' | 'timezone';

/** Self may change name, password and time zone; an admin may change anyone's fields, email and role included. */
export function canUpdateUser(actor: Actor, targetId: string, fields: UserField[]): boolean {
  if (isTenantAdmin(actor)) return true;
  if (actor.userId !== targetId) return false;
  return fields.every((f) => f === 'name' || f === 'password' || f === 'timezone');
}

export const canDeleteUser = (actor: Actor): boolean => isTenantAdmin(actor);

/** Admins send (and send again) invitations to set a password. */
export const canInviteUser = (actor: Actor): boolean => isTenantAdmin(actor);

/** The platform operator's account is theirs alone: another admin can neither change nor delete it. */
export const protectsPlatformOperator = (actor: Actor, target: { id: string; isPlatformAdmin: boolean }): boolean =>
  target.isPlatformAdmin && actor.userId !== target.id;

export const permissions: PermissionRules = {
  'users:read': canListUsers,
  'users:write': canCreateUser,
  'users:delete': canDeleteUser,
};

type Target = { id: string; isPlatformAdmin: boolean };

export type UserAccess =
  | { action: 'list' | 'create' }
  | { action: 'search'; teachesACourse: () => boolean }
  | { action: 'view'; targetId: string; sharesACourse: () => boolean }
  | { action: 'update'; target: Target; fields: UserField[] }
  | { action: 'delete'; target: Target }
  | { action: 'invite'; target: Target };

/**
 * The one entry the routes call, once the target (if any) is found: a user of another tenant is
 * never found (the service looks users up in the caller's tenant only, 404), so every refusal
 * here is a 403.
 */
export function authorizeUser(actor: Actor, access: UserAccess): void {
  switch (access.action) {
    case 'list':
      if (!canListUsers(actor)) throw forbidden('Only admins can list users');
      return;
    case 'create':
      if (!canCreateUser(actor)) throw forbidden('Only admins can create users');
      return;
    case 'search':
      if (!canSearchUsers(actor, isTenantAdmin(actor) || access.teachesACourse())) throw forbidden('Only admins and instructors can search users');
      return;
    case 'view': {
      const shares = () => actor.userId !== access.targetId && !isTenantAdmin(actor) && access.sharesACourse();
      if (!canViewUser(actor, access.targetId, shares())) throw forbidden('You can only see users who share a course with you');
      return;
    }
    case 'update':
      if (!canUpdateUser(actor, access.target.id, access.fields)) {
        throw forbidden(actor.userId === access.target.id ? 'Only an admin can change email or role' : 'You can only update your own profile');
      }
      if (protectsPlatformOperator(actor, access.target)) throw forbidden('Only the platform operator can change their own account');
      return;
    case 'delete':
      if (!canDeleteUser(actor)) throw forbidden('Only admins can delete users');
      if (protectsPlatformOperator(actor, access.target)) throw forbidden('The platform operator account cannot be deleted by another admin');
      return;
    case 'invite':
      if (!canInviteUser(actor)) throw forbidden('Only admins can invite users');
      if (protectsPlatformOperator(actor, access.target)) throw forbidden('Only the platform operator can change their own account');
      return;
  }
}
