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
// Decoding and applying cost time per struct of every kind and per deleted range, however few bytes
// each takes (a GC struct or a skip is two), so every update is first counted by a pass over its
// bytes that decodes nothing and stops at the caps (UpdatePass, scanUpdate): the hub runs that pass
// a bounded number of entries at a time, charges the sender for the count, and applies a large
// update in the slices the same pass cut.
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';

/** Client ids: any safe integer (Yjs draws uint32s; other implementations may use more bits). */
export const MAX_CLIENT_ID = Number.MAX_SAFE_INTEGER;
/**
 * Clocks, and a clock plus a length: far past any editing session (one clock per character ever
 * typed by one client), and well below 2^53, where lib0's varints lose precision even once the
 * V2 encoding has doubled a difference of clocks.
 */
export const MAX_CLOCK = 2 ** 48;
/**
 * Structs and deleted ranges one update may hold; a real client sends no more than its whole
 * document, and a sync step 2 of even the most scattered document at the 5 MiB limit holds fewer
 * (bench/RESULTS.md, "Text beside the state, and a cap on what one update holds").
 */
export const MAX_UPDATE_STRUCTS = 600_000;
export const MAX_UPDATE_DELETE_RANGES = 200_000;
/**
 * GC structs and skips one update may hold (counted in MAX_UPDATE_STRUCTS too). Yjs writes a GC
 * struct only for content collected with a deleted parent type, and merges neighbouring ones; a
 * skip only where merged updates leave a gap: a real client sends few of either.
 */
export const MAX_UPDATE_PLACEHOLDERS = 20_000;

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

/** Why an update holding these counts is refused, or null. */
export const tooMuch = ({ items, placeholders, ranges }: Pick<UpdateCount, 'items' | 'placeholders' | 'ranges'>): string | null =>
  items + placeholders > MAX_UPDATE_STRUCTS
    ? `it holds more than ${MAX_UPDATE_STRUCTS} structs`
    : placeholders > MAX_UPDATE_PLACEHOLDERS
      ? `it holds more than ${MAX_UPDATE_PLACEHOLDERS} GC structs and skips`
      : ranges > MAX_UPDATE_DELETE_RANGES
        ? `it holds more than ${MAX_UPDATE_DELETE_RANGES} deleted ranges`
        : null;

/** What a V1 update holds, by kind: items, placeholders (GC structs and skips) and deleted ranges. */
export interface UpdateCount {
  items: number;
  placeholders: number;
  ranges: number;
  /** Everything decoding and applying it costs a struct or a range for. */
  work: number;
}

/**
 * Counts a V1 update's structs of every kind and its deleted ranges without decoding it, stopping
 * once a count passes its cap (the counts are then at least that); null when its bytes do not read
 * as an update (decoding it then says why). One UpdatePass in one go.
 */
export function scanUpdate(bytes: Uint8Array): UpdateCount | null {
  const pass = new UpdatePass(bytes, Infinity);
  pass.advance();
  return pass.unreadable ? null : pass.count();
}

/** Part of a slice: `count` structs of `client` from `clock`, or (`clock` -1) `count` of its deleted ranges; bytes `start` to `end` of the update. */
export interface UpdatePiece {
  client: number;
  clock: number;
  count: number;
  start: number;
  end: number;
}

const START = 0;
const STRUCTS = 1;
const DELETIONS = 2;
const DONE = 3;

/**
 * One pass over a V1 update's bytes that both counts and cuts, a bounded number of entries at a
 * time (`advance`), so that the hub can spread a large update's pass over several turns of the
 * event loop. It decodes nothing (strings are stepped over, not read; embedded values are read,
 * as they must be to find their end), and follows yjs's lazyStructReaderGenerator and
 * readDeleteSet. It counts every struct kind and deleted range, and stops once a count passes its
 * cap (`over`). Meanwhile it cuts the update into slices of at most `perSlice` structs or deleted
 * ranges (several clients' runs may share one), which applied in order (each client's structs in
 * clock order, then the deletions) make the same change as the whole: a large update can then be
 * checked and applied a slice at a time. A slice whose structs need a later slice is refused as
 * lacking changes, and can be retried once that one is in; one of several clients' pieces may have
 * to be split into its pieces first (one client's piece needing a later slice that needs another's).
 */
export class UpdatePass {
  items = 0;
  placeholders = 0;
  ranges = 0;
  /** Its bytes do not read as an update. */
  unreadable = false;
  private readonly rest: decoding.Decoder;
  private phase = START;
  /** Clients (of structs, then of deletions) still to read, and entries of the current one. */
  private clientsLeft = 0;
  private entriesLeft = 0;
  private client = 0;
  private clock = 0;
  /** The current piece: where it starts (bytes, and clock: -1 for deletions) and its entries so far. */
  private pieceStart = 0;
  private pieceClock = 0;
  private pieceCount = 0;
  private readonly slices: UpdatePiece[][] = [];
  private current: UpdatePiece[] = [];
  private inCurrent = 0;

  constructor(
    readonly bytes: Uint8Array,
    readonly perSlice: number,
  ) {
    this.rest = decoding.createDecoder(bytes);
  }

  /** Read to its end, or stopped: past a cap, or unreadable. */
  get done(): boolean {
    return this.phase === DONE;
  }

  /** Some count passed its cap (tooMuch says which). */
  get over(): boolean {
    return tooMuch(this) !== null;
  }

  count(): UpdateCount {
    const { items, placeholders, ranges } = this;
    return { items, placeholders, ranges, work: items + placeholders + ranges };
  }

  /** Slices cut, once `done` (one for an update of at most `perSlice` entries). */
  get sliceCount(): number {
    return this.slices.length;
  }

  /** Reads up to `entries` more structs or deleted ranges; whether the pass is now done. */
  advance(entries = Infinity): boolean {
    const rest = this.rest;
    let budget = entries;
    try {
      if (this.phase === START) {
        this.clientsLeft = decoding.readVarUint(rest);
        this.phase = STRUCTS;
      }
      while (this.phase === STRUCTS) {
        if (this.entriesLeft === 0) {
          this.endPiece();
          if (this.clientsLeft === 0) {
            this.clientsLeft = decoding.readVarUint(rest);
            this.phase = DELETIONS;
            break;
          }
          this.clientsLeft -= 1;
          this.entriesLeft = decoding.readVarUint(rest);
          this.client = decoding.readVarUint(rest);
          this.clock = decoding.readVarUint(rest);
          this.startPiece(this.clock);
          continue;
        }
        if (budget-- <= 0) return false;
        this.clock += readStruct(rest);
        if (readPlaceholder) this.placeholders += 1;
        else this.items += 1;
        this.entriesLeft -= 1;
        this.pieceCount += 1;
        if (this.items + this.placeholders > MAX_UPDATE_STRUCTS || this.placeholders > MAX_UPDATE_PLACEHOLDERS) return this.stop();
        if (++this.inCurrent === this.perSlice) {
          this.endPiece();
          this.cut();
          this.startPiece(this.clock);
        }
      }
      while (this.phase === DELETIONS) {
        if (this.entriesLeft === 0) {
          this.endPiece();
          if (this.clientsLeft === 0) {
            if (this.inCurrent > 0) this.cut();
            this.phase = DONE;
            break;
          }
          this.clientsLeft -= 1;
          this.client = decoding.readVarUint(rest);
          this.entriesLeft = decoding.readVarUint(rest);
          // Counted as announced: three million ranges cost what the cap does.
          if ((this.ranges += this.entriesLeft) > MAX_UPDATE_DELETE_RANGES) return this.stop();
          this.startPiece(-1);
          continue;
        }
        if (budget-- <= 0) return false;
        decoding.readVarUint(rest); // clock
        decoding.readVarUint(rest); // length
        this.entriesLeft -= 1;
        this.pieceCount += 1;
        if (++this.inCurrent === this.perSlice) {
          this.endPiece();
          this.cut();
          this.startPiece(-1);
        }
      }
    } catch {
      this.unreadable = true;
      return this.stop();
    }
    return true;
  }

  /** The pieces of slice `i`. */
  pieces(i: number): readonly UpdatePiece[] {
    return this.slices[i]!;
  }

  /** Pieces of this update (a slice, or part of one) as an update of their own. */
  encode(pieces: readonly UpdatePiece[]): Uint8Array {
    const e = encoding.createEncoder();
    let structPieces = 0;
    for (const piece of pieces) if (piece.clock >= 0) structPieces += 1;
    encoding.writeVarUint(e, structPieces);
    for (const { client, clock, count, start, end } of pieces) {
      if (clock < 0) continue;
      encoding.writeVarUint(e, count);
      encoding.writeVarUint(e, client);
      encoding.writeVarUint(e, clock);
      encoding.writeUint8Array(e, this.bytes.subarray(start, end));
    }
    encoding.writeVarUint(e, pieces.length - structPieces);
    for (const { client, clock, count, start, end } of pieces) {
      if (clock >= 0) continue;
      encoding.writeVarUint(e, client);
      encoding.writeVarUint(e, count);
      encoding.writeUint8Array(e, this.bytes.subarray(start, end));
    }
    return encoding.toUint8Array(e);
  }

  private stop(): true {
    this.phase = DONE;
    return true;
  }

  private startPiece(clock: number): void {
    this.pieceStart = this.rest.pos;
    this.pieceClock = clock;
    this.pieceCount = 0;
  }

  /** Ends the current piece into the current slice. */
  private endPiece(): void {
    if (this.pieceCount === 0) return;
    this.current.push({ client: this.client, clock: this.pieceClock, count: this.pieceCount, start: this.pieceStart, end: this.rest.pos });
    this.pieceCount = 0;
  }

  private cut(): void {
    this.slices.push(this.current);
    this.current = [];
    this.inCurrent = 0;
  }
}

/**
 * Whether a V1 update holds nothing: no struct of any kind and no deleted range. Reads only the
 * counts, never a struct (a reader's update is refused unless it is empty, and must cost nothing).
 */
export function isEmptyUpdate(bytes: Uint8Array): boolean {
  try {
    const rest = decoding.createDecoder(bytes);
    for (let c = decoding.readVarUint(rest); c > 0; c--) {
      if (decoding.readVarUint(rest) > 0) return false;
      decoding.readVarUint(rest); // client
      decoding.readVarUint(rest); // clock
    }
    for (let c = decoding.readVarUint(rest); c > 0; c--) {
      decoding.readVarUint(rest); // client
      if (decoding.readVarUint(rest) > 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Whether the struct readStruct last read was a placeholder (a GC struct or a skip). */
let readPlaceholder = false;

/**
 * Reads past one struct and answers its length in clocks (a string's in UTF-16 units, counted from
 * its UTF-8 bytes), setting readPlaceholder. Throws on bytes that are not a struct. (Plain
 * module-level helpers, no closures: this runs for every struct of every update.)
 */
function readStruct(rest: decoding.Decoder): number {
  const info = decoding.readUint8(rest);
  if (info === 10 || (info & 0b11111) === 0) {
    // A skip, or a GC struct.
    readPlaceholder = true;
    return decoding.readVarUint(rest);
  }
  readPlaceholder = false;
  const kind = info & 0b11111;
  // An id is two varints (client, clock) in V1.
  if (info & 0b10000000) skipId(rest);
  if (info & 0b01000000) skipId(rest);
  if ((info & 0b11000000) === 0) {
    // The parent: a root type's name, or an item's id; then the parent's key.
    if (decoding.readVarUint(rest) === 1) skipBytes(rest);
    else skipId(rest);
    if (info & 0b00100000) skipBytes(rest);
  }
  switch (kind) {
    case 1: // deleted
      return decoding.readVarUint(rest);
    case 2: {
      // JSON
      const n = decoding.readVarUint(rest);
      for (let i = 0; i < n; i++) skipBytes(rest);
      return n;
    }
    case 3: // binary
    case 5: // embed
      skipBytes(rest);
      return 1;
    case 4:
      return skipString(rest);
    case 6: // format
      skipBytes(rest);
      skipBytes(rest);
      return 1;
    case 7: {
      const typeRef = decoding.readVarUint(rest);
      if (typeRef === 3 || typeRef === 5) skipBytes(rest);
      else if (typeRef > 6) throw new Error(`unknown type ${typeRef}`);
      return 1;
    }
    case 8: {
      // any
      const n = decoding.readVarUint(rest);
      for (let i = 0; i < n; i++) decoding.readAny(rest);
      return n;
    }
    case 9: // subdocument
      skipBytes(rest);
      decoding.readAny(rest);
      return 1;
    default:
      throw new Error(`unknown struct kind ${kind}`);
  }
}

function skipId(rest: decoding.Decoder): void {
  decoding.readVarUint(rest);
  decoding.readVarUint(rest);
}

/** Steps over a length-prefixed run of bytes. */
function skipBytes(rest: decoding.Decoder): number {
  const n = decoding.readVarUint(rest);
  const start = rest.pos;
  if (start + n > rest.arr.length) throw new Error('unexpected end of update');
  rest.pos = start + n;
  return start;
}

/** Steps over a string, answering its length in UTF-16 units. */
function skipString(rest: decoding.Decoder): number {
  const start = skipBytes(rest);
  const arr = rest.arr;
  let units = 0;
  for (let i = start; i < rest.pos; i++) {
    const byte = arr[i]!;
    if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
  }
  return units;
}
