// The live hub asks the documents policy, the same one every REST route uses, what a caller may do:
// their role on the document (course_ids of their API key included) narrowed by the key's scopes.
import type { Db } from '../../db/client';
import type { Actor } from '../auth/authenticator';
import { collabAccessOf } from './policy';
import { documentAccess } from './access';
import type { AccessResolver, CollabAccess } from '../../collab/hub';

export function documentCollabAccess(db: Db): AccessResolver {
  return (actor: Actor, documentId: string): CollabAccess => {
    const access = documentAccess(db, actor, documentId);
    if (!access) return 'unknown';
    return collabAccessOf(actor, access.role);
  };
}
