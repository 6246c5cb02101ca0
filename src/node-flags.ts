// The Node flags the server runs with: `npm start` and `npm run dev` pass them (package.json's
// scripts, held to this list by test/startup.test.ts), and so do the benchmarks and the soak test,
// which measure the server as it runs, and the systemd unit of docs/deployment.md.

/**
 * `--v8-pool-size=0`: V8's helper threads (concurrent and parallel garbage collection, background
 * compilation) sized to the machine, one fewer than its cores (at least one), where Node's default
 * is four whatever the machine. On two cores four of them, at the event loop's priority, took the CPU from it: stalls
 * of 70-140 ms in which the event loop was waiting for a CPU, and collections of up to 265 ms (its own
 * pause waiting on helpers that did not run). With one helper, 2 of 3,080 requests of the
 * large-document benchmark stalled it over 100 ms in eleven runs (against 3 in six runs with four),
 * its collections were shorter (longest 21-61 ms, against 47-265), and the requests took less CPU
 * (bench/RESULTS.md).
 */
export const SERVER_NODE_FLAGS = ['--v8-pool-size=0'] as const;
