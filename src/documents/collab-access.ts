// The live hub asks the documents policy, the same one every REST route uses, what a caller may do.
import type { Db } from '../../db/client';
import type { Actor } from '../auth/authenticator';
import { canEdit } from './policy';
import { documentAccess } from './access';
import type { AccessResolver, CollabAccess } from '../../collab/hub';

export function documentCollabAccess(db: Db): AccessResolver {
  return (actor: Actor, documentId: string): CollabAccess => {
    const access = documentAccess(db, actor, documentId);
    if (!access) return 'unknown';
    if (!access.role) return 'none';
    return canEdit(access.role) ? 'edit' : 'read';
  };
}
