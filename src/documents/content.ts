// A document's body over REST: its current Markdown (`currentMarkdown`, for every read of a whole
// body: content reads, diffs, export), and PUT /api/documents/{id}/content. The store applies the new Markdown
// to the live document as one transaction of minimal edits, so that connected editors receive it
// as an ordinary update, keep their cursors outside the changed runs and their own concurrent
// edits; it is logged as a change by the caller like any other.
import type { DocumentRow, DocumentServices } from './service';

/**
 * Makes the body equal to `markdown` (DocumentTooLargeError past the size limit, nothing changed)
 * and returns the body then: `markdown`, with whatever live editors wrote meanwhile merged in.
 */
export async function replaceContent(svc: Pick<DocumentServices, 'store' | 'search'>, doc: DocumentRow, markdown: string, userId: string): Promise<string> {
  const { text } = await svc.store.replaceText(doc.id, markdown, userId);
  const body = text ?? currentMarkdown(svc, doc);
  await svc.search.writeInTurn(doc.id, body);
  return body;
}

/**
 * The body's current Markdown, cheaply: from memory when the document is open, else the text stored
 * beside its compacted state, without loading Yjs (DocumentStore.getText). UnreadableDocumentError
 * if a body that must be loaded cannot be.
 */
export function currentMarkdown(svc: Pick<DocumentServices, 'store'>, doc: Pick<DocumentRow, 'id'>): string {
  return svc.store.getText(doc.id);
}
