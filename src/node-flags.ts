// The Node flags the server runs with: `npm start` and `npm run dev` pass them (package.json's
// scripts, held to this list by test/startup.test.ts), and so do the benchmarks and the soak test,
// which measure the server as it runs, and the systemd unit of docs/deployment.md.

/**
 * `--v8-pool-size=0`: V8's helper threads (concurrent and parallel garbage collection, background
 * compilation) sized to the machine, one fewer than its cores (at least one), where Node's default
 * is four whatever the machine. On a small machine four of them, at the event loop's priority,
 * take the CPU from it: longer stalls and collections, and more CPU per request (bench/RESULTS.md,
 * "Large documents: the benchmark's own heap, the slices, V8's helper threads").
 */
export const SERVER_NODE_FLAGS = ['--v8-pool-size=0'] as const;
