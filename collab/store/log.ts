// The batched log writes (group commit). Every change to a loaded Y.Doc only queues its row; one
// `setImmediate` per turn of the event loop writes the queue in a single transaction, and whoever
// must know a change of theirs was stored writes it at once (`commit`). A change is passed to the
// document's subscribers only once its row is durable.
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/client';
import type { Clock } from '../../src/lib/clock';
import { chargeOf, charged } from './budget';
import { PersistenceError } from './errors';
import { Authored, type LoadedDoc } from './loaded';
import type { Statements } from './statements';
import type { StoreMetrics } from './types';

/** A live document's updated_at needs no finer grain than this (its release writes the last one). */
const TOUCH_INTERVAL_MS = 1_000;

/** A change applied in memory whose log row is not written yet. */
export interface QueuedChange {
  documentId: string;
  tenantId: string;
  userId: string | null;
  update: Uint8Array;
  origin: unknown;
  /** The document it was applied to; none for a brand-new body (createBody). */
  loaded?: LoadedDoc;
  /** The update is the document's whole state, stored as its state row in the same transaction: the log row keeps only its size. */
  inState?: boolean;
}

export interface UpdateLogOptions {
  db: Db;
  clock: Clock;
  statements: Statements;
  logger?: Logger;
  metrics: StoreMetrics;
  /** A change was stored and passed to its document's subscribers. */
  stored(documentId: string, loaded: LoadedDoc | undefined): void;
  /** A live document's rows could not be stored: it now differs from the disk. */
  failed(loaded: LoadedDoc, err: Error): void;
}

export class UpdateLog {
  private queue: QueuedChange[] = [];
  private flushScheduled = false;

  constructor(private readonly opts: UpdateLogOptions) {}

  /**
   * A loaded Y.Doc changed: its row is queued, and written by whoever made the change (`commit`) or
   * by the flush scheduled here, so that even a change made directly on an acquired Y.Doc reaches
   * the log.
   */
  record(loaded: LoadedDoc, update: Uint8Array, origin: unknown): void {
    const authored = origin instanceof Authored ? origin : new Authored(null, origin);
    loaded.encoded = undefined;
    loaded.text = undefined;
    charged(loaded, authored.charge ?? chargeOf(update));
    this.queue.push({ documentId: loaded.id, tenantId: loaded.tenantId, userId: authored.userId, update, origin: authored.source, loaded });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One flush per turn, after the poll phase: updates read from every socket in the same
    // phase share one transaction.
    setImmediate(() => {
      this.flushScheduled = false;
      this.write();
    });
  }

  /** Queues a change made without a loaded Y.Doc (a new body, a worker's edit); `commit` writes it. */
  push(change: QueuedChange): void {
    this.queue.push(change);
  }

  /** Writes the queue for a caller that must know its own change (to `documentId`) was stored. */
  commit(documentId: string): void {
    const failure = this.write().get(documentId);
    if (failure) throw new PersistenceError(`could not store the update: ${failure.message}`);
  }

  /**
   * The one place changes become durable and then visible. All queued rows go in one
   * transaction; if it fails, each document's rows are tried again in a transaction of their own,
   * so that one document that cannot be written (say, erased while editors were connected) does
   * not take the others down with it. Returns the documents whose rows could not be stored.
   */
  write(): Map<string, Error> {
    const failed = new Map<string, Error>();
    if (this.queue.length === 0) return failed;
    const { logger } = this.opts;
    const batch = this.queue;
    this.queue = [];
    const now = this.opts.clock.now();
    let ids: (number | undefined)[];
    try {
      ids = this.insertRows(batch, now);
    } catch (batchErr) {
      ids = new Array<number | undefined>(batch.length);
      const byDocument = new Map<string, number[]>();
      batch.forEach(({ documentId }, i) => {
        const positions = byDocument.get(documentId);
        if (positions) positions.push(i);
        else byDocument.set(documentId, [i]);
      });
      // A batch of one document has failed as a whole already.
      if (byDocument.size === 1) failed.set(batch[0]!.documentId, batchErr as Error);
      else {
        for (const [documentId, positions] of byDocument) {
          try {
            this.insertRows(positions.map((i) => batch[i]!), now).forEach((id, k) => (ids[positions[k]!] = id));
          } catch (err) {
            failed.set(documentId, err as Error);
          }
        }
      }
      if (failed.size === 0) {
        logger?.warn({ err: batchErr, updates: batch.length }, 'a batch of document updates failed; stored them document by document');
      } else {
        logger?.error({ err: batchErr, documentIds: [...failed.keys()], updates: batch.length }, 'could not store document updates; dropping their live copies');
        for (const { documentId, loaded } of batch) if (loaded && failed.has(documentId)) this.opts.failed(loaded, failed.get(documentId)!);
      }
    }
    batch.forEach(({ documentId, update, origin, loaded }, i) => {
      if (failed.has(documentId)) return;
      if (loaded) {
        loaded.lastUpdateId = ids[i]!;
        loaded.updatesSinceCompaction += 1;
        for (const subscriber of loaded.subscribers) {
          try {
            subscriber.onUpdate(update, origin);
          } catch (err) {
            logger?.error({ err, documentId }, 'update listener failed');
          }
        }
      }
      this.opts.stored(documentId, loaded);
    });
    return failed;
  }

  /** Inserts the rows of `changes` in one transaction (all or none) and returns their log ids. */
  private insertRows(changes: QueuedChange[], now: Date): number[] {
    const { insertUpdate, touchDocument } = this.opts.statements;
    const nowMs = now.getTime();
    const createdAt = now.toISOString();
    let bytes = 0;
    const ids = inTransaction(this.opts.db, () =>
      changes.map(({ documentId, tenantId, userId, update, loaded, inState }) => {
        bytes += update.byteLength;
        const data = inState ? null : Buffer.from(update.buffer, update.byteOffset, update.byteLength);
        const id = Number(insertUpdate.run({ documentId, tenantId, userId, createdAt, bytes: update.byteLength, data }).lastInsertRowid);
        if (loaded) loaded.editedAt = nowMs;
        if (!loaded || loaded.refs === 0 || nowMs - loaded.touchedAt >= TOUCH_INTERVAL_MS) {
          touchDocument.run({ id: documentId, updatedAt: createdAt });
          if (loaded) loaded.touchedAt = nowMs;
        }
        return id;
      }),
    );
    this.opts.metrics.updatesPersisted(changes.length, bytes);
    return ids;
  }
}
