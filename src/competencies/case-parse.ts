// Reading an IMS CASE 1.0 package: the request body's bytes to the rows an import stores, or the
// first problem (a 400 for a body that is not a package, a 422 naming the offending item). Pure (no
// database): large packages are read in a worker thread (src/lib/worker-pool.ts; this module's
// default export is the thread's task), so that parsing a large package never holds the event loop.
// case.ts stores what this returns.
//
// Every text of the package, the fields kept as given included, passes the one text rule of REST
// bodies (src/http/text.ts textRefusal); a tree deeper than MAX_COMPETENCY_DEPTH is refused.
import { createHash } from 'node:crypto';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { textRefusal } from '../http/text';
import { MAX_COMPETENCY_DEPTH } from './limits';

/** An item as an import stores it: its columns, and the whole CFItem as given (JSON). */
export interface StagedItem {
  identifier: string;
  uri: string | null;
  code: string;
  title: string;
  description: string | null;
  itemType: string | null;
  lastChange: string | null;
  /** The parent item's identifier (isChildOf), null under the CFDocument. */
  parent: string | null;
  given: string;
}

/** An association as given (JSON), with what an import indexes it by. */
export interface StagedAssociation {
  identifier: string;
  type: string;
  origin: string;
  destination: string;
  given: string;
}

export interface ParsedPackage {
  document: {
    identifier: string;
    uri: string | null;
    title: string;
    creator: string | null;
    version: string | null;
    description: string | null;
    lastChange: string | null;
    given: string;
  };
  /** The package's other top-level members as given (CFDefinitions, CFRubrics, …): a JSON object, or null for none. */
  rest: string | null;
  items: StagedItem[];
  associations: StagedAssociation[];
}

/**
 * The package as it crosses from the worker thread: its items' and associations' fields in one
 * string each, every field ended by NUL (which no accepted text holds: REST's rule refuses it, and
 * JSON escapes it). One string is copied across at the cost of a memcpy, where 40,000 objects would
 * be rebuilt on the event loop field by field; the reader takes the fields a few rows at a time.
 */
export interface PackedPackage {
  document: ParsedPackage['document'];
  rest: string | null;
  itemCount: number;
  /** identifier, uri, code, title, description, itemType, lastChange, parent, given (none: empty), as UTF-8. */
  items: Uint8Array;
  associationCount: number;
  /** identifier, type, origin, destination, given, as UTF-8. */
  associations: Uint8Array;
}

export const ITEM_FIELDS = 9;
export const ASSOCIATION_FIELDS = 5;
// Fields end with a NUL, which no text of a package holds (text() refuses control characters, and
// JSON.stringify escapes them in the bodies kept as given).
const END = '\u0000';
const END_BYTE = 0;

/**
 * The rows' fields in two UTF-8 buffers: a worker hands them over moved, not copied (`run`). As
 * strings they were structured-cloned on the event loop, ~45 MB for 20,000 items: up to a second.
 */
function pack(pkg: ParsedPackage): PackedPackage {
  const encoder = new TextEncoder();
  const items = pkg.items
    .map((i) => [i.identifier, i.uri, i.code, i.title, i.description, i.itemType, i.lastChange, i.parent, i.given].map((f) => (f ?? '') + END).join(''))
    .join('');
  const associations = pkg.associations.map((a) => [a.identifier, a.type, a.origin, a.destination, a.given].map((f) => f + END).join('')).join('');
  return {
    document: pkg.document,
    rest: pkg.rest,
    itemCount: pkg.items.length,
    items: encoder.encode(items),
    associationCount: pkg.associations.length,
    associations: encoder.encode(associations),
  };
}

/** Reads the fields of a packed buffer in order, decoding one at a time. */
export class FieldReader {
  private at = 0;
  private readonly decoder = new TextDecoder();
  constructor(private readonly packed: Uint8Array) {}
  /** The next field; null for an empty one. */
  next(): string | null {
    const end = this.packed.indexOf(END_BYTE, this.at);
    const start = this.at;
    this.at = end + 1;
    return end === start ? null : this.decoder.decode(this.packed.subarray(start, end));
  }
}

export type ParseOutcome =
  | { ok: true; pkg: PackedPackage }
  | { ok: false; status: 400 | 422; detail: string; errors: { path: string; message: string }[] };

export const MAX_CASE_ITEMS = 20_000;
export const MAX_CASE_ASSOCIATIONS = 100_000;
/** How deep a value kept as given may nest (objects and arrays), e.g. CFDefinitions.CFConcepts[0].keywords. */
export const MAX_GIVEN_NESTING = 16;
const MAX_TEXT = 10_000;

class PackageProblem extends Error {
  constructor(
    readonly status: 400 | 422,
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

const fail = (path: string, message: string): never => {
  throw new PackageProblem(422, path, message);
};

/**
 * A text field of the package, under the rules of REST bodies (src/http/text.ts): free text
 * (statements, notes, descriptions) may hold tabs and line breaks, names and identifiers not.
 */
function text(value: unknown, path: string, required: boolean, max = MAX_TEXT, kind: 'single-line' | 'multi-line' = 'single-line'): string | null {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    if (required) fail(path, 'is required');
    return null;
  }
  if (typeof value !== 'string') return fail(path, 'must be a string');
  if (value.length > max) fail(path, `is longer than ${max} characters`);
  const problem = textRefusal(value, { multiLine: kind === 'multi-line' });
  if (problem) fail(path, problem);
  return value.trim();
}

const freeText = (value: unknown, path: string, required: boolean, max = MAX_TEXT) => text(value, path, required, max, 'multi-line');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A value kept as given: every string in it (keys too) under the rule of free text, nested at most
 * MAX_GIVEN_NESTING deep. Walked without recursion.
 */
function checkGiven(value: unknown, path: string): void {
  const stack: [unknown, string, number][] = [[value, path, 0]];
  while (stack.length > 0) {
    const [v, at, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textRefusal(v, { multiLine: true });
      if (problem) fail(at, problem);
    } else if (typeof v === 'object' && v !== null) {
      if (depth >= MAX_GIVEN_NESTING) fail(at, `nests deeper than ${MAX_GIVEN_NESTING} levels`);
      if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}[${i}]`, depth + 1]);
      else
        for (const [key, inner] of Object.entries(v)) {
          const problem = textRefusal(key, { multiLine: false });
          if (problem) fail(`${at} (a member's name)`, problem);
          stack.push([inner, `${at}.${key}`, depth + 1]);
        }
    }
  }
}

/**
 * A stable identifier for an association that came without one, or made here for the tree (the same
 * ends and type give the same one; an isChildOf's is the one exports have always given it).
 */
export function associationId(origin: string, type: string, destination: string): string {
  const key = type === 'isChildOf' ? `${origin}\u0000${destination}` : `${origin}\u0000${type}\u0000${destination}`;
  const h = createHash('sha1').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** Validates the whole package before anything is written; the first problem is a 422 naming the item. */
export function parseCasePackage(body: unknown): ParsedPackage {
  if (!isObject(body)) throw new PackageProblem(400, '(body)', 'must be a CASE package object');
  const doc = body.CFDocument;
  if (!isObject(doc)) throw new PackageProblem(400, 'CFDocument', 'is required and must be an object');
  if (!Array.isArray(body.CFItems)) throw new PackageProblem(400, 'CFItems', 'is required and must be an array');
  if (body.CFAssociations !== undefined && !Array.isArray(body.CFAssociations)) throw new PackageProblem(400, 'CFAssociations', 'must be an array');
  const document = {
    identifier: text(doc.identifier, 'CFDocument.identifier', true, 200)!,
    uri: text(doc.uri, 'CFDocument.uri', false, 2000),
    title: text(doc.title, 'CFDocument.title', true, 500)!,
    creator: text(doc.creator, 'CFDocument.creator', false, 500),
    version: text(doc.version, 'CFDocument.version', false, 100),
    description: freeText(doc.description, 'CFDocument.description', false),
    lastChange: text(doc.lastChangeDateTime, 'CFDocument.lastChangeDateTime', false, 100),
    given: '',
  };
  checkGiven(doc, 'CFDocument');
  document.given = JSON.stringify(doc);
  if (body.CFItems.length > MAX_CASE_ITEMS) fail('CFItems', `holds more than ${MAX_CASE_ITEMS} items`);

  const items = new Map<string, StagedItem>();
  const codes = new Map<string, string>();
  body.CFItems.forEach((raw: unknown, i: number) => {
    const at = `CFItems[${i}]`;
    if (!isObject(raw)) return fail(at, 'must be an object');
    const identifier = text(raw.identifier, `${at}.identifier`, true, 200)!;
    const named = `${at} (identifier ${identifier})`;
    if (identifier === document.identifier) fail(named, 'uses the CFDocument identifier');
    if (items.has(identifier)) fail(named, 'repeats an identifier of an earlier item');
    const code = text(raw.humanCodingScheme, `${named}.humanCodingScheme`, false, 200) ?? identifier;
    const other = codes.get(code.toLowerCase());
    if (other) fail(named, `humanCodingScheme ${code} is already used by item ${other}`);
    codes.set(code.toLowerCase(), identifier);
    const item: StagedItem = {
      identifier,
      uri: text(raw.uri, `${named}.uri`, false, 2000),
      code,
      title: freeText(raw.fullStatement, `${named}.fullStatement`, true, 2000)!,
      description: freeText(raw.notes, `${named}.notes`, false) ?? freeText(raw.abbreviatedStatement, `${named}.abbreviatedStatement`, false),
      itemType: text(raw.CFItemType, `${named}.CFItemType`, false, 200),
      lastChange: text(raw.lastChangeDateTime, `${named}.lastChangeDateTime`, false, 100),
      parent: null,
      given: '',
    };
    checkGiven(raw, named);
    item.given = JSON.stringify(raw);
    items.set(identifier, item);
  });

  const raws = (body.CFAssociations ?? []) as unknown[];
  if (raws.length > MAX_CASE_ASSOCIATIONS) fail('CFAssociations', `holds more than ${MAX_CASE_ASSOCIATIONS} associations`);
  const associations: StagedAssociation[] = [];
  raws.forEach((raw, i) => {
    const at = `CFAssociations[${i}]`;
    if (!isObject(raw)) return fail(at, 'must be an object');
    const type = text(raw.associationType, `${at}.associationType`, true, 100)!;
    const given = text(raw.identifier, `${at}.identifier`, false, 200);
    const named = given ? `${at} (identifier ${given})` : at;
    const origin = raw.originNodeURI;
    const destination = raw.destinationNodeURI;
    if (!isObject(origin)) return fail(`${named}.originNodeURI`, 'is required and must be an object');
    if (!isObject(destination)) return fail(`${named}.destinationNodeURI`, 'is required and must be an object');
    const from = text(origin.identifier, `${named}.originNodeURI.identifier`, true, 200)!;
    const to = text(destination.identifier, `${named}.destinationNodeURI.identifier`, true, 200)!;
    checkGiven(raw, named);
    associations.push({ identifier: given ?? associationId(from, type, to), type, origin: from, destination: to, given: JSON.stringify(raw) });
    if (type !== 'isChildOf') return;
    const item = items.get(from);
    if (!item) return fail(`${named}.originNodeURI`, `names ${from}, which is not an item of the package`);
    if (to !== document.identifier && !items.has(to))
      return fail(`${named}.destinationNodeURI`, `names ${to}, which is neither an item nor the CFDocument of the package`);
    if (to === from) return fail(named, `makes item ${from} its own parent`);
    const newParent = to === document.identifier ? null : to;
    if (item.parent !== null && item.parent !== newParent) return fail(named, `gives item ${from} a second parent`);
    item.parent = newParent;
  });

  // A cycle of isChildOf would leave a part of the tree hanging from nothing.
  const state = new Map<string, 'walking' | 'done'>();
  for (const item of items.values()) {
    const path: StagedItem[] = [];
    for (let at: StagedItem | undefined = item; at && state.get(at.identifier) !== 'done'; at = at.parent ? items.get(at.parent) : undefined) {
      if (state.get(at.identifier) === 'walking') fail(`CFItems (identifier ${at.identifier})`, 'is its own ancestor through isChildOf associations');
      state.set(at.identifier, 'walking');
      path.push(at);
    }
    for (const p of path) state.set(p.identifier, 'done');
  }
  // Levels, each item's from its parent's: walked up to the first item whose level is known.
  const levels = new Map<string, number>();
  for (const item of items.values()) {
    const path: StagedItem[] = [];
    let at: StagedItem | undefined = item;
    while (at && !levels.has(at.identifier)) {
      path.push(at);
      at = at.parent ? items.get(at.parent) : undefined;
    }
    let level = at ? levels.get(at.identifier)! : 0;
    for (let i = path.length - 1; i >= 0; i--) {
      levels.set(path[i]!.identifier, ++level);
      if (level > MAX_COMPETENCY_DEPTH) {
        const index = (body.CFItems as unknown[]).findIndex((raw) => isObject(raw) && raw.identifier === path[i]!.identifier);
        fail(`CFItems[${index}] (identifier ${path[i]!.identifier})`, `sits deeper than ${MAX_COMPETENCY_DEPTH} levels through isChildOf associations`);
      }
    }
  }

  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (key !== 'CFDocument' && key !== 'CFItems' && key !== 'CFAssociations') rest[key] = value;
  checkGiven(rest, '(package)');
  return { document, rest: Object.keys(rest).length > 0 ? JSON.stringify(rest) : null, items: [...items.values()], associations };
}

/** JSON bodies must be UTF-8 (as src/http/utf8.ts checks for other routes): a raw lone surrogate is refused, not turned into U+FFFD. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The request body's bytes to the package, or the first problem. */
export function readCasePackage(bytes: Uint8Array | ArrayBuffer): ParseOutcome {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { ok: false, status: 400, detail: 'The request body is not valid UTF-8', errors: [] };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, status: 400, detail: 'Malformed JSON in request body', errors: [] };
  }
  try {
    return { ok: true, pkg: pack(parseCasePackage(body)) };
  } catch (err) {
    if (!(err instanceof PackageProblem)) throw err;
    const detail =
      err.status === 400
        ? `The request body is not a CASE package: ${err.path} ${err.problem}`
        : `The CASE package is not acceptable: ${err.path}: ${err.problem}; nothing was imported`;
    return { ok: false, status: err.status, detail, errors: [{ path: err.path, message: err.problem }] };
  }
}

/** An outcome whose packed buffers leave the worker thread moved, not copied (piscina's Transferable). */
class MovedOutcome {
  constructor(
    private readonly outcome: ParseOutcome,
    private readonly buffers: ArrayBuffer[],
  ) {}
  get [transferableSymbol](): ArrayBuffer[] {
    return this.buffers;
  }
  get [valueSymbol](): ParseOutcome {
    return this.outcome;
  }
}

/** The worker thread's task (src/lib/worker-pool.ts). */
export default function run(input: { bytes: Uint8Array }): ParseOutcome | MovedOutcome {
  const outcome = readCasePackage(input.bytes);
  if (!outcome.ok) return outcome;
  return move(new MovedOutcome(outcome, [outcome.pkg.items.buffer as ArrayBuffer, outcome.pkg.associations.buffer as ArrayBuffer])) as MovedOutcome;
}
