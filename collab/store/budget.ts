// The size budget: a change that would take a document's encoded state past its limit is refused.
// The size is tracked as an upper estimate, not encoded on every keystroke: the exact size at the
// last compaction or measurement, plus what each accepted change may add, minus the text it
// deleted. Only when that estimate says no and may be well off is the document encoded to measure it.
import * as Y from 'yjs';
import type { UpdateShape } from '../update-check';
import type { textEdits } from '../text-edits';
import { DocumentTooLargeError, SizeUnknownError } from './errors';
import { encode, type LoadedDoc } from './loaded';

export const DEFAULT_MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
/**
 * What an accepted change may add to the encoded state beyond its own bytes: per struct placed
 * against content the document holds (an insertion inside a run splits it) and per deleted range
 * (a deletion inside a run leaves three structs of one); each well above what that adds.
 */
const STRUCT_ALLOWANCE = 16;
const RANGE_ALLOWANCE = 32;
/** What an edit of a REST write may add beyond the text it inserts: its struct, origins and allowance. */
const RUN_ALLOWANCE = 64;
/** How far past the limit deletions alone may take a document, so that one at the limit can be cut down. */
const DELETE_HEADROOM = 64 * 1024;
/**
 * Past its limit, a document is encoded to measure it only if its estimate may be off by this
 * share of the limit, or this many changes were taken in since it was last measured.
 */
const REMEASURE_SHARE = 1 / 64;
const REMEASURE_CHANGES = 8;

export class SizeBudget {
  constructor(readonly maxDocumentBytes: number) {}

  /** Refuses `bytes` (a whole body's exact size) above the limit; deletions alone get DELETE_HEADROOM. */
  refuseAbove(bytes: number, deletesOnly = false): void {
    if (bytes > this.maxDocumentBytes + (deletesOnly ? DELETE_HEADROOM : 0)) throw new DocumentTooLargeError(bytes, this.maxDocumentBytes);
  }

  /**
   * Refuses a change that may add `growth` bytes to the encoded state if that takes the document
   * past its limit (plus DELETE_HEADROOM for a change that only deletes). The estimate is replaced
   * by a measurement only when it may be far off, so that an editor at the limit cannot make every
   * message encode the whole document. `measureElsewhere` may take the measurement off the event
   * loop (a worker's fold): the change is then refused with SizeUnknownError, to be tried again.
   */
  makeRoom(loaded: LoadedDoc, growth: number, deletesOnly: boolean, measureElsewhere?: (loaded: LoadedDoc) => Promise<void> | null): void {
    const cap = this.maxDocumentBytes + (deletesOnly ? DELETE_HEADROOM : 0);
    if (loaded.bytes + growth <= cap) return;
    if (loaded.slack >= Math.max(1024, this.maxDocumentBytes * REMEASURE_SHARE) || loaded.unmeasured >= REMEASURE_CHANGES) {
      const later = measureElsewhere?.(loaded);
      if (later) throw new SizeUnknownError(later);
      measured(loaded, encode(loaded).byteLength);
    }
    if (loaded.bytes + growth > cap) throw new DocumentTooLargeError(loaded.bytes + growth, this.maxDocumentBytes);
  }
}

/** The document's encoded size is known exactly: the estimate starts again from it. */
export function measured(loaded: LoadedDoc, bytes: number): void {
  loaded.bytes = bytes;
  loaded.slack = 0;
  loaded.unmeasured = 0;
  loaded.measurements += 1;
}

/** The size estimate of a document at one moment (see measuredSince). */
export type SizeEstimate = Pick<LoadedDoc, 'bytes' | 'slack' | 'unmeasured' | 'measurements'>;

export const estimateOf = ({ bytes, slack, unmeasured, measurements }: LoadedDoc): SizeEstimate => ({ bytes, slack, unmeasured, measurements });

/**
 * The document was `bytes` encoded at the moment its estimate was `then`, and has changed since: the
 * estimate starts again from that size, with what the changes since added on top. (Unless it was
 * measured meanwhile, which is newer.)
 */
export function measuredSince(loaded: LoadedDoc, bytes: number, then: SizeEstimate): void {
  if (loaded.measurements !== then.measurements || !Number.isFinite(then.slack) || !Number.isFinite(then.unmeasured)) return;
  loaded.bytes = Math.max(0, bytes + loaded.bytes - then.bytes);
  loaded.slack = Math.max(0, loaded.slack - then.slack);
  loaded.unmeasured = Math.max(0, loaded.unmeasured - then.unmeasured);
  loaded.measurements += 1;
}

/** A change was applied: what it may have added (`charge`), less the text it deleted, goes on the estimate. */
export function charged(loaded: LoadedDoc, charge: number): void {
  loaded.bytes += charge - loaded.freed;
  loaded.slack += charge;
  loaded.unmeasured += 1;
  loaded.freed = 0;
}

/** What a checked update may add to the encoded state, from what the check found in it. */
export function chargeOfShape(update: Uint8Array, shape: UpdateShape): number {
  return update.byteLength + STRUCT_ALLOWANCE * shape.placedInside + RANGE_ALLOWANCE * shape.deleteRanges;
}

/** What a change may add to the encoded state, from its update (see STRUCT_ALLOWANCE). */
export function chargeOf(update: Uint8Array): number {
  const { structs, ds } = Y.decodeUpdate(update);
  let ranges = 0;
  for (const list of ds.clients.values()) ranges += list.length;
  return update.byteLength + STRUCT_ALLOWANCE * structs.length + RANGE_ALLOWANCE * ranges;
}

/** What text edits may add (`charge`, as for an update), that less the text they delete (`growth`), and whether they insert. */
export function chargeOfEdits(parts: ReturnType<typeof textEdits>): { charge: number; growth: number; inserts: boolean } {
  let charge = 0;
  let removed = 0;
  let inserts = false;
  for (const part of parts) {
    if (part.added) {
      charge += Buffer.byteLength(part.value) + RUN_ALLOWANCE;
      inserts = true;
    } else if (part.removed) {
      charge += RUN_ALLOWANCE;
      removed += Buffer.byteLength(part.value);
    }
  }
  return { charge, growth: charge - removed, inserts };
}

/** UTF-8 bytes of the text a transaction deletes: what the encoded state loses once Yjs drops it. */
export function deletedTextBytes(transaction: Y.Transaction): number {
  let bytes = 0;
  Y.iterateDeletedStructs(transaction, transaction.deleteSet, (struct) => {
    if (struct instanceof Y.Item && struct.content instanceof Y.ContentString) bytes += Buffer.byteLength(struct.content.str);
  });
  return bytes;
}
