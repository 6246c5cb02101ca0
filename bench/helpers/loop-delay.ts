// The event loop delay of a bench process (a load client, a bench server), in a module of its own
// with no other import: the collab client processes load it without the app.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The event loop delay monitors' timer (ms) in load processes and bench servers. The timer wakes
 * its process that often: at 1 ms a monitor costs an idle process 10.4 ms of CPU a second (2.4 at
 * 10 ms), and on a two-core machine each wake-up of a load process may take a core from the server
 * measured (bench/RESULTS.md, "The benchmark's own timers"). A delay is still seen whole at this
 * resolution; only fewer are sampled.
 */
const LOOP_DELAY_RESOLUTION_MS = 10;

/**
 * This process's event loop delay from now on, in ms. Node's histogram holds each whole interval
 * between the monitor's ticks (10.1 ms for a tick 0.1 ms late): the figures here are net of it.
 */
export function loopDelay(): { p50(): number; p99(): number; max(): number; reset(): void; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS);
  return {
    p50: () => late(histogram.percentile(50)),
    p99: () => late(histogram.percentile(99)),
    max: () => late(histogram.max),
    reset: () => histogram.reset(),
    stop: () => histogram.disable(),
  };
}
