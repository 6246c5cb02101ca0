// What an export reads: the document's metadata and its Markdown now (the store's getText: the
// live body when editors hold it open, else the text stored beside the state), or a named version's.
import { UnreadableDocumentError, type DocumentStore } from '../collab/store';
import type { Db } from '../db/client';
import type { DocumentRow } from '../src/documents/service';
import { getVersion, versionText } from '../src/documents/versions';
import type { ExportSource } from './formats';

export function exportSource(db: Db, store: DocumentStore, document: DocumentRow, versionId?: string): ExportSource {
  try {
    return readSource(db, store, document, versionId);
  } catch (err) {
    if (err instanceof UnreadableDocumentError) {
      throw new UnreadableDocumentError(err.message, 'The stored body of this document cannot be loaded, so it cannot be exported');
    }
    throw err;
  }
}

function readSource(db: Db, store: DocumentStore, document: DocumentRow, versionId?: string): ExportSource {
  const base = {
    id: document.id,
    title: document.title,
    category: document.category,
    createdBy: document.createdBy,
    createdAt: document.createdAt,
    updatedAt: document.updatedAt,
  };
  if (versionId === undefined) return { ...base, markdown: store.getText(document.id), version: null };
  const version = getVersion(db, document, versionId);
  return { ...base, markdown: versionText(db, version), version: { id: version.id, name: version.name, createdAt: version.createdAt } };
}
