// Who may manage API keys. Pure functions; the caller's credential is part of the facts.
import type { Actor } from '../auth/authenticator';

/**
 * Keys are made from a signed-in session only. A key (or a token obtained with one) that could
 * mint keys would outlive its own expiry and deletion through the keys it made.
 */
export const canCreateApiKey = (actor: Pick<Actor, 'apiKeyId'>): boolean => actor.apiKeyId === undefined;
