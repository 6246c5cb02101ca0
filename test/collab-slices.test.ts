// A large document is loaded for its live editors a slice per turn of the event loop (issue 21):
// the Yjs worker answers its body as updates that each integrate whole, in an order where every
// struct follows what it was placed against. Applied in order to an empty Y.Doc they give the body
// exactly, whatever it holds: many clients' scattered edits and deletions, nested types, maps.
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { CONTENT_FIELD, slice } from '../collab/yjs-tasks';

/** A deterministic pseudo-random stream. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** A body typed by `clients` clients at random places, some of it cut, with a map and nested types beside the text. */
function scattered(edits: number, clients: number, seed = 7): Y.Doc {
  const rand = random(seed);
  const doc = new Y.Doc();
  const text = doc.getText(CONTENT_FIELD);
  const meta = doc.getMap('meta');
  for (let i = 0; i < edits; i++) {
    doc.clientID = 100 + (i % clients) * 31;
    if (i % 9 === 8 && text.length > 20) text.delete(Math.floor(rand() * (text.length - 10)), 1 + Math.floor(rand() * 8));
    else if (i % 97 === 0) {
      const nested = new Y.Text(`note ${i}`);
      meta.set(`k${i % 5}`, nested);
    } else if (i % 101 === 0) {
      const nested = meta.get(`k${(i - 1) % 5}`);
      if (nested instanceof Y.Text) nested.insert(0, `edit ${i} `);
    } else text.insert(Math.floor(rand() * (text.length + 1)), ` w${i}`);
  }
  return doc;
}

const stateOf = (doc: Y.Doc) => Y.encodeStateAsUpdate(doc);

describe('slice', () => {
  it('answers a body of many scattered pieces as slices that each integrate whole and together give it exactly', () => {
    const doc = scattered(6_000, 12);
    const body = { state: stateOf(doc), updates: [] };
    const { slices, whole } = slice(body, 400);
    expect(Buffer.compare(whole, stateOf(doc))).toBe(0);
    // Structs in slices of 400 and the deletions last: far more than one piece.
    expect(slices.length).toBeGreaterThan(5);
    const copy = new Y.Doc();
    for (const update of slices) {
      Y.applyUpdate(copy, update);
      expect(copy.store.pendingStructs).toBeNull();
      expect(copy.store.pendingDs).toBeNull();
    }
    expect(copy.getText(CONTENT_FIELD).toString()).toBe(doc.getText(CONTENT_FIELD).toString());
    expect(Buffer.compare(Y.encodeStateVector(copy), Y.encodeStateVector(doc))).toBe(0);
    expect((copy.getMap('meta').get('k0') as Y.Text).toString()).toBe((doc.getMap('meta').get('k0') as Y.Text).toString());
  });

  it('takes the state and the log rows after it, and a body whose pieces fit in one slice is one slice and its deletions', () => {
    const doc = scattered(300, 3);
    const first = stateOf(doc);
    const later: Uint8Array[] = [];
    doc.on('update', (u: Uint8Array) => later.push(u));
    doc.getText(CONTENT_FIELD).insert(0, 'Title\n');
    doc.getText(CONTENT_FIELD).delete(10, 5);
    const { slices } = slice({ state: first, updates: later }, 100_000);
    expect(slices).toHaveLength(2);
    const copy = new Y.Doc();
    for (const update of slices) Y.applyUpdate(copy, update);
    expect(copy.getText(CONTENT_FIELD).toString()).toBe(doc.getText(CONTENT_FIELD).toString());
  });

  it('answers an empty body as nothing to apply', () => {
    const { slices } = slice({ state: null, updates: [] }, 100);
    const copy = new Y.Doc();
    for (const update of slices) Y.applyUpdate(copy, update);
    expect(copy.getText(CONTENT_FIELD).toString()).toBe('');
  });
});
