// Full-text search over documents (SQLite FTS5, table `documents_fts` over `document_search`).
//
// Titles reach the index through triggers on `documents`. Bodies live in Yjs, so the index copies
// each body's Markdown into `document_search.body`: REST writes refresh it synchronously (a search
// right after the write sees it), live edits through the store's change feed once the typing
// pauses (one refresh per burst of keystrokes, not one per keystroke, and at the latest every 30 s
// while typing goes on), in slices that share one transaction. `indexed_through` records the last
// update folded in, so bodies left stale by a crash are found and redone on attach.
import { and, eq, gt, inArray, isNull, max, sql, type SQL } from 'drizzle-orm';
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/client';
import { documentGrants, documentSearch, documentUpdates, documents } from '../../db/schema';
import type { DocumentStore } from '../../collab/store';
import { isLargeBody, yieldToEventLoop } from '../lib/event-loop';
import { preparedFor } from '../lib/prepared';
import { escapeHtml } from '../lib/html';

export const SUGGESTION_LIMIT = 10;
const MAX_QUERY_TERMS = 12;
// Live typing re-indexes a document once it pauses, and at the latest every 30 s while it goes on:
// each refresh re-tokenizes the whole body, too costly per keystroke. REST writes index at once.
const DEFAULT_DEBOUNCE_MS = 2_000;
const DEFAULT_MAX_WAIT_MS = 30_000;
// Refreshes that fall due together run in short slices, one transaction each, with a turn of the
// event loop between them, so that many documents typed into at once never stall live editing.
const REFRESH_SLICE_MS = 3;

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
const HIT_MARKS = /[\uE000\uE001]/g;

/**
 * How much of a body the index holds; words past it are not found. FTS5 tokenizes a body on the
 * request that wrote it (twice for a change: the old text out, the new in), so this bounds that
 * request's time: a whole document of DOCUMENT_MAX_BYTES would hold the event loop far too long.
 */
export const MAX_INDEXED_BODY = 512 * 1024;

/**
 * A body as the index keeps it: its first MAX_INDEXED_BODY characters, the two hit marks, should
 * it hold them, turned into U+FFFD, so that every mark in a snippet is one snippet() put there and
 * none highlights words that are no hit.
 */
export const indexableBody = (markdown: string): string => {
  let end = Math.min(markdown.length, MAX_INDEXED_BODY);
  // Never half a surrogate pair.
  if (end < markdown.length && /[\uD800-\uDBFF]/.test(markdown[end - 1]!)) end--;
  return markdown.slice(0, end).replace(HIT_MARKS, '\uFFFD');
};

/** A snippet() result as safe HTML: escaped text with the hits wrapped in <mark>. */
export function snippetHtml(raw: string): string {
  return escapeHtml(raw)
    .replace(/\uE000([^\uE000\uE001]*)\uE001/g, '<mark>$1</mark>')
    .replace(HIT_MARKS, '');
}

/** A live document's refresh waiting for the typing to pause. */
interface PendingRefresh {
  timer?: NodeJS.Timeout;
  firstChangeAt: number;
  lastChangeAt: number;
}

export class DocumentSearchIndex {
  /** Documents edited live whose debounce is running. */
  private readonly pending = new Map<string, PendingRefresh>();
  /** Documents whose debounce has run out, refreshed by the next slice. */
  private readonly due = new Set<string>();
  private sliceScheduled = false;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** The pause in live typing that a refresh waits for, and the longest it waits while typing goes on. */
  private readonly quietMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly db: Db,
    private readonly store: DocumentStore,
    private readonly opts: { logger?: Logger; debounceMs?: number; maxWaitMs?: number; sliceMs?: number } = {},
  ) {
    this.quietMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.unsubscribe = store.onChange((documentId) => this.schedule(documentId));
  }

  /**
   * Puts `markdown` in the index as the body of the document now (the caller just wrote it). An
   * unchanged body only moves `indexed_through`: writing `body` at all makes FTS5 drop and
   * re-tokenize the whole document.
   */
  write(documentId: string, markdown: string): void {
    this.writeBody(documentId, () => markdown);
  }

  /**
   * `write` of a body just stored, for a large one in a turn of the event loop of its own, leaving
   * the next one (the response) its own too: the store's write, the index's tokenizing and the
   * response's serializing each take milliseconds per MiB, which together would hold the event
   * loop for most of 100 ms. A change stored in between (a live editor's) is in the body by then:
   * the body is read again rather than `markdown` indexed as current. Outside the body's
   * transaction, a failure is logged, not thrown (the body is stored): `reindexStale` finds the
   * entry behind its body at the next start, as it does should the process stop in between.
   */
  async writeInTurn(documentId: string, markdown: string): Promise<void> {
    try {
      if (!isLargeBody(markdown)) return this.write(documentId, markdown);
      const through = this.statements().lastUpdate.get({ documentId })?.id;
      await yieldToEventLoop();
      if (this.statements().lastUpdate.get({ documentId })?.id === through) this.write(documentId, markdown);
      else this.refresh(documentId);
      await yieldToEventLoop();
    } catch (err) {
      this.opts.logger?.warn({ err, documentId }, 'search index write failed');
    }
  }

  /** Re-reads the body from the store into the index. */
  refresh(documentId: string): void {
    this.writeBody(documentId, () => this.store.getText(documentId));
  }

  /** The body is read only for a document still in the index: one erased meanwhile is never loaded. */
  private writeBody(documentId: string, markdown: () => string): void {
    this.cancel(documentId);
    const statements = this.statements();
    const indexed = statements.indexed.get({ documentId });
    if (!indexed) return;
    const body = indexableBody(markdown());
    const through = statements.lastUpdate.get({ documentId })?.id ?? 0;
    if (indexed.body === body) statements.setThrough.run({ documentId, through });
    else statements.setBody.run({ documentId, body, through });
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
    for (const { documentId } of stale) this.due.add(documentId);
    this.refreshDue(Infinity);
    return stale.length;
  }

  /** Runs every debounced refresh now, in one transaction; tests use it. */
  flush(): void {
    for (const [documentId, { timer }] of this.pending) {
      clearTimeout(timer);
      this.due.add(documentId);
    }
    this.pending.clear();
    this.refreshDue(Infinity);
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.due.clear();
  }

  /**
   * A change to a live document: its refresh waits for a pause in the typing. A change to one
   * already waiting only notes the time (no timer work per keystroke); the timer, when it fires,
   * re-arms itself until the pause or the longest wait is reached.
   */
  private schedule(documentId: string): void {
    const now = performance.now();
    const waiting = this.pending.get(documentId);
    if (waiting) {
      waiting.lastChangeAt = now;
      return;
    }
    if (this.due.has(documentId)) return;
    const entry: PendingRefresh = { firstChangeAt: now, lastChangeAt: now };
    this.pending.set(documentId, entry);
    this.arm(documentId, entry, this.quietMs);
  }

  private arm(documentId: string, entry: PendingRefresh, delayMs: number): void {
    entry.timer = setTimeout(() => this.ripen(documentId, entry), delayMs);
    entry.timer.unref();
  }

  private ripen(documentId: string, entry: PendingRefresh): void {
    if (this.pending.get(documentId) !== entry) return;
    const dueAt = Math.min(entry.lastChangeAt + this.quietMs, entry.firstChangeAt + this.maxWaitMs);
    const remaining = dueAt - performance.now();
    // Timers keep whole milliseconds; a fraction left is due now.
    if (remaining >= 1) {
      this.arm(documentId, entry, remaining);
      return;
    }
    this.pending.delete(documentId);
    this.due.add(documentId);
    this.scheduleSlice();
  }

  private cancel(documentId: string): void {
    const entry = this.pending.get(documentId);
    if (entry) clearTimeout(entry.timer);
    this.pending.delete(documentId);
    this.due.delete(documentId);
  }

  /** The next slice, after the I/O of this turn (incoming edits and their broadcasts) has run. */
  private scheduleSlice(): void {
    if (this.sliceScheduled || this.closed) return;
    this.sliceScheduled = true;
    setImmediate(() => {
      this.sliceScheduled = false;
      if (this.closed) return;
      this.refreshDue(this.opts.sliceMs ?? REFRESH_SLICE_MS);
      if (this.due.size > 0) this.scheduleSlice();
    });
  }

  /**
   * Refreshes due documents in one transaction until about `budgetMs` have passed. Live edits
   * still queued in the store are stored (and broadcast) first, outside this transaction: the
   * hub must never send an update whose row is not yet committed.
   */
  private refreshDue(budgetMs: number): void {
    if (this.due.size === 0) return;
    this.store.flush();
    const started = performance.now();
    try {
      inTransaction(this.db, () => {
        for (const documentId of this.due) {
          this.refreshQuietly(documentId);
          if (performance.now() - started >= budgetMs) break;
        }
      });
    } catch (err) {
      // Only the commit itself can fail here. The rows left stale still have `indexed_through`
      // behind their log, so the next edit or the next start indexes them again.
      this.opts.logger?.warn({ err }, 'search index refresh could not be committed');
    }
  }

  /** The index's statements, prepared once per database: live typing refreshes many times a second. */
  private statements() {
    return preparedFor(this.db, 'documents:search-index', () => {
      const p = sql.placeholder;
      const ofDocument = eq(documentSearch.documentId, p('documentId'));
      return {
        indexed: this.db.select({ body: documentSearch.body }).from(documentSearch).where(ofDocument).prepare(),
        lastUpdate: this.db
          .select({ id: max(documentUpdates.id) })
          .from(documentUpdates)
          .where(eq(documentUpdates.documentId, p('documentId')))
          .prepare(),
        setBody: this.db
          .update(documentSearch)
          .set({ body: sql`${p('body')}`, indexedThrough: sql`${p('through')}` })
          .where(ofDocument)
          .prepare(),
        setThrough: this.db.update(documentSearch).set({ indexedThrough: sql`${p('through')}` }).where(ofDocument).prepare(),
      };
    });
  }

  /**
   * A refresh off the request path: the document may have been erased meanwhile. A failing
   * statement undoes only itself (SQLite's statement atomicity), so the slice's other documents are
   * still committed. (No savepoint per document: FTS5 writes a new segment at each one.)
   */
  private refreshQuietly(documentId: string): void {
    try {
      this.refresh(documentId);
    } catch (err) {
      this.opts.logger?.warn({ err, documentId }, 'search index refresh failed');
    }
  }
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
 * Relevance is computed for at most this many matches, the newest the caller may see: exact below
 * it, the best of the newest above it (a one-letter query), so a suggestion never scores thousands.
 */
export const RANK_WINDOW = 1000;

/**
 * The best matches among the documents the `grants` condition (on document_grants) admits, outside
 * the trash, best first (bm25, a title hit weighing ten body hits), each with a snippet of its body.
 *
 * The plan is deliberate: FTS5 walks its matches newest first while SQLite checks each rowid
 * against the caller's visible set (`+rowid` keeps SQLite from handing the IN list to FTS5 as
 * per-row lookups, which re-run the query once per row), and bm25 runs only for the rows that pass.
 * Snippets are then made for the chosen few alone.
 */
export function suggestDocuments(db: Db, tenantId: string, grants: SQL, match: string, limit = SUGGESTION_LIMIT): Suggestion[] {
  const ranked = db.all<{ rid: number; score: number }>(sql`
    SELECT c.rid AS rid, c.score AS score FROM (
      SELECT rowid AS rid, bm25(documents_fts, 10.0, 1.0) AS score
      FROM documents_fts
      WHERE documents_fts MATCH ${match}
        AND +rowid IN (
          SELECT ${documentSearch.id} FROM ${documentGrants}
          JOIN ${documentSearch} ON ${documentSearch.documentId} = ${documentGrants.documentId}
          WHERE ${grants})
        AND +rowid NOT IN (
          SELECT ${documentSearch.id} FROM ${documents}
          JOIN ${documentSearch} ON ${documentSearch.documentId} = ${documents.id}
          WHERE ${documents.tenantId} = ${tenantId} AND ${documents.trashedAt} IS NOT NULL)
      ORDER BY rowid DESC
      LIMIT ${RANK_WINDOW}
    ) AS c
    ORDER BY c.score, c.rid DESC
    LIMIT ${limit}`);
  if (ranked.length === 0) return [];
  const rids = ranked.map((r) => r.rid);
  const snippets = new Map(
    db
      .all<{ rid: number; snippet: string | null }>(sql`
        SELECT rowid AS rid, snippet(documents_fts, 1, ${HIT_OPEN}, ${HIT_CLOSE}, '…', 16) AS snippet
        FROM documents_fts
        WHERE documents_fts MATCH ${match} AND +rowid IN (${sql.join(rids.map((r) => sql`${r}`), sql`, `)})`)
      .map((r) => [r.rid, r.snippet ?? ''] as const),
  );
  const meta = new Map(
    db
      .select({ rid: documentSearch.id, id: documents.id, title: documents.title, category: documents.category, updatedAt: documents.updatedAt })
      .from(documentSearch)
      .innerJoin(documents, eq(documents.id, documentSearch.documentId))
      .where(and(inArray(documentSearch.id, rids), eq(documents.tenantId, tenantId), isNull(documents.trashedAt)))
      .all()
      .map((r) => [r.rid, r] as const),
  );
  return rids.flatMap((rid) => {
    const row = meta.get(rid);
    if (!row) return [];
    return [{ id: row.id, title: row.title, category: row.category, updatedAt: row.updatedAt, snippet: snippetHtml(snippets.get(rid) ?? '') }];
  });
}
