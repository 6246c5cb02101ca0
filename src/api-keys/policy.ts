// Who may manage API keys. Pure functions; the caller's credential is part of the facts. A key is
// only ever its owner's: the service looks keys up among the caller's own, so anyone else's key is
// not found (404), never refused.
import type { PermissionRules } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import { forbidden } from '../http/errors';

/**
 * Keys are made from a signed-in session only. A key (or a token obtained with one) that could
 * mint keys would outlive its own expiry and deletion through the keys it made.
 */
export const canCreateApiKey = (actor: Pick<Actor, 'apiKeyId'>): boolean => actor.apiKeyId === undefined;

/** Every user lists, reads and deletes their own keys. */
export const canManageOwnApiKeys = (_actor: Actor): boolean => true;

export const permissions: PermissionRules = { 'api_keys:manage_own': canManageOwnApiKeys };

export function authorizeApiKeys(actor: Actor, action: 'create'): void {
  if (action === 'create' && !canCreateApiKey(actor)) throw forbidden('API keys are created from a signed-in session, not with an API key');
}
