// What is done with a stored document body as a whole: replaying it into a Y.Doc, folding it into one
// state with its Markdown, and making its text equal to new Markdown as one update. Pure (Yjs and
// the text diff only, no database): the store calls `replay` itself, and runs `fold` and `edit` in
// a worker thread (workers.ts) for large documents, whose load would hold the event loop too long.
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import { textEdits } from './text-edits';

export const CONTENT_FIELD = 'content';

/** A body as stored: the compacted state, if any, and the log rows after it, in order. */
/** A new document's whole Yjs state for `markdown`, and the text Yjs holds (should it differ). */
export function encodeBody(markdown: string): { update: Uint8Array; stored: string } {
  const scratch = new Y.Doc();
  scratch.getText(CONTENT_FIELD).insert(0, markdown);
  const update = Y.encodeStateAsUpdate(scratch);
  const stored = scratch.getText(CONTENT_FIELD).toString();
  scratch.destroy();
  return { update, stored };
}

export interface StoredBody {
  state: Uint8Array | null;
  updates: Uint8Array[];
}

/** A body folded into one encoded state, with its Markdown of the same moment. */
export interface Folded {
  state: Uint8Array;
  markdown: string;
}

/**
 * A body whose text was made equal to new Markdown: the change as one update, and the result's
 * state (its text is the Markdown asked for); `update` null when the text was equal already.
 */
export type Edited =
  | { update: null }
  | {
      update: Uint8Array;
      state: Uint8Array;
      /** Whether the change inserts text (a change that only deletes may take a document at its size limit a little past it). */
      inserts: boolean;
    };

export type YjsTask =
  | { kind: 'fold'; body: StoredBody }
  | { kind: 'edit'; body: StoredBody; markdown: string; diffTimeoutMs: number }
  | { kind: 'slice'; body: StoredBody; structsPerSlice: number };

/** A body as slices that each integrate whole (see slice), and as one update. */
export interface Sliced {
  slices: Uint8Array[];
  whole: Uint8Array;
}

/**
 * Applies a stored body to `doc` in one transaction (observers and the update event run once, not
 * per row; Y.mergeUpdates first would be slower: its cost grows faster than the number of updates).
 * Changes Yjs could not integrate (stored before updates were checked) are not content, and merged
 * with others could make the document unencodable: they are let go. Returns whether there were any.
 */
export function replay(doc: Y.Doc, body: StoredBody): boolean {
  doc.transact(() => {
    if (body.state) Y.applyUpdate(doc, body.state);
    for (const update of body.updates) Y.applyUpdate(doc, update);
  });
  if (!doc.store.pendingStructs && !doc.store.pendingDs) return false;
  doc.store.pendingStructs = null;
  doc.store.pendingDs = null;
  return true;
}

function loaded(body: StoredBody): Y.Doc {
  const doc = new Y.Doc();
  try {
    replay(doc, body);
  } catch (err) {
    doc.destroy();
    throw new Error(`the stored body cannot be loaded: ${(err as Error).message}`);
  }
  return doc;
}

export function fold(body: StoredBody): Folded {
  const doc = loaded(body);
  try {
    return { state: Y.encodeStateAsUpdate(doc), markdown: doc.getText(CONTENT_FIELD).toString() };
  } finally {
    doc.destroy();
  }
}

/** Makes the body's text equal to `markdown` as ONE transaction of minimal edits (textEdits). */
export function edit(body: StoredBody, markdown: string, diffTimeoutMs?: number): Edited {
  const doc = loaded(body);
  try {
    const text = doc.getText(CONTENT_FIELD);
    const current = text.toString();
    if (current === markdown) return { update: null };
    let update: Uint8Array | null = null;
    doc.on('update', (u: Uint8Array) => (update = u));
    const inserts = applyEdits(text, textEdits(current, markdown, diffTimeoutMs));
    if (text.toString() !== markdown || update === null) throw new Error('the edits did not give the text asked for');
    return { update, inserts, state: Y.encodeStateAsUpdate(doc) };
  } finally {
    doc.destroy();
  }
}

/** Applies textEdits' parts to `text` in one transaction (origin `origin`); whether any inserts text. */
export function applyEdits(text: Y.Text, parts: ReturnType<typeof textEdits>, origin: unknown = null): boolean {
  let inserts = false;
  text.doc!.transact(() => {
    let index = 0;
    for (const part of parts) {
      if (part.added) {
        text.insert(index, part.value);
        index += part.value.length;
        inserts = true;
      } else if (part.removed) {
        text.delete(index, part.value.length);
      } else {
        index += part.value.length;
      }
    }
  }, origin);
  return inserts;
}

/**
 * The body as updates that, applied in order to an empty Y.Doc, each integrate whole (nothing left
 * pending) and together give the body: its structs in an order where each comes after what it was
 * placed against (its left and right origins and its parent), then its deletions, at most
 * `structsPerSlice` structs or deleted ranges per update. One such update applies in a fraction of
 * the time the whole body takes, so the store can load a large document for its live editors a
 * few slices per turn of the event loop. Checked here by applying them: should they not give
 * the body exactly, the body is answered whole. `whole` is the body as one update, as Yjs encodes a
 * document for a peer that has nothing (a new editor's first sync reply).
 */
export function slice(body: StoredBody, structsPerSlice: number): Sliced {
  const doc = loaded(body);
  try {
    const whole = Y.encodeStateAsUpdate(doc);
    const slices = structSlices(doc, structsPerSlice);
    if (slices === null) return { slices: [whole], whole };
    slices.push(...deletionSlices(doc, structsPerSlice));
    return { slices: sameBody(whole, slices) ? slices : [whole], whole };
  } finally {
    doc.destroy();
  }
}

type Struct = Y.Item | Y.GC;

/** The doc's structs in an order where each follows what it depends on, encoded a slice at a time; null if there is no such order. */
function structSlices(doc: Y.Doc, structsPerSlice: number): Uint8Array[] | null {
  const clients = [...(doc.store.clients as Map<number, Struct[]>).entries()];
  /** Per client, the clock up to which its structs are placed, and the index of its next struct. */
  const placed = new Map<number, number>(clients.map(([client]) => [client, 0]));
  const next = new Map<number, number>(clients.map(([client]) => [client, 0]));
  const isPlaced = (id: Y.ID | null) => id === null || (placed.get(id.client) ?? Infinity) > id.clock;
  const ready = (struct: Struct) => {
    if (!(struct instanceof Y.Item)) return true;
    const parentItem = (struct.parent as { _item?: Y.Item | null } | null)?._item;
    return isPlaced(struct.origin) && isPlaced(struct.rightOrigin) && isPlaced(parentItem ? parentItem.id : null);
  };
  const slices: Uint8Array[] = [];
  let current = new Map<number, Struct[]>();
  let inCurrent = 0;
  const total = clients.reduce((n, [, structs]) => n + structs.length, 0);
  for (let done = 0; done < total; ) {
    let progress = false;
    for (const [client, structs] of clients) {
      let i = next.get(client)!;
      while (i < structs.length && ready(structs[i]!)) {
        const struct = structs[i]!;
        let group = current.get(client);
        if (!group) current.set(client, (group = []));
        group.push(struct);
        placed.set(client, struct.id.clock + struct.length);
        i++;
        done++;
        progress = true;
        if (++inCurrent >= structsPerSlice) {
          slices.push(encodeStructs(current));
          current = new Map();
          inCurrent = 0;
        }
      }
      next.set(client, i);
    }
    if (!progress) return null;
  }
  if (inCurrent > 0) slices.push(encodeStructs(current));
  return slices;
}

/** An update of these structs (per client, consecutive clocks) and no deletions, as Yjs writes one. */
function encodeStructs(groups: Map<number, Struct[]>): Uint8Array {
  const encoder = new Y.UpdateEncoderV1();
  encoding.writeVarUint(encoder.restEncoder, groups.size);
  for (const [client, structs] of [...groups].sort((a, b) => b[0] - a[0])) {
    encoding.writeVarUint(encoder.restEncoder, structs.length);
    encoder.writeClient(client);
    encoding.writeVarUint(encoder.restEncoder, structs[0]!.id.clock);
    for (const struct of structs) struct.write(encoder, 0);
  }
  // An empty delete set.
  encoding.writeVarUint(encoder.restEncoder, 0);
  return encoder.toUint8Array();
}

/** The deletions, as updates of no structs, at most `rangesPerSlice` deleted ranges each. */
function deletionSlices(doc: Y.Doc, rangesPerSlice: number): Uint8Array[] {
  const ranges: [number, { clock: number; len: number }][] = [];
  const ds = Y.createDeleteSetFromStructStore(doc.store) as unknown as { clients: Map<number, { clock: number; len: number }[]> };
  for (const [client, items] of [...ds.clients].sort((a, b) => b[0] - a[0])) for (const item of items) ranges.push([client, item]);
  const slices: Uint8Array[] = [];
  for (let start = 0; start < ranges.length; start += rangesPerSlice) {
    const byClient = new Map<number, { clock: number; len: number }[]>();
    for (const [client, item] of ranges.slice(start, start + rangesPerSlice)) {
      const list = byClient.get(client);
      if (list) list.push(item);
      else byClient.set(client, [item]);
    }
    const encoder = new Y.UpdateEncoderV1();
    // No structs, then the delete set as Yjs writes one.
    encoding.writeVarUint(encoder.restEncoder, 0);
    encoding.writeVarUint(encoder.restEncoder, byClient.size);
    for (const [client, items] of byClient) {
      encoder.resetDsCurVal();
      encoding.writeVarUint(encoder.restEncoder, client);
      encoding.writeVarUint(encoder.restEncoder, items.length);
      for (const item of items) {
        encoder.writeDsClock(item.clock);
        encoder.writeDsLen(item.len);
      }
    }
    slices.push(encoder.toUint8Array());
  }
  return slices;
}

/**
 * Whether applying `updates` in order to an empty Y.Doc leaves nothing pending and gives exactly
 * the document that `whole` encodes (the same encoding holds its state vector and text).
 */
function sameBody(whole: Uint8Array, updates: Uint8Array[]): boolean {
  const copy = new Y.Doc();
  try {
    for (const update of updates) {
      Y.applyUpdate(copy, update);
      if (copy.store.pendingStructs || copy.store.pendingDs) return false;
    }
    return Buffer.compare(Y.encodeStateAsUpdate(copy), whole) === 0;
  } catch {
    return false;
  } finally {
    copy.destroy();
  }
}

/** The worker thread's task (src/lib/worker-pool.ts): one task, its result structured-cloned back. */
export default function run(task: YjsTask): Folded | Edited | Sliced {
  if (task.kind === 'fold') return fold(task.body);
  if (task.kind === 'slice') return slice(task.body, task.structsPerSlice);
  return edit(task.body, task.markdown, task.diffTimeoutMs);
}
