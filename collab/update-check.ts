// What an update may do to a stored document, judged from its decoded structs before it touches
// the document (a Yjs update cannot be taken back once applied).
//
// Yjs applies whatever bytes decode: a clock past 2^53 is kept as an imprecise float, and a struct
// whose dependencies the document lacks is parked in the document's "pending" state, which every
// later encoding merges back in. Two such updates, each harmless alone, made
// Y.encodeStateAsUpdate throw ("Integer out of Range") for as long as the document stayed open.
// So an update is accepted only if every number in it is one Yjs encodes exactly, and all of it
// integrates at once: every struct continues its client's clocks without a gap, everything it
// refers to (origins, parents) is in the document or in the update, and every deletion names
// clocks the document then holds. A document therefore never holds pending changes.
//
// Before any of that, every update is counted without decoding it (update-pass.ts).
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { scanUpdate, tooMuch } from './update-pass';

/** Client ids: any safe integer (Yjs draws uint32s; other implementations may use more bits). */
export const MAX_CLIENT_ID = Number.MAX_SAFE_INTEGER;
/**
 * Clocks, and a clock plus a length: far past any editing session (one clock per character ever
 * typed by one client), and well below 2^53, where lib0's varints lose precision even once the
 * V2 encoding has doubled a difference of clocks.
 */
export const MAX_CLOCK = 2 ** 48;

/** How deeply embedded values (ContentAny, JSON, embeds, formats, subdocument options) may nest: encoding them recurses. */
const MAX_VALUE_DEPTH = 64;

type Struct = Y.Item | Y.GC | Y.Skip;

/**
 * Why an update may not be applied. `lacksChanges`: it needs changes the document does not hold,
 * which is what every later change of a client looks like once one of its changes was refused.
 */
export class UpdateProblem {
  constructor(
    readonly reason: string,
    readonly lacksChanges = false,
  ) {}
}

const problem = (reason: string) => new UpdateProblem(reason);
const lacking = (reason: string) => new UpdateProblem(reason, true);

/**
 * How much an accepted update holds: structs (Skip placeholders aside); those placed against
 * content the document already holds, which may split one of its runs in two (a whole document
 * synced into an empty one splits nothing); and deleted ranges that delete something not yet
 * deleted (a sync step 2 repeats every deletion its sender knows of).
 */
export interface UpdateShape {
  structs: number;
  placedInside: number;
  deleteRanges: number;
}

/** The problem with `bytes` (a V1 update) for `doc`, or its shape if it may be applied. */
export function checkUpdate(bytes: Uint8Array, doc: Y.Doc): UpdateShape | UpdateProblem {
  const stateOf = (client: number) => Y.getState(doc.store, client);
  const scanned = scanUpdate(bytes);
  const excess = scanned && tooMuch(scanned);
  if (excess) return problem(excess);
  let update: ReturnType<typeof Y.decodeUpdate>;
  try {
    update = Y.decodeUpdate(bytes);
  } catch (err) {
    return problem(`not a Yjs update: ${(err as Error).message}`);
  }
  // Authoritative, should the count above have been left undone (bytes it could not read).
  let ranges = 0;
  for (const list of update.ds.clients.values()) ranges += list.length;
  let placeholders = 0;
  for (const struct of update.structs) if (!(struct instanceof Y.Item)) placeholders += 1;
  const decodedExcess = tooMuch({ items: update.structs.length - placeholders, placeholders, ranges });
  if (decodedExcess) return problem(decodedExcess);
  const byClient = new Map<number, Struct[]>();
  let previous: number | undefined;
  let structs = 0;
  let placedInside = 0;
  // Whether everything the structs refer to is in the document already and no client's run has a
  // gap: then they integrate whole in any order (keystrokes, pastes, most syncs), and Yjs's order
  // need not be followed (integrate below).
  let plain = true;
  for (const struct of update.structs) {
    const { client, clock } = struct.id;
    if (!isCount(client, MAX_CLIENT_ID)) return problem(`client id ${client} is out of range`);
    if (!isCount(clock, MAX_CLOCK) || !isCount(struct.length, MAX_CLOCK) || struct.length < 1 || clock + struct.length > MAX_CLOCK) {
      return problem(`struct ${client}:${clock} (length ${struct.length}) is out of range`);
    }
    if (client !== previous) {
      if (byClient.has(client)) return problem(`client ${client} appears twice`);
      // Only its own earlier structs can fill its clocks, and they would come before it. (A run
      // that opens with a placeholder is left to integrate below.)
      if (clock > stateOf(client) && !(struct instanceof Y.Skip)) {
        return lacking(`struct ${client}:${clock} follows changes of its client that the document does not hold`);
      }
      byClient.set(client, []);
      previous = client;
    }
    byClient.get(client)!.push(struct);
    if (struct instanceof Y.Skip) {
      plain = false;
      continue;
    }
    structs += 1;
    if (struct instanceof Y.Item) {
      const wrong = itemProblem(struct);
      if (wrong) return problem(`struct ${client}:${clock} ${wrong}`);
      if (plain && missingClient(struct, stateOf) !== null) plain = false;
      if (refersToHeld(struct.origin, stateOf) || refersToHeld(struct.rightOrigin, stateOf)) placedInside += 1;
    }
  }
  // Yjs writes each client's structs as one run, and never an empty one. A client written twice
  // (even back to back, which decoding joins) would have its first run silently replaced.
  if (decoding.readVarUint(decoding.createDecoder(bytes)) !== byClient.size) return problem('a client appears twice, or with no structs');
  let state: Map<number, number> | UpdateProblem;
  if (plain) {
    state = new Map();
    for (const [client, run] of byClient) {
      const last = run[run.length - 1]!;
      state.set(client, Math.max(stateOf(client), last.id.clock + last.length));
    }
  } else state = integrate(byClient, stateOf);
  if (state instanceof UpdateProblem) return state;
  const at = (client: number) => state.get(client) ?? stateOf(client);
  let deleteRanges = 0;
  for (const [client, ranges] of update.ds.clients) {
    if (!isCount(client, MAX_CLIENT_ID)) return problem(`deletion for client id ${client}, which is out of range`);
    for (const { clock, len } of ranges) {
      if (!isCount(clock, MAX_CLOCK) || !isCount(len, MAX_CLOCK) || len < 1 || clock + len > MAX_CLOCK) {
        return problem(`deletion ${client}:${clock} (length ${len}) is out of range`);
      }
      if (clock + len > at(client)) return lacking(`deletes ${client}:${clock}..${clock + len}, which the document does not hold`);
      if (deletesSomething(doc, client, clock, clock + len)) deleteRanges += 1;
    }
  }
  return { structs, placedInside, deleteRanges };
}

const refersToHeld = (id: Y.ID | null, stateOf: (client: number) => number) => id !== null && id.clock < stateOf(id.client);

const isCount = (n: number, max: number) => Number.isSafeInteger(n) && n >= 0 && n <= max;

/** Whether some of the clocks from `clock` to `end` of `client` are held by `doc` and not deleted yet (or not held yet). */
function deletesSomething(doc: Y.Doc, client: number, clock: number, end: number): boolean {
  const structs = doc.store.clients.get(client);
  if (!structs || end > Y.getState(doc.store, client)) return true;
  for (let i = Y.findIndexSS(structs, clock); i < structs.length && structs[i]!.id.clock < end; i++) {
    if (!structs[i]!.deleted) return true;
  }
  return false;
}

/** The item's parent when it is another item (not a root type, named by a string). */
const parentId = (item: Y.Item): Y.ID | null => ((item.parent as unknown) instanceof Y.ID ? (item.parent as unknown as Y.ID) : null);

function referenceProblem(item: Y.Item, id: Y.ID | null, name: string): string | null {
  if (id === null) return null;
  if (!isCount(id.client, MAX_CLIENT_ID) || !isCount(id.clock, MAX_CLOCK)) return `has its ${name} out of range`;
  // Its own client's earlier changes come before it; Yjs does not wait for them and would fail.
  if (id.client === item.id.client && id.clock >= item.id.clock) return `has its ${name} at or after itself`;
  return null;
}

function itemProblem(item: Y.Item): string | null {
  const reference =
    referenceProblem(item, item.origin, 'origin') ??
    referenceProblem(item, item.rightOrigin, 'right origin') ??
    referenceProblem(item, parentId(item), 'parent');
  if (reference) return reference;
  const content = item.content;
  if (content instanceof Y.ContentString || content instanceof Y.ContentDeleted) return null;
  const values =
    content instanceof Y.ContentAny || content instanceof Y.ContentJSON
      ? content.arr
      : content instanceof Y.ContentEmbed
        ? [content.embed]
        : content instanceof Y.ContentFormat
          ? [content.value]
          : content instanceof Y.ContentDoc
            ? [content.opts]
            : null;
  if (values && !values.every((v) => nestsWithin(v, MAX_VALUE_DEPTH))) return `holds a value nested deeper than ${MAX_VALUE_DEPTH}`;
  return null;
}

function nestsWithin(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return true;
  if (depth === 0) return false;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (!nestsWithin(v, depth - 1)) return false;
  return true;
}

/**
 * Yjs's own integration order (integrateStructs in yjs), run on clocks alone: the clock each
 * client reaches once the update is in, or why part of it would be left pending. It follows the
 * same stack discipline, so it takes the same linear time, and a dependency cycle, which Yjs parks,
 * is found the same way.
 */
function integrate(byClient: Map<number, Struct[]>, stateOf: (client: number) => number): Map<number, number> | UpdateProblem {
  const state = new Map<number, number>();
  const at = (client: number) => state.get(client) ?? stateOf(client);
  const readers = new Map([...byClient].map(([client, refs]) => [client, { refs, i: 0 }]));
  const order = [...readers.keys()].sort((a, b) => a - b);
  const nextReader = () => {
    while (order.length > 0) {
      const reader = readers.get(order[order.length - 1]!)!;
      if (reader.i < reader.refs.length) return reader;
      order.pop();
    }
    return null;
  };
  let reader = nextReader();
  if (!reader) return state;
  let head = reader.refs[reader.i++]!;
  const stack: Struct[] = [];
  for (;;) {
    if (!(head instanceof Y.Skip)) {
      const { client, clock } = head.id;
      const offset = at(client) - clock;
      if (offset < 0) return lacking(`struct ${client}:${clock} follows changes of its client that the document does not hold`);
      const missing = head instanceof Y.Item ? missingClient(head, at) : null;
      if (missing !== null) {
        stack.push(head);
        const theirs = readers.get(missing);
        if (!theirs || theirs.i === theirs.refs.length) {
          return lacking(`struct ${client}:${clock} refers to changes of client ${missing} that the document does not hold`);
        }
        head = theirs.refs[theirs.i++]!;
        continue;
      }
      if (offset < head.length) state.set(client, clock + head.length);
    }
    if (stack.length > 0) head = stack.pop()!;
    else if (reader && reader.i < reader.refs.length) head = reader.refs[reader.i++]!;
    else {
      reader = nextReader();
      if (!reader) return state;
      head = reader.refs[reader.i++]!;
    }
  }
}

/** Item.getMissing without its side effects: a client whose change the item needs and the document lacks. */
function missingClient(item: Y.Item, at: (client: number) => number): number | null {
  // Plain conditions, no helper closure: this runs for every struct of every update.
  const own = item.id.client;
  const origin = item.origin;
  if (origin !== null && origin.client !== own && origin.clock >= at(origin.client)) return origin.client;
  const right = item.rightOrigin;
  if (right !== null && right.client !== own && right.clock >= at(right.client)) return right.client;
  const parent = parentId(item);
  if (parent !== null && parent.client !== own && parent.clock >= at(parent.client)) return parent.client;
  return null;
}
