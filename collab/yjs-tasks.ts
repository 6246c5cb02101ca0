// What is done with a stored document body as a whole: replaying it into a Y.Doc, folding it into one
// state with its Markdown, and making its text equal to new Markdown as one update. Pure (Yjs and
// the text diff only, no database): the store calls `replay` itself, and runs `fold` and `edit` in
// a worker thread (workers.ts) for large documents, where one of ~100,000 small edits takes Yjs
// ~200 ms to load and would hold the event loop that long.
import * as Y from 'yjs';
import { textEdits } from './text-edits';

export const CONTENT_FIELD = 'content';

/** A body as stored: the compacted state, if any, and the log rows after it, in order. */
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
 * A body whose text was made equal to new Markdown: the change as one update (null when the text
 * was equal already), and the result's state (its text is the Markdown asked for).
 */
export interface Edited {
  state: Uint8Array;
  update: Uint8Array | null;
  /** Whether the change inserts text (a change that only deletes may take a document at its size limit a little past it). */
  inserts: boolean;
}

export type YjsTask = { kind: 'fold'; body: StoredBody } | { kind: 'edit'; body: StoredBody; markdown: string; diffTimeoutMs: number };

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
    if (current === markdown) return { update: null, inserts: false, state: Y.encodeStateAsUpdate(doc) };
    let update: Uint8Array | null = null;
    doc.on('update', (u: Uint8Array) => (update = u));
    const inserts = applyEdits(text, textEdits(current, markdown, diffTimeoutMs));
    if (text.toString() !== markdown) throw new Error('the edits did not give the text asked for');
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

/** The worker thread's task (src/lib/worker-pool.ts): one task, its result structured-cloned back. */
export default function run(task: YjsTask): Folded | Edited {
  return task.kind === 'fold' ? fold(task.body) : edit(task.body, task.markdown, task.diffTimeoutMs);
}
