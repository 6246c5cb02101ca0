// Counting an update before anything decodes it: decoding and applying cost time per struct of
// every kind and per deleted range, however few bytes each takes (a GC struct or a skip is two), so
// one pass over the bytes counts them, stops at the caps, and cuts the update into the slices the
// hub applies a turn at a time (UpdatePass); scanUpdate is that pass in one go.
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';

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
