// The Yjs worker thread's entry (see workers.ts). Plain JavaScript, so that a thread started with
// no loader can run it; it registers tsx for the TypeScript it imports, as `npm start` runs the
// server through tsx.
import { register } from 'tsx/esm/api';

register();
const tasks = await import('./yjs-tasks.ts');

export default tasks.default;
