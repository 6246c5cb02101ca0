// A document's body over REST: PUT /api/documents/{id}/content. The store applies the new Markdown
// to the live document as one transaction of minimal edits, so that connected editors receive it
// as an ordinary update, keep their cursors outside the changed runs and their own concurrent
// edits; it is logged as a change by the caller like any other.
import type { DocumentRow, DocumentServices } from './service';

/** Makes the body equal to `markdown` (DocumentTooLargeError past the size limit, nothing changed). */
export function replaceContent(svc: Pick<DocumentServices, 'store' | 'search'>, doc: DocumentRow, markdown: string, userId: string): void {
  svc.store.replaceText(doc.id, markdown, userId);
  svc.search.write(doc.id, markdown);
}
