// `npm run build`: the server compiled to JavaScript in dist/ (one .js and its source map per
// TypeScript file, the folders as in the repository: dist/src/server.js is the entry), with the
// files it reads at run time beside its code (the .mjs worker entries, db/migrations). Plain
// JavaScript, so that `npm start` (scripts/start.mjs) can build with nothing but node.
//   node scripts/build.mjs              build
//   node scripts/build.mjs --if-stale   build only when dist/ is missing or older than the sources
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = path.join(root, 'dist');
/** The folders the server runs from (tests, benchmarks and scripts run through tsx). */
const SOURCE_FOLDERS = ['src', 'collab', 'export', 'db'];
/** Files besides the sources whose change calls for a new build. */
const INPUTS = ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts/build.mjs'];
/** Written last: its time is the build's. */
const STAMP = '.built';

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(file, out);
    else out.push(file);
  }
  return out;
}

const sourceFiles = () => SOURCE_FOLDERS.flatMap((folder) => walk(path.join(root, folder)));

/** Why dist/ must be built (missing, or a source newer than it), or undefined when it is current. */
export function staleReason() {
  let built;
  try {
    built = statSync(path.join(distDir, STAMP)).mtimeMs;
  } catch {
    return 'dist/ is missing';
  }
  for (const file of [...sourceFiles(), ...INPUTS.map((f) => path.join(root, f))]) {
    if (existsSync(file) && statSync(file).mtimeMs > built) return `${path.relative(root, file)} is newer than dist/`;
  }
  return undefined;
}

/**
 * Every import of a compiled file stays an import of its own file (nothing is bundled), its path
 * rewritten to the compiled name (`./x` → `./x.js`, `./dir` → `./dir/index.js`); packages stay
 * packages. esbuild calls this for each import it meets, static and dynamic alike.
 */
const keepImportsSeparate = {
  name: 'keep-imports-separate',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (!args.path.startsWith('.')) return { path: args.path, external: true };
      const base = path.resolve(args.resolveDir, args.path);
      const candidates = [base, `${base}.ts`, path.join(base, 'index.ts')];
      const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
      if (!found) return { errors: [{ text: `cannot resolve ${args.path} from ${args.importer}` }] };
      let compiled = path.relative(args.resolveDir, found).split(path.sep).join('/').replace(/\.ts$/, '.js');
      if (!compiled.startsWith('.')) compiled = `./${compiled}`;
      return { path: compiled, external: true };
    });
  },
};

/** The worker threads' task modules are named by URL; in dist/ they are the .js files. */
const taskUrl = /new URL\("(\.{1,2}\/[^"]+)\.ts", import\.meta\.url\)/g;

export async function build({ quiet = false } = {}) {
  const { build: esbuild } = await import('esbuild');
  const started = Date.now();
  const sources = sourceFiles();
  const entryPoints = sources.filter((f) => f.endsWith('.ts'));
  // Built beside dist/ and swapped in whole, so that a server started meanwhile never runs half a build.
  const staging = path.join(root, `dist.building-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const result = await esbuild({
      absWorkingDir: root,
      entryPoints,
      outdir: staging,
      outbase: root,
      bundle: true,
      plugins: [keepImportsSeparate],
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      // The map names the sources by a path from the compiled file, so stack traces name src/… files.
      sourcesContent: false,
      logLevel: 'silent',
      write: false,
    });
    for (const file of result.outputFiles) {
      mkdirSync(path.dirname(file.path), { recursive: true });
      const text = file.path.endsWith('.js') ? file.text.replace(taskUrl, 'new URL("$1.js", import.meta.url)') : file.text;
      writeFileSync(file.path, text);
    }
    // What the compiled code reads beside itself: the plain-JavaScript worker entries, the migrations.
    for (const file of sources.filter((f) => !f.endsWith('.ts'))) {
      const target = path.join(staging, path.relative(root, file));
      mkdirSync(path.dirname(target), { recursive: true });
      cpSync(file, target);
    }
    writeFileSync(path.join(staging, STAMP), `${new Date().toISOString()}\n`);
    const old = path.join(root, `dist.old-${process.pid}`);
    if (existsSync(distDir)) renameSync(distDir, old);
    renameSync(staging, distDir);
    rmSync(old, { recursive: true, force: true });
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  if (!quiet) process.stderr.write(`built dist/ (${entryPoints.length} modules) in ${Date.now() - started} ms\n`);
}

export async function buildIfStale() {
  const reason = staleReason();
  if (reason === undefined) return false;
  process.stderr.write(`building the server: ${reason}\n`);
  await build();
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes('--if-stale')) await buildIfStale();
    else await build();
  } catch (err) {
    const errors = err?.errors;
    process.stderr.write(
      `build failed: ${Array.isArray(errors) && errors.length ? errors.map((e) => `${e.location?.file ?? ''}:${e.location?.line ?? ''} ${e.text}`).join('; ') : err?.message ?? err}\n`,
    );
    process.exit(1);
  }
}
