// Bench helper: reads a V8 heap snapshot (.heapsnapshot, as v8.writeHeapSnapshot writes it) without
// JSON.parse on the whole file (a large heap's snapshot can be longer than V8's largest string,
// 512 MiB), and sums it two ways:
//   - by constructor: the self size and count of the nodes of each type and constructor name;
//   - by owner: every node is charged to the first "owner" on its shortest path from the GC roots
//     (breadth-first over strong edges), an owner being a node of one of the constructors asked
//     for (e.g. Doc, Connection, WebSocket, Socket) or an object literal told by one of its
//     properties (the store's LoadedDoc by `lacksMarkdown`; not by a property holding a small
//     integer, for which the snapshot lists no edge). Not a dominator tree: a node reached from two
//     owners is charged to the nearer, but it is cheap and says which object holds what.
// Diffing two snapshots' sums (a baseline, and with N documents open) gives bytes per document.
import { readFileSync } from 'node:fs';

export interface Sums {
  /** "type name" → self bytes and count (strings, code and numbers by type only). */
  byConstructor: Map<string, { bytes: number; count: number }>;
  /** owner label → bytes charged to it (its own and what it holds) and how many owners. */
  byOwner: Map<string, { bytes: number; count: number }>;
  totalBytes: number;
}

export interface OwnerRules {
  /** Constructor names that own what they hold ("Doc" is Y.Doc). */
  constructors: string[];
  /** Object literals told by one of their properties: property → label. */
  literals?: Record<string, string>;
}

const ANONYMOUS = new Set(['string', 'concatenated string', 'sliced string', 'code', 'number', 'bigint', 'symbol']);

/** Parses a JSON array of non-negative integers from `buf` at `start` (just after its '['). */
function readIntegers(buf: Buffer, start: number, count: number): Uint32Array {
  const out = new Uint32Array(count);
  let n = 0;
  let value = 0;
  let inNumber = false;
  for (let i = start; n < count; i++) {
    const c = buf[i]!;
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) {
        out[n++] = value;
        value = 0;
        inNumber = false;
      }
      if (c === 93 /* ] */) break;
    }
  }
  if (n !== count) throw new Error(`heap snapshot: expected ${count} numbers, read ${n}`);
  return out;
}

export function summarise(file: string, rules: OwnerRules): Sums {
  const buf = readFileSync(file);
  const nodesAt = buf.indexOf('"nodes":[');
  const header = JSON.parse(`${buf.subarray(0, nodesAt).toString().trim().replace(/,$/, '')}}`) as {
    snapshot: {
      meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
      node_count: number;
      edge_count: number;
    };
  };
  const { meta, node_count: nodeCount, edge_count: edgeCount } = header.snapshot;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const nodes = readIntegers(buf, nodesAt + '"nodes":['.length, nodeCount * nodeFields);
  const edgesAt = buf.indexOf('"edges":[', nodesAt);
  const edges = readIntegers(buf, edgesAt + '"edges":['.length, edgeCount * edgeFields);
  const stringsAt = buf.indexOf('"strings":[', edgesAt);
  const stringsEnd = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.subarray(stringsAt + '"strings":'.length, stringsEnd + 1).toString()) as string[];

  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const weak = edgeTypes.indexOf('weak');
  const property = edgeTypes.indexOf('property');
  const objectType = nodeTypes.indexOf('object');

  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let n = 0; n < nodeCount; n++) firstEdge[n + 1] = firstEdge[n]! + nodes[n * nodeFields + edgeCountAt]! * edgeFields;

  const ownerNames = new Set(rules.constructors);
  const literals = new Map(Object.entries(rules.literals ?? {}));
  const literalProps = new Map<number, string>();
  strings.forEach((s, i) => {
    const label = literals.get(s);
    if (label) literalProps.set(i, label);
  });
  /** The owner label of node n when it is an owner itself, else undefined. */
  const ownLabel = (n: number): string | undefined => {
    if (nodes[n * nodeFields + typeAt] !== objectType) return undefined;
    const name = strings[nodes[n * nodeFields + nameAt]!]!;
    if (ownerNames.has(name)) return name;
    if (name !== 'Object' || literalProps.size === 0) return undefined;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) {
      if (edges[e + edgeTypeAt] === property) {
        const label = literalProps.get(edges[e + edgeNameAt]!);
        if (label) return label;
      }
    }
    return undefined;
  };

  // Breadth-first from the root (node 0): each node charged to the owner its first path reaches.
  const labels: string[] = ['(not in an owner)'];
  const labelIndex = new Map<string, number>([[labels[0]!, 0]]);
  const owner = new Int32Array(nodeCount).fill(-1);
  const queue = new Uint32Array(nodeCount);
  let head = 0;
  let tail = 0;
  owner[0] = 0;
  queue[tail++] = 0;
  const ownerCounts = new Map<string, number>();
  while (head < tail) {
    const n = queue[head++]!;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) {
      if (edges[e + edgeTypeAt] === weak) continue;
      const to = edges[e + toAt]! / nodeFields;
      if (owner[to] !== -1) continue;
      const label = ownLabel(to);
      if (label) {
        let index = labelIndex.get(label);
        if (index === undefined) {
          index = labels.length;
          labels.push(label);
          labelIndex.set(label, index);
        }
        owner[to] = index;
        ownerCounts.set(label, (ownerCounts.get(label) ?? 0) + 1);
      } else owner[to] = owner[n]!;
      queue[tail++] = to;
    }
  }

  const byConstructor = new Map<string, { bytes: number; count: number }>();
  const ownerBytes = new Float64Array(labels.length + 1);
  let totalBytes = 0;
  for (let n = 0; n < nodeCount; n++) {
    const at = n * nodeFields;
    const type = nodeTypes[nodes[at + typeAt]!]!;
    const size = nodes[at + sizeAt]!;
    const key = ANONYMOUS.has(type) ? `(${type})` : `${type} ${strings[nodes[at + nameAt]!]}`;
    const entry = byConstructor.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += size;
    entry.count += 1;
    byConstructor.set(key, entry);
    // Unreachable nodes (owner -1) are garbage the snapshot still lists: counted apart.
    const o = owner[n]!;
    ownerBytes[o === -1 ? labels.length : o] = ownerBytes[o === -1 ? labels.length : o]! + size;
    totalBytes += size;
  }
  const byOwner = new Map<string, { bytes: number; count: number }>();
  labels.forEach((label, i) => byOwner.set(label, { bytes: ownerBytes[i]!, count: ownerCounts.get(label) ?? 0 }));
  byOwner.set('(unreachable)', { bytes: ownerBytes[labels.length]!, count: 0 });
  return { byConstructor, byOwner, totalBytes };
}

export interface Growth {
  key: string;
  /** Bytes and count per document. */
  bytes: number;
  count: number;
}

/** What grew from `before` to `after`, per document, largest first. */
export function growth(after: Map<string, { bytes: number; count: number }>, before: Map<string, { bytes: number; count: number }>, docs: number): Growth[] {
  const keys = new Set([...after.keys(), ...before.keys()]);
  return [...keys]
    .map((key) => {
      const a = after.get(key) ?? { bytes: 0, count: 0 };
      const b = before.get(key) ?? { bytes: 0, count: 0 };
      return { key, bytes: (a.bytes - b.bytes) / docs, count: (a.count - b.count) / docs };
    })
    .sort((x, y) => y.bytes - x.bytes);
}
