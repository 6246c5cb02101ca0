// The entry of the server's worker threads (worker-pool.ts). Plain JavaScript, so that a thread
// started with no loader can run it; it registers tsx for the TypeScript modules its tasks name, as
// `npm start` runs the server through tsx. Each task is { module, input }: the module's default
// export is called with the input (a module is imported once per thread).
import { register } from 'tsx/esm/api';

register();

const modules = new Map();

export default async function run({ module, input }) {
  let loaded = modules.get(module);
  if (!loaded) {
    loaded = import(module);
    modules.set(module, loaded);
    // A failed import is tried again by the next task, not remembered for the thread's life.
    loaded.catch(() => modules.delete(module));
  }
  return (await loaded).default(input);
}
