// Hand-made Yjs updates and y-websocket messages that cost the server work (issue 41), shared by
// the live-editing tests and bench/collab-cost.ts. No test framework here: the benchmark imports it.
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';

/** A y-websocket sync "update" message carrying `update`. */
export function syncUpdateMessage(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 0);
  encoding.writeVarUint(encoder, 2);
  encoding.writeVarUint8Array(encoder, update);
  return encoding.toUint8Array(encoder);
}

/** A y-websocket sync step 1 message announcing `stateVector` (the server answers with what it lacks). */
export function syncStep1Message(stateVector: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 0);
  encoding.writeVarUint(encoder, 0);
  encoding.writeVarUint8Array(encoder, stateVector);
  return encoding.toUint8Array(encoder);
}

/** The attack of issue 41: one client's run of `n` GC structs, two bytes each. */
export function gcFlood(n: number, client = 4242): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, 1);
  encoding.writeVarUint(e, n);
  encoding.writeVarUint(e, client);
  encoding.writeVarUint(e, 0);
  for (let i = 0; i < n; i++) {
    encoding.writeUint8(e, 0);
    encoding.writeVarUint(e, 1);
  }
  encoding.writeVarUint(e, 0);
  return encoding.toUint8Array(e);
}

/** `n` characters typed one at a time at the start of `doc` (each its own item): the update that adds them. */
export function typedBackwards(doc: Y.Doc, n: number, char = 'x'): Uint8Array {
  const before = Y.encodeStateVector(doc);
  doc.transact(() => {
    for (let i = 0; i < n; i++) doc.getText('content').insert(0, char);
  });
  return Y.encodeStateAsUpdate(doc, before);
}
