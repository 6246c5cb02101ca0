// A document in memory as the store keeps it (LoadedDoc), the subscribers told of its changes, and
// the small operations every part of the store does on one.
import type { Logger } from 'pino';
import * as Y from 'yjs';
import { CONTENT_FIELD } from '../yjs-tasks';
import { InvalidUpdateError, UnreadableDocumentError } from './errors';

/**
 * A live document's subscriber (the hub's room): told of every stored update, with the origin
 * passed to `applyUpdate`, and that the document was dropped from memory because its changes
 * could not be stored. An object with methods, not closures: one is kept per open document.
 */
export interface DocumentSubscriber {
  onUpdate(update: Uint8Array, origin: unknown): void;
  onDropped?(err: Error): void;
}

/** A document's subscribers before the first and after the last: one shared empty list. */
export const NO_SUBSCRIBERS: readonly DocumentSubscriber[] = Object.freeze([]);

/** Transaction origin carrying the author, so the update handler can record who wrote. */
export class Authored {
  constructor(
    readonly userId: string | null,
    readonly source: unknown,
    /** What the change may add to the encoded state (see budget.ts); worked out from the update when absent. */
    readonly charge?: number,
  ) {}
}

export interface LoadedDoc {
  id: string;
  tenantId: string;
  doc: Y.Doc;
  /** Live holders (WebSocket connections); 0 for a transient load. */
  refs: number;
  /** Replaced, never changed in place, so that a broadcast in progress is not disturbed by a change. */
  subscribers: readonly DocumentSubscriber[];
  updatesSinceCompaction: number;
  /** When `documents.updated_at` was last written for this document, and when it last changed (ms). */
  touchedAt: number;
  editedAt: number;
  lastUpdateId: number;
  /** Upper estimate of the encoded state's size; what the changes since it was last measured may have added, and how many they are. */
  bytes: number;
  slack: number;
  unmeasured: number;
  /** How many times the estimate was replaced by a measurement. */
  measurements: number;
  /** Bytes of text the transaction being applied deleted (counted before Yjs drops them). */
  freed: number;
  /** The stored state has no Markdown beside it (written before it was kept): the next compaction adds it. */
  lacksMarkdown: boolean;
  /** A worker is folding the stored body (see WorkerPath.compactSoon). */
  folding: boolean;
  /** No one holds it: it leaves memory once its fold is stored (a large document whose state was behind). */
  leaving: boolean;
  /** Preloaded for a connection (see WorkerPath.preload): leaves memory when this ends, unless acquired before. */
  expiry?: NodeJS.Timeout;
  /**
   * The whole document as one update, encoded by the worker that preloaded it, until its first
   * change: a new editor's first sync reply without encoding it on the event loop.
   */
  encoded?: Uint8Array;
  /**
   * Its Markdown as last read from the Y.Doc, until its next change: reads of a live document
   * between edits (REST content reads, export, the search index's refresh) do not have Yjs build
   * the string again.
   */
  text?: string;
}

/** Yjs's default gcFilter (everything deleted may be collected): one function for every document. */
const COLLECT_ALL = () => true;

/**
 * Lets go of what a Y.Doc holds for providers that a document in the store never uses: the
 * listeners behind `whenLoaded` and `whenSynced` (two Sets, three closures and their promises'
 * resolvers, ~0.9 KiB a document; the store never emits 'load' or 'sync', so those promises stay
 * pending, as they would), its own gcFilter closure, and its random guid (it is never a subdocument:
 * its id names it). Memory an idle open document costs (bench/RESULTS.md, issue 36).
 */
export function lighten(doc: Y.Doc, documentId: string): void {
  const observers = (doc as unknown as { _observers: Map<string, Set<unknown>> })._observers;
  observers.delete('load');
  observers.delete('sync');
  doc.gcFilter = COLLECT_ALL;
  doc.guid = documentId;
}

/** A preloaded document is held, or leaves: its wait ends. */
export function stopExpiry(loaded: LoadedDoc): void {
  clearTimeout(loaded.expiry);
  loaded.expiry = undefined;
}

/**
 * Applies a checked `update`; a failure is the bytes' fault (the store only queues while applying).
 * The check leaves nothing pending; should anything be, it is let go rather than kept in memory.
 */
export function integrate(loaded: LoadedDoc, update: Uint8Array, origin: Authored, logger?: Logger): void {
  const doc = loaded.doc;
  try {
    Y.applyUpdate(doc, update, origin);
  } catch (err) {
    throw new InvalidUpdateError(`update could not be applied: ${(err as Error).message}`);
  } finally {
    if (doc.store.pendingStructs || doc.store.pendingDs) {
      logger?.error({ documentId: loaded.id }, 'a checked update left changes pending; dropped them');
      doc.store.pendingStructs = null;
      doc.store.pendingDs = null;
    }
  }
}

/** The loaded document's Markdown, built by Yjs once per change (see LoadedDoc.text). */
export function textOf(loaded: LoadedDoc): string {
  return (loaded.text ??= loaded.doc.getText(CONTENT_FIELD).toString());
}

/** No state vector, or an empty one (a peer that has nothing of the document). */
export function lacksAll(stateVector?: Uint8Array): boolean {
  return stateVector === undefined || (stateVector.length === 1 && stateVector[0] === 0);
}

/** The document encoded (what a peer at `stateVector` lacks, or all of it). */
export function encode(loaded: LoadedDoc, stateVector?: Uint8Array): Uint8Array {
  try {
    return Y.encodeStateAsUpdate(loaded.doc, stateVector);
  } catch (err) {
    throw new UnreadableDocumentError(`document ${loaded.id} cannot be encoded: ${(err as Error).message}`);
  }
}

/** The Markdown held by an encoded state (a named version). */
export function textOfState(state: Uint8Array): string {
  const doc = new Y.Doc();
  try {
    Y.applyUpdate(doc, state);
    return doc.getText(CONTENT_FIELD).toString();
  } catch (err) {
    throw new UnreadableDocumentError(`the stored version cannot be loaded: ${(err as Error).message}`);
  } finally {
    doc.destroy();
  }
}
