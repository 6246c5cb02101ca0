// Who may do what on an open connection. Access is decided at connect by the same policy as REST
// (the documents area's resolver), and re-decided here whenever something that can take access
// away happens (the authenticator's access-change signal) and on a timer.
import type { Logger } from 'pino';
import type { Actor, Authenticator } from '../../src/auth/authenticator';
import type { Connection } from './connection';
import { CLOSE } from './protocol';

/** What a caller may do with a document: decided by the documents policy. */
export type CollabAccess = 'edit' | 'read' | 'none' | 'unknown';
export type AccessResolver = (actor: Actor, documentId: string) => CollabAccess;

/**
 * Re-decides each connection's access: gone users, revoked credentials and lost access are
 * disconnected. The decision is taken once per user, API key and document in a pass (a user's tabs, their devices).
 */
export function recheckAccess(connections: Iterable<Connection>, auth: Authenticator, resolve: AccessResolver, logger: Logger): void {
  const decided = new Map<string, CollabAccess>();
  for (const conn of [...connections]) {
    const documentId = conn.room.documentId;
    try {
      const actor = auth.recheck(conn.actor, conn.admittedAtMs);
      if (!actor) {
        conn.close(CLOSE.unauthenticated, 'credential revoked');
        continue;
      }
      // Per credential, not per user: an API key's scopes and course_ids narrow what its holder may do.
      const key = `${actor.userId} ${actor.apiKeyId ?? ''} ${documentId}`;
      let access = decided.get(key);
      if (access === undefined) decided.set(key, (access = resolve(actor, documentId)));
      if (access === 'unknown') conn.close(CLOSE.notFound, 'document no longer available');
      else if (access === 'none') conn.close(CLOSE.forbidden, 'access removed');
      else {
        conn.actor = actor;
        const couldEdit = conn.canEdit;
        conn.canEdit = access === 'edit';
        // Made an editor: ask the client for what it has that the document lacks (edits refused
        // while it could not edit, which its later edits build on), as at connect.
        if (!couldEdit && conn.canEdit) conn.sendSyncStep1();
      }
    } catch (err) {
      logger.error({ err, documentId }, 'collab access re-check failed');
    }
  }
}
