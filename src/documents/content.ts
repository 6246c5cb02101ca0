// A document's body over REST: its current Markdown (`currentMarkdown`, for every read of a whole
// body: content reads, diffs, export), and PUT /api/documents/{id}/content. The store applies the new Markdown
// to the live document as one transaction of minimal edits, so that connected editors receive it
// as an ordinary update, keep their cursors outside the changed runs and their own concurrent
// edits; it is logged as a change by the caller like any other.
import { and, eq } from 'drizzle-orm';
import type { Snapshot } from '../../collab/store';
import { documents } from '../../db/schema';
import { notFound } from '../http/errors';
import type { DocumentRow, DocumentServices } from './types';

/**
 * Makes the body equal to `markdown` (DocumentTooLargeError past the size limit, nothing changed),
 * indexes it, and returns the body then (`text`: `markdown`, with whatever live editors wrote
 * meanwhile merged in) and the document row as the write left it, so that the caller, whose
 * access was decided before the write, need not read it again; with `snapshotBefore`, the
 * snapshot of the moment before too (revert's).
 */
export async function replaceContent(
  svc: Pick<DocumentServices, 'db' | 'store' | 'search'>,
  doc: Pick<DocumentRow, 'id' | 'tenantId'>,
  markdown: string,
  userId: string,
  options: { snapshotBefore?: boolean } = {},
): Promise<{ before?: Snapshot; text: string; document: DocumentRow }> {
  const replaced = await svc.store.replaceText(doc.id, markdown, userId, options);
  await svc.search.writeInTurn(doc.id, replaced.text);
  // Only an erase while the write waited its turn leaves no row.
  const document = svc.db.select().from(documents).where(and(eq(documents.id, doc.id), eq(documents.tenantId, doc.tenantId))).get();
  if (!document) throw notFound('Document');
  return { ...replaced, document };
}

/**
 * The body's current Markdown, cheaply: from memory when the document is open, else the text stored
 * beside its compacted state, without loading Yjs (DocumentStore.getText). UnreadableDocumentError
 * if a body that must be loaded cannot be.
 */
export function currentMarkdown(svc: Pick<DocumentServices, 'store'>, doc: Pick<DocumentRow, 'id'>): string {
  return svc.store.getText(doc.id);
}
