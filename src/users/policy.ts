// Who may see and change users. Pure functions; the facts they need are passed in.
import type { Actor } from '../auth/authenticator';

export const canListUsers = (actor: Actor): boolean => actor.role === 'admin';

export const canCreateUser = (actor: Actor): boolean => actor.role === 'admin';

/** Admins, and instructors or TAs of some course (to find people to enrol). */
export const canSearchUsers = (actor: Actor, teachesACourse: boolean): boolean =>
  actor.role === 'admin' || teachesACourse;

/** Self, an admin, or someone sharing a course with the user. */
export const canViewUser = (actor: Actor, targetId: string, sharesACourse: boolean): boolean =>
  actor.userId === targetId || actor.role === 'admin' || sharesACourse;

export type UserField = 'name' | 'email' | 'password' | 'role';

/** Self may change name and password; an admin may change anyone's name, email, password and role. */
export function canUpdateUser(actor: Actor, targetId: string, fields: UserField[]): boolean {
  if (actor.role === 'admin') return true;
  if (actor.userId !== targetId) return false;
  return fields.every((f) => f === 'name' || f === 'password');
}

export const canDeleteUser = (actor: Actor): boolean => actor.role === 'admin';

/** The platform operator's account is theirs alone: another admin can neither change nor delete it. */
export const protectsPlatformOperator = (actor: Actor, target: { id: string; isPlatformAdmin: boolean }): boolean =>
  target.isPlatformAdmin && actor.userId !== target.id;
