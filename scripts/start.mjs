// `npm start`: builds dist/ when it is missing or older than the sources (scripts/build.mjs), then
// runs the built server in this same process, so that a signal to this process is the server's.
// package.json's start script `exec`s node: npm forwards SIGTERM and SIGINT to its child, and
// without exec that child would be a shell that dies and leaves the server running.
import { buildIfStale } from './build.mjs';

// Stack traces name the TypeScript sources (`node --enable-source-maps`, without the flag).
process.setSourceMapsEnabled(true);

// Started by npm: should npm go without passing a signal on (killed, or a version or shell that
// does not forward it), the server is orphaned; it then stops as on SIGTERM instead of running on.
if (process.env.npm_lifecycle_event === 'start') {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 1000);
  watch.unref();
}

try {
  await buildIfStale();
} catch (err) {
  const errors = err?.errors;
  const detail = Array.isArray(errors) && errors.length ? errors.map((e) => `${e.location?.file ?? ''}:${e.location?.line ?? ''} ${e.text}`).join('; ') : err?.message;
  process.stderr.write(`Cannot start: the build failed: ${detail}\n`);
  process.exit(1);
}
await import('../dist/src/server.js');
