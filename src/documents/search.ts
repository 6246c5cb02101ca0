// Full-text search over documents (SQLite FTS5, table `documents_fts` over `document_search`).
//
// Titles reach the index through triggers on `documents`. Bodies live in Yjs, so the index copies
// each body's Markdown into `document_search.body`: REST writes refresh it synchronously (a search
// right after the write sees it), live edits through the store's change feed after a short
// debounce (one refresh per burst of keystrokes, not one per keystroke). `indexed_through` records
// the last update folded in, so bodies left stale by a crash are found and redone on attach.
import { eq, gt, max, sql, type SQL } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../db/client';
import { documentSearch, documentUpdates, documents } from '../../db/schema';
import type { DocumentStore } from '../../collab/store';
import type { Deps } from '../context';

export const SUGGESTION_LIMIT = 10;
const MAX_QUERY_TERMS = 12;
// Live typing re-indexes a document at most every two seconds; REST writes index at once.
const DEFAULT_DEBOUNCE_MS = 2_000;

// FTS5's unicode61 tokenizer splits on everything but letters, digits and marks; splitting the
// same way and quoting each term means no input can reach FTS5 as syntax (AND, NEAR, ", *, ^ …).
const TERM = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/** The caller's words as an FTS5 query of quoted prefix terms (all must match), or null for none. */
export function ftsPrefixQuery(input: string): string | null {
  const terms = input.normalize('NFKC').match(TERM)?.slice(0, MAX_QUERY_TERMS) ?? [];
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term}"*`).join(' ');
}

// Private-use characters mark the hits inside snippet(); the text is HTML-escaped afterwards and
// only then are the marks turned into <mark> tags, so body text can never inject markup.
export const HIT_OPEN = '\uE000';
export const HIT_CLOSE = '\uE001';
const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** A snippet() result as safe HTML: escaped text with the hits wrapped in <mark>. */
export function snippetHtml(raw: string): string {
  return raw
    .replace(/[&<>"']/g, (ch) => escapes[ch]!)
    .replace(/\uE000([^\uE000\uE001]*)\uE001/g, '<mark>$1</mark>')
    .replace(/[\uE000\uE001]/g, '');
}

export class DocumentSearchIndex {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly db: Db,
    private readonly store: DocumentStore,
    private readonly opts: { logger?: Logger; debounceMs?: number } = {},
  ) {
    this.unsubscribe = store.onChange((documentId) => this.schedule(documentId));
  }

  /** Puts `markdown` in the index as the body of the document now (the caller just wrote it). */
  write(documentId: string, markdown: string): void {
    this.cancel(documentId);
    const through =
      this.db.select({ id: max(documentUpdates.id) }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).get()?.id ?? 0;
    this.db.update(documentSearch).set({ body: markdown, indexedThrough: through }).where(eq(documentSearch.documentId, documentId)).run();
  }

  /** Re-reads the body from the store into the index. */
  refresh(documentId: string): void {
    this.write(documentId, this.store.getText(documentId));
  }

  /** Refreshes every body that changed since it was last indexed (after a crash, or a migration). */
  reindexStale(): number {
    const stale = this.db
      .select({ documentId: documentSearch.documentId })
      .from(documentSearch)
      .where(
        gt(
          sql`(SELECT max(${documentUpdates.id}) FROM ${documentUpdates} WHERE ${documentUpdates.documentId} = ${documentSearch.documentId})`,
          documentSearch.indexedThrough,
        ),
      )
      .all();
    for (const { documentId } of stale) this.refreshQuietly(documentId);
    return stale.length;
  }

  /** Runs every debounced refresh now; tests and shutdown use it. */
  flush(): void {
    for (const documentId of [...this.pending.keys()]) this.refreshQuietly(documentId);
  }

  close(): void {
    this.unsubscribe();
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private schedule(documentId: string): void {
    if (this.pending.has(documentId)) return;
    const timer = setTimeout(() => this.refreshQuietly(documentId), this.opts.debounceMs ?? DEFAULT_DEBOUNCE_MS);
    timer.unref();
    this.pending.set(documentId, timer);
  }

  private cancel(documentId: string): void {
    const timer = this.pending.get(documentId);
    if (timer) clearTimeout(timer);
    this.pending.delete(documentId);
  }

  /** A refresh off the request path: the document may have been erased meanwhile. */
  private refreshQuietly(documentId: string): void {
    this.cancel(documentId);
    try {
      const exists = this.db.select({ id: documentSearch.id }).from(documentSearch).where(eq(documentSearch.documentId, documentId)).get();
      if (exists) this.refresh(documentId);
    } catch (err) {
      this.opts.logger?.warn({ err, documentId }, 'search index refresh failed');
    }
  }
}

const indexes = new WeakMap<DocumentStore, DocumentSearchIndex>();

/**
 * The search index of an app's document store, created (and caught up) on first use. The server
 * calls it at start so that live edits are indexed before any documents request arrives.
 */
export function searchIndexOf(deps: Pick<Deps, 'db' | 'documents' | 'logger'>): DocumentSearchIndex {
  let index = indexes.get(deps.documents);
  if (!index) {
    index = new DocumentSearchIndex(deps.db, deps.documents, { logger: deps.logger });
    indexes.set(deps.documents, index);
    index.reindexStale();
  }
  return index;
}

/** `documents.id` is among the documents whose title or body match an `ftsPrefixQuery`. */
export function matchesText(match: string): SQL {
  return sql`${documents.id} IN (SELECT ${documentSearch.documentId} FROM ${documentSearch} WHERE ${documentSearch.id} IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ${match}))`;
}

export interface Suggestion {
  id: string;
  title: string;
  category: string | null;
  updatedAt: string;
  snippet: string;
}

/**
 * The best matches among the documents `visible` admits, best first (bm25, a title hit weighing
 * ten body hits), each with a snippet of its body around the hits.
 */
export function suggestDocuments(db: Db, tenantId: string, visible: SQL, match: string, limit = SUGGESTION_LIMIT): Suggestion[] {
  const rows = db.all<{ id: string; title: string; category: string | null; updatedAt: string; snippet: string | null }>(sql`
    SELECT ${documents.id} AS id, ${documents.title} AS title, ${documents.category} AS category,
           ${documents.updatedAt} AS updatedAt,
           snippet(documents_fts, 1, ${HIT_OPEN}, ${HIT_CLOSE}, '…', 16) AS snippet
    FROM documents_fts
    JOIN ${documentSearch} ON ${documentSearch.id} = documents_fts.rowid
    JOIN ${documents} ON ${documents.id} = ${documentSearch.documentId}
    WHERE documents_fts MATCH ${match}
      AND ${documentSearch.tenantId} = ${tenantId}
      AND ${documents.trashedAt} IS NULL
      AND ${visible}
    ORDER BY bm25(documents_fts, 10.0, 1.0)
    LIMIT ${limit}`);
  return rows.map((r) => ({ ...r, snippet: snippetHtml(r.snippet ?? '') }));
}
