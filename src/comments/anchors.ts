// Comment anchors: two Yjs relative positions (start, end) on the document's `content` text, sent
// and answered as base64 of `Y.encodeRelativePosition`. A relative position names the character it
// sticks to by its Yjs id, not by an index, so the anchor follows every edit made around it, live
// ones included; resolved against the document as it is now, it gives the anchored text, or
// nothing once that text has been deleted (the comment is then orphaned).
import * as Y from 'yjs';
import { CONTENT_FIELD } from '../../collab/store';
import { unprocessable } from '../http/errors';

export interface AnchorInput {
  start: string;
  end: string;
}

export interface StoredAnchor {
  start: Uint8Array;
  end: Uint8Array;
}

export interface ResolvedAnchor {
  start: string;
  end: string;
  /** The anchored text now; null once it is gone. */
  text: string | null;
  orphaned: boolean;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const MAX_POSITION_BYTES = 256;

function decode(value: string, field: 'start' | 'end'): { bytes: Uint8Array; position: Y.RelativePosition } {
  const normalized = value.replace(/-/g, '+').replace(/_/g, '/');
  const refuse = (why: string) => unprocessable(`anchor.${field} ${why}`, [{ path: `anchor.${field}`, message: why }]);
  if (normalized.length === 0 || !BASE64.test(normalized)) throw refuse('is not base64');
  const bytes = new Uint8Array(Buffer.from(normalized, 'base64'));
  if (bytes.byteLength > MAX_POSITION_BYTES) throw refuse('is too long for a relative position');
  let position: Y.RelativePosition;
  try {
    position = Y.decodeRelativePosition(bytes);
    // Trailing bytes, or bytes read as something else, do not encode back the same.
    if (Buffer.compare(Buffer.from(Y.encodeRelativePosition(position)), Buffer.from(bytes)) !== 0) throw new Error('not canonical');
  } catch {
    throw refuse('is not an encoded Yjs relative position (Y.encodeRelativePosition)');
  }
  return { bytes, position };
}

/**
 * The index a relative position stands for in `text`, or null when it does not name a place in
 * this document's content: another root type, a nested type, or an item (client, clock) this
 * document has never held, as a position taken in another document would.
 */
function indexIn(doc: Y.Doc, text: Y.Text, position: Y.RelativePosition): number | null {
  if (position.type !== null) return null;
  if (position.tname !== null && position.tname !== CONTENT_FIELD) return null;
  if (position.item !== null) {
    if (Y.getState(doc.store, position.item.client) <= position.item.clock) return null;
  } else if (position.tname === null) return null;
  let absolute: Y.AbsolutePosition | null;
  try {
    absolute = Y.createAbsolutePositionFromRelativePosition(position, doc);
  } catch {
    return null;
  }
  if (!absolute || absolute.type !== text) return null;
  return absolute.index;
}

/** Decodes and checks an anchor on `doc` (422 naming the problem); it must cover some text now. */
export function checkAnchor(doc: Y.Doc, anchor: AnchorInput): StoredAnchor {
  const start = decode(anchor.start, 'start');
  const end = decode(anchor.end, 'end');
  const text = doc.getText(CONTENT_FIELD);
  const from = indexIn(doc, text, start.position);
  const to = indexIn(doc, text, end.position);
  const elsewhere = 'does not name a place in this document (a position of another document, or of another type than its content)';
  if (from === null) throw unprocessable(`anchor.start ${elsewhere}`, [{ path: 'anchor.start', message: elsewhere }]);
  if (to === null) throw unprocessable(`anchor.end ${elsewhere}`, [{ path: 'anchor.end', message: elsewhere }]);
  if (from >= to) {
    const message = 'the anchor must cover some text: start must come before end';
    throw unprocessable(message, [{ path: 'anchor', message }]);
  }
  return { start: start.bytes, end: end.bytes };
}

/** Resolves stored anchors against the document as it is now (one read of its text). */
export function anchorResolver(doc: Y.Doc): (anchor: StoredAnchor) => ResolvedAnchor {
  const text = doc.getText(CONTENT_FIELD);
  let content: string | undefined;
  return (anchor) => {
    const encoded = { start: Buffer.from(anchor.start).toString('base64'), end: Buffer.from(anchor.end).toString('base64') };
    let from: number | null = null;
    let to: number | null = null;
    try {
      from = indexIn(doc, text, Y.decodeRelativePosition(anchor.start));
      to = indexIn(doc, text, Y.decodeRelativePosition(anchor.end));
    } catch {
      // A stored anchor is checked when written; one that no longer decodes is orphaned.
    }
    if (from === null || to === null || from >= to) return { ...encoded, text: null, orphaned: true };
    content ??= text.toString();
    return { ...encoded, text: content.slice(from, to), orphaned: false };
  };
}
