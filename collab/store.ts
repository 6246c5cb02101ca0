// The document store: the only writer of document bodies.
//
// A body is a Y.Doc with one Y.Text named `content` (Markdown). Every change is appended to
// `document_updates` (author, time, bytes) BEFORE anyone is told about it, so nothing a client has
// seen can be lost on a crash. Loading replays the compacted state plus the log since; past a
// threshold the log is folded into `document_states`, keeping each row's metadata as history.
//
// Documents that live editors hold open (acquire/release) stay in memory as one shared Y.Doc;
// any other access loads the body, works on it and lets it go. REST writes (create, revert,
// templates) and WebSocket edits go through the same `apply` path, so live editors receive REST
// writes as ordinary updates.
import { and, count, desc, eq, gt, isNotNull, lte, sql } from 'drizzle-orm';
import { diffChars } from 'diff';
import type { Logger } from 'pino';
import * as Y from 'yjs';
import type { Db } from '../db/client';
import { documentStates, documentUpdates, documents } from '../db/schema';
import type { Clock } from '../src/clock';

export const CONTENT_FIELD = 'content';

const TOUCH_INTERVAL_MS = 1_000;

export type UpdateListener = (update: Uint8Array, origin: unknown) => void;

/** Thrown for bytes that are not a valid Yjs update; nothing was stored. */
export class InvalidUpdateError extends Error {}

/** Thrown when the document has no row (never created, or erased). */
export class UnknownDocumentError extends Error {}

/** Writing to the log failed; the update was neither stored nor passed on. */
export class PersistenceError extends Error {}

/** Transaction origin carrying the author, so the update handler can record who wrote. */
class Authored {
  constructor(
    readonly userId: string | null,
    readonly source: unknown,
  ) {}
}

interface LoadedDoc {
  id: string;
  tenantId: string;
  doc: Y.Doc;
  /** Live holders (WebSocket connections); 0 for a transient load. */
  refs: number;
  listeners: Set<UpdateListener>;
  updatesSinceCompaction: number;
  /** When `documents.updated_at` was last written for this document, and when it last changed (ms). */
  touchedAt: number;
  editedAt: number;
  lastUpdateId: number;
}

export interface StoreOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** Fold the log into the state row once this many updates have accumulated. */
  compactAfter?: number;
}

export interface ChangeRow {
  id: number;
  userId: string | null;
  createdAt: string;
  bytes: number;
}

export class DocumentStore {
  private readonly live = new Map<string, LoadedDoc>();
  private readonly changeListeners = new Set<(documentId: string) => void>();
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly logger?: Logger;
  private readonly compactAfter: number;
  private readonly insertUpdate;
  private readonly touchDocument;

  constructor(opts: StoreOptions) {
    this.db = opts.db;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.compactAfter = opts.compactAfter ?? 500;
    // Prepared once: the log write is the hot path of live editing.
    this.insertUpdate = this.db
      .insert(documentUpdates)
      .values({
        documentId: sql.placeholder('documentId'),
        tenantId: sql.placeholder('tenantId'),
        userId: sql.placeholder('userId'),
        createdAt: sql.placeholder('createdAt'),
        bytes: sql.placeholder('bytes'),
        data: sql.placeholder('data'),
      })
      .returning({ id: documentUpdates.id })
      .prepare();
    this.touchDocument = this.db
      .update(documents)
      .set({ updatedAt: sql`${sql.placeholder('updatedAt')}` })
      .where(eq(documents.id, sql.placeholder('id')))
      .prepare();
  }

  // ---- live documents (the WebSocket hub) ----

  /** Loads the document (once) and keeps it in memory until every holder has released it. */
  acquire(documentId: string): Y.Doc {
    let loaded = this.live.get(documentId);
    if (!loaded) {
      loaded = this.load(documentId);
      this.live.set(documentId, loaded);
    }
    loaded.refs += 1;
    return loaded.doc;
  }

  /** The last release compacts what the session wrote and unloads the document. */
  release(documentId: string): void {
    const loaded = this.live.get(documentId);
    if (!loaded) return;
    loaded.refs -= 1;
    if (loaded.refs > 0) return;
    this.live.delete(documentId);
    try {
      if (loaded.editedAt > loaded.touchedAt) {
        this.touchDocument.run({ id: documentId, updatedAt: new Date(loaded.editedAt).toISOString() });
      }
      if (loaded.updatesSinceCompaction > 0) this.compactLoaded(loaded);
    } catch (err) {
      // The log already holds every update; a failed compaction only costs load time later.
      this.logger?.warn({ err, documentId }, 'compaction on unload failed');
    } finally {
      loaded.listeners.clear();
      loaded.doc.destroy();
    }
  }

  isLive(documentId: string): boolean {
    return this.live.has(documentId);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Every stored update of a live document, with the origin passed to `applyUpdate`. */
  subscribe(documentId: string, listener: UpdateListener): () => void {
    const loaded = this.live.get(documentId);
    if (!loaded) throw new Error(`subscribe needs an acquired document (${documentId})`);
    loaded.listeners.add(listener);
    return () => loaded.listeners.delete(listener);
  }

  /** Fired after any stored change of any document (REST or live); the search index listens. */
  onChange(listener: (documentId: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  // ---- reading ----

  getText(documentId: string): string {
    return this.with(documentId, (loaded) => loaded.doc.getText(CONTENT_FIELD).toString());
  }

  /** The full encoded state: what a named version keeps. */
  encodeState(documentId: string): Uint8Array {
    return this.with(documentId, (loaded) => Y.encodeStateAsUpdate(loaded.doc));
  }

  /** The change history, newest first: one row per stored update, compacted or not. */
  listChanges(documentId: string, page: { limit: number; offset: number }): { rows: ChangeRow[]; total: number } {
    const rows = this.db
      .select({
        id: documentUpdates.id,
        userId: documentUpdates.userId,
        createdAt: documentUpdates.createdAt,
        bytes: documentUpdates.bytes,
      })
      .from(documentUpdates)
      .where(eq(documentUpdates.documentId, documentId))
      .orderBy(desc(documentUpdates.id))
      .limit(page.limit)
      .offset(page.offset)
      .all();
    const total =
      this.db.select({ n: count() }).from(documentUpdates).where(eq(documentUpdates.documentId, documentId)).get()?.n ?? 0;
    return { rows, total };
  }

  // ---- writing ----

  /** The body of a just-inserted document row. Empty content stores nothing. */
  createBody(doc: { id: string; tenantId: string }, markdown: string, userId: string | null): void {
    if (markdown.length === 0) return;
    const scratch = new Y.Doc();
    scratch.getText(CONTENT_FIELD).insert(0, markdown);
    this.appendUpdate(doc.id, doc.tenantId, Y.encodeStateAsUpdate(scratch), userId);
    this.touchDocument.run({ id: doc.id, updatedAt: this.clock.now().toISOString() });
    scratch.destroy();
    this.emitChange(doc.id);
  }

  /** A fork's body: the source's current content as the copy's first change, by the copier. */
  copyBody(fromDocumentId: string, to: { id: string; tenantId: string }, userId: string | null): void {
    this.createBody(to, this.getText(fromDocumentId), userId);
  }

  /**
   * Applies a Yjs update by `userId`. It is logged durably, then applied, then passed to the
   * document's subscribers with `origin` (the hub uses it to skip the sender).
   */
  applyUpdate(documentId: string, update: Uint8Array, userId: string | null, origin: unknown = null): void {
    try {
      // Decoding first rejects garbage before it can touch the live document.
      Y.decodeUpdate(update);
    } catch (err) {
      throw new InvalidUpdateError(`not a Yjs update: ${(err as Error).message}`);
    }
    this.with(documentId, (loaded) => {
      try {
        Y.applyUpdate(loaded.doc, update, new Authored(userId, origin));
      } catch (err) {
        if (err instanceof PersistenceError) throw err;
        throw new InvalidUpdateError(`update could not be applied: ${(err as Error).message}`);
      }
    });
  }

  /**
   * Makes the content equal to `markdown` as ONE transaction of minimal edits, so that live
   * editors' cursors outside the changed runs stay where they are.
   */
  replaceText(documentId: string, markdown: string, userId: string | null): void {
    this.with(documentId, (loaded) => {
      const text = loaded.doc.getText(CONTENT_FIELD);
      const current = text.toString();
      if (current === markdown) return;
      const parts = diffChars(current, markdown, { timeout: 2000 });
      loaded.doc.transact(() => {
        if (!parts) {
          // Too different to diff quickly: replace wholesale.
          text.delete(0, text.length);
          text.insert(0, markdown);
          return;
        }
        let index = 0;
        for (const part of parts) {
          if (part.added) {
            text.insert(index, part.value);
            index += part.value.length;
          } else if (part.removed) {
            text.delete(index, part.value.length);
          } else {
            index += part.value.length;
          }
        }
      }, new Authored(userId, null));
    });
  }

  /** Folds the log into the state row now (normally automatic). */
  compact(documentId: string): void {
    this.with(documentId, (loaded) => this.compactLoaded(loaded));
  }

  // ---- internals ----

  /** Runs `fn` on the live document, or on a transient load of it. */
  private with<T>(documentId: string, fn: (loaded: LoadedDoc) => T): T {
    const live = this.live.get(documentId);
    if (live) return fn(live);
    const loaded = this.load(documentId);
    try {
      const result = fn(loaded);
      if (loaded.updatesSinceCompaction >= this.compactAfter) this.compactLoaded(loaded);
      return result;
    } finally {
      loaded.doc.destroy();
    }
  }

  private load(documentId: string): LoadedDoc {
    const meta = this.db.select({ tenantId: documents.tenantId }).from(documents).where(eq(documents.id, documentId)).get();
    if (!meta) throw new UnknownDocumentError(`document ${documentId} does not exist`);
    const state = this.db.select().from(documentStates).where(eq(documentStates.documentId, documentId)).get();
    const through = state?.throughUpdateId ?? 0;
    const log = this.db
      .select({ id: documentUpdates.id, data: documentUpdates.data })
      .from(documentUpdates)
      .where(and(eq(documentUpdates.documentId, documentId), gt(documentUpdates.id, through), isNotNull(documentUpdates.data)))
      .orderBy(documentUpdates.id)
      .all();
    const doc = new Y.Doc();
    // One transaction for the whole replay: observers and the update event run once, not per row.
    // (Y.mergeUpdates first would be slower: its cost grows faster than the number of updates.)
    doc.transact(() => {
      if (state) Y.applyUpdate(doc, state.state);
      for (const row of log) Y.applyUpdate(doc, row.data!);
    });
    const loaded: LoadedDoc = {
      id: documentId,
      tenantId: meta.tenantId,
      doc,
      refs: 0,
      listeners: new Set(),
      updatesSinceCompaction: log.length,
      lastUpdateId: log.at(-1)?.id ?? through,
      touchedAt: 0,
      editedAt: 0,
    };
    doc.on('update', (update: Uint8Array, origin: unknown) => this.onDocUpdate(loaded, update, origin));
    return loaded;
  }

  /** The one place a change becomes durable and then visible. */
  private onDocUpdate(loaded: LoadedDoc, update: Uint8Array, origin: unknown): void {
    const authored = origin instanceof Authored ? origin : new Authored(null, origin);
    try {
      loaded.lastUpdateId = this.appendUpdate(loaded.id, loaded.tenantId, update, authored.userId);
      // A live document types many updates a second; its updated_at needs no finer grain than that.
      const now = this.clock.now().getTime();
      loaded.editedAt = now;
      if (loaded.refs === 0 || now - loaded.touchedAt >= TOUCH_INTERVAL_MS) {
        this.touchDocument.run({ id: loaded.id, updatedAt: new Date(now).toISOString() });
        loaded.touchedAt = now;
      }
    } catch (err) {
      this.logger?.error({ err, documentId: loaded.id }, 'could not store a document update');
      throw new PersistenceError(`could not store the update: ${(err as Error).message}`);
    }
    loaded.updatesSinceCompaction += 1;
    for (const listener of loaded.listeners) {
      try {
        listener(update, authored.source);
      } catch (err) {
        this.logger?.error({ err, documentId: loaded.id }, 'update listener failed');
      }
    }
    if (loaded.refs > 0 && loaded.updatesSinceCompaction >= this.compactAfter) this.compactLoaded(loaded);
    this.emitChange(loaded.id);
  }

  private appendUpdate(documentId: string, tenantId: string, update: Uint8Array, userId: string | null): number {
    return this.insertUpdate.get({
      documentId,
      tenantId,
      userId,
      createdAt: this.clock.now().toISOString(),
      bytes: update.byteLength,
      data: Buffer.from(update.buffer, update.byteOffset, update.byteLength),
    })!.id;
  }

  private compactLoaded(loaded: LoadedDoc): void {
    const state = Y.encodeStateAsUpdate(loaded.doc);
    const through = loaded.lastUpdateId;
    const now = this.clock.now().toISOString();
    this.db.transaction((tx) => {
      tx.insert(documentStates)
        .values({ documentId: loaded.id, state: Buffer.from(state), throughUpdateId: through, updatedAt: now })
        .onConflictDoUpdate({
          target: documentStates.documentId,
          set: { state: Buffer.from(state), throughUpdateId: through, updatedAt: now },
        })
        .run();
      tx.update(documentUpdates)
        .set({ data: null })
        .where(and(eq(documentUpdates.documentId, loaded.id), lte(documentUpdates.id, through), isNotNull(documentUpdates.data)))
        .run();
    });
    loaded.updatesSinceCompaction = 0;
  }

  private emitChange(documentId: string): void {
    for (const listener of this.changeListeners) {
      try {
        listener(documentId);
      } catch (err) {
        this.logger?.error({ err, documentId }, 'change listener failed');
      }
    }
  }
}

/** The Markdown held by an encoded state (a named version). */
export function textOfState(state: Uint8Array): string {
  const doc = new Y.Doc();
  try {
    Y.applyUpdate(doc, state);
    return doc.getText(CONTENT_FIELD).toString();
  } finally {
    doc.destroy();
  }
}
