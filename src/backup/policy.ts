// Who may take a backup: the platform operator alone (users.is_platform_admin), since a backup
// holds every tenant's data. Anyone else is refused with 403: the route says what it is for.
import type { PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

export const canBackUp = (actor: Pick<Actor, 'isPlatformAdmin'>): boolean => actor.isPlatformAdmin;

export const permissions: PermissionRules = { 'backups:create': canBackUp };

export function authorizeBackup(actor: Actor): void {
  if (!canBackUp(actor)) throw forbidden('Only the platform operator can take backups');
}
