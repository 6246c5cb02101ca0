// How every area decides who may do what, and what it does when access changes. A new area copies
// this shape; nothing else in the server checks a role.
//
// 1. The area's policy.ts holds pure can…(actor, thing, facts) functions: no I/O, no throwing.
//    The facts a rule needs beyond the caller (their enrollment in the course, their grant on the
//    document) are loaded by the area's service with the thing; a fact that costs a query and is
//    not always needed may be passed as a function, asked only when the rule gets to it.
// 2. policy.ts has one authorize…(actor, action, …) entry, and routes (and the live hub) call
//    only that. It throws 404 when the caller may not know the thing exists (exactly as another
//    tenant's thing would answer) and 403 when they may see it but not do this.
// 3. Tenant-wide rights are reported by GET /api/users/me/permissions from the same can…
//    functions: each area's policy.ts exports its `permissions`, listed in src/areas.ts.
// 4. A write that changes someone's access (a deletion, a role, a share, a group membership)
//    tells AccessChanges from the service that makes it, never from a route: the authenticator
//    re-reads cached credentials and live connections re-decide what they may do.
import type { Actor } from './authenticator';

/** Told by every write that changes who may do what. The authenticator implements it. */
export interface AccessChanges {
  /** Access was taken away (a user, key, course or grant gone, a role lowered). */
  narrowed(): void;
  /** Access was given (a grant added or raised, a group joined): live connections re-decide. */
  widened(): void;
}

/** What a service that changes access needs besides its database. */
export interface AccessWriter {
  access: AccessChanges;
}

/** A tenant-wide right by name, decided by an area's can… function. */
export type PermissionRules = Readonly<Record<string, (actor: Actor) => boolean>>;

/** The names of the rights the caller holds, in the order the rules list them. */
export const permissionsOf = (rules: PermissionRules, actor: Actor): string[] =>
  Object.keys(rules).filter((name) => rules[name]!(actor));

/** A tenant admin (or the platform operator, who is one). */
export const isTenantAdmin = (actor: Pick<Actor, 'role'>): boolean => actor.role === 'admin';
