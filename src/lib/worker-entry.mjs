// The entry of the server's worker threads (worker-pool.ts). Plain JavaScript, so that a thread
// started with no loader can run it. Each task is { module, input }: the module's default export is
// called with the input (a module is imported once per thread). The built server (dist/) names
// JavaScript modules; run through tsx (development, tests) it names TypeScript ones, for which the
// thread registers tsx first.
let loader;

const modules = new Map();

export default async function run({ module, input }) {
  let loaded = modules.get(module);
  if (!loaded) {
    if (module.endsWith('.ts')) loader ??= import('tsx/esm/api').then(({ register }) => register());
    loaded = Promise.resolve(loader).then(() => import(module));
    modules.set(module, loaded);
    // A failed import is tried again by the next task, not remembered for the thread's life.
    loaded.catch(() => modules.delete(module));
  }
  return (await loaded).default(input);
}
