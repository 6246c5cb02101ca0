// Fails when two folders of the server import each other, directly or round a longer loop, and
// when two files of src/, collab/ or export/ do (types included, no exception).
// Files are grouped by folder (src/<area>, src/lib, src/http, collab, db …); each file at the root
// of src/ is the composition and counts on its own. Type-only imports count too (a cycle of types
// is still two areas that cannot be understood one without the other), with one exception: the
// app's environment type in src/context.ts, which names every area's dependencies and which every
// router is typed with, may be imported for its types from anywhere.
// Run: npx tsx scripts/check-cycles.ts  (CI runs it).
import path from 'node:path';
import { parseDependencyTree } from 'dpdm';

const root = path.resolve(import.meta.dirname, '..');
const entries = ['src/server.ts', 'src/app.ts', 'collab/index.ts', 'scripts/admin.ts'];
const CONTEXT = 'src/context.ts';

function unitOf(file: string): string | null {
  const rel = path.relative(root, path.resolve(root, file)).split(path.sep).join('/');
  if (rel.startsWith('node_modules/') || rel.startsWith('..')) return null;
  const parts = rel.split('/');
  if (parts[0] === 'src' && parts.length === 2) return rel; // composition files stand alone
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

const parse = (transform: boolean) =>
  parseDependencyTree(entries, { context: root, transform, skipDynamicImports: false, tsconfig: path.join(root, 'tsconfig.json') });
const tree = await parse(false);
// With `transform`, dpdm drops type-only imports: what remains are the imports that run.
const valueTree = await parse(true);
const importsValuesOf = (file: string, dep: string) => (valueTree[file] ?? []).some((d) => d.id === dep);

const edges = new Map<string, Map<string, string>>(); // from unit → to unit → an example import
for (const [file, deps] of Object.entries(tree)) {
  const from = unitOf(file);
  if (!from || !deps) continue;
  for (const dep of deps) {
    if (!dep.id) continue;
    const to = unitOf(dep.id);
    if (!to || to === from) continue;
    if (to === CONTEXT && !importsValuesOf(file, dep.id)) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from)!.has(to)) edges.get(from)!.set(to, `${file} → ${dep.id}`);
  }
}

/** Tarjan's strongly connected components: each component of more than one node is a cycle. */
function circles(graph: Map<string, Iterable<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  function visit(v: string): void {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

let failed = false;
const folderCycles = circles(new Map([...edges].map(([from, to]) => [from, to.keys()])));
for (const component of folderCycles) {
  console.error(`Import cycle between folders: ${component.join(', ')}`);
  for (const from of component)
    for (const [to, example] of edges.get(from) ?? []) if (component.includes(to)) console.error(`  ${from} → ${to}  (${example})`);
  failed = true;
}

// Files: no two files of the server import each other, round any loop, types included.
const inServer = (file: string) => /^(src|collab|export)\//.test(file);
const fileEdges = new Map<string, string[]>();
for (const [file, deps] of Object.entries(tree)) {
  if (!inServer(file) || !deps) continue;
  fileEdges.set(file, deps.flatMap((d) => (d.id && inServer(d.id) ? [d.id] : [])));
}
const fileCycles = circles(fileEdges);
for (const component of fileCycles) {
  console.error(`Import cycle between files: ${component.join(', ')}`);
  for (const from of component)
    for (const to of fileEdges.get(from) ?? []) if (component.includes(to)) console.error(`  ${from} → ${to}`);
  failed = true;
}

if (failed) process.exit(1);
console.log(`No import cycles: ${edges.size} folders and composition files, ${fileEdges.size} files checked.`);
