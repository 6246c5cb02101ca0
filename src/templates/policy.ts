// Who may do what to the tenant's templates. Every member of the tenant lists, reads, renders and
// instantiates them; tenant admins and instructors (of any course of the tenant) create them; a
// template is changed or deleted by a tenant admin or by the one who created it.
import { isTenantAdmin } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

/** `teachesACourse` costs a query: asked only for a caller who is not an admin. */
export const canCreateTemplate = (actor: Pick<Actor, 'role'>, teachesACourse: () => boolean): boolean =>
  isTenantAdmin(actor) || teachesACourse();

export const canManageTemplate = (actor: Pick<Actor, 'role' | 'userId'>, template: { createdBy: string }): boolean =>
  isTenantAdmin(actor) || template.createdBy === actor.userId;

export type TemplateAction = { action: 'use' } | { action: 'create'; teachesACourse: () => boolean } | { action: 'manage'; template: { createdBy: string } };

/** The one entry the routes call; another tenant's template never reaches it (the service answers 404). */
export function authorizeTemplate(actor: Pick<Actor, 'role' | 'userId'>, what: TemplateAction): void {
  if (what.action === 'create' && !canCreateTemplate(actor, what.teachesACourse)) {
    throw forbidden('Only tenant admins and instructors can create templates');
  }
  if (what.action === 'manage' && !canManageTemplate(actor, what.template)) {
    throw forbidden('Only tenant admins and the creator of a template can change or delete it');
  }
}
