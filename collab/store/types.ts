// The store's options and the shapes it answers.
import type { Logger } from 'pino';
import type { Db } from '../../db/client';
import type { Clock } from '../../src/lib/clock';
import type { YjsWorkers } from '../workers';

/** Instrumentation (the server's metrics): told of what the store writes. */
export interface StoreMetrics {
  updatesPersisted(rows: number, bytes: number): void;
  compacted(): void;
}

export interface StoreOptions {
  db: Db;
  clock: Clock;
  logger?: Logger;
  /** Fold the log into the state row once this many updates have accumulated. */
  compactAfter?: number;
  /** Largest encoded state a change may give a document (DOCUMENT_MAX_BYTES). */
  maxDocumentBytes?: number;
  metrics?: StoreMetrics;
  /** Threads for the whole-body work on large documents; without them, all of it is done inline. */
  workers?: YjsWorkers;
  /** Documents at least this large (encoded) go to `workers` (DEFAULT_OFFLOAD_MIN_BYTES). */
  offloadMinBytes?: number;
  /** How long a body written inline may take to diff before it is replaced whole (DIFF_TIMEOUT_MS). */
  inlineDiffTimeoutMs?: number;
  /** How long a preloaded document waits to be acquired (PRELOAD_WAIT_MS). */
  preloadWaitMs?: number;
}

/** A document's body and text at one moment: what a named version keeps. */
export interface Snapshot {
  state: Uint8Array;
  markdown: string;
}

export interface ChangeRow {
  id: number;
  userId: string | null;
  createdAt: string;
  bytes: number;
}
