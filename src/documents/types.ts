// Types that several modules of the documents area share (services, access, contexts, sharing,
// versions, presenters): kept here, apart from any module's code, so that no two of them import
// each other.
import type { Db } from '../../db/client';
import type { DocumentContextType, documents } from '../../db/schema';
import type { DocumentStore } from '../../collab/store';
import type { AccessChanges } from '../auth/access';
import type { Actor } from '../auth/authenticator';
import type { Clock } from '../lib/clock';
import type { DocumentSearchIndex } from './search';

export type DocumentRow = typeof documents.$inferSelect;
/** The caller, and (an API key's `course_ids`) the only courses whose documents it reaches. */
export type DocumentActor = Pick<Actor, 'userId' | 'tenantId' | 'role'> & { courseIds?: readonly string[] | null };

/** What the document use cases need: the database, the clock, the body store, the search index and whom to tell of access changes. */
export interface DocumentServices {
  db: Db;
  clock: Clock;
  store: DocumentStore;
  search: DocumentSearchIndex;
  access: AccessChanges;
}

/** A course, module or activity a document is (or is to be) linked to. */
export type ContextRef = { type: DocumentContextType; id: string };
