// Yielding the event loop inside long work on large documents and bulk writes.
import { walRoom, type Db } from '../../db/client';

/**
 * Resolves in a later turn of the event loop, once it has run its due timers and polled for I/O:
 * requests, editors' messages and timers that came in meanwhile go first. `setImmediate` alone does
 * not do that when called from an I/O callback (a request's handler): it runs in the same loop
 * iteration, after that poll and before any timer, so the work before and after it is one stall
 * for everyone else. A timer, then an immediate, lets both a timers phase and a poll phase pass.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
}

/**
 * Resolves once the event loop has polled for I/O again, without waiting for a timer: a request
 * that came in meanwhile is served before the work after it. The first immediate runs in this
 * iteration's check phase (when called from an I/O callback); the second, queued from there, only
 * after the next poll. For a short piece of a request's work, where yieldToEventLoop's timer would
 * add a millisecond to it.
 */
export function yieldForIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Between two slices of a bulk write (an import, a clean-up): once the WAL has room (walRoom, which
 * waits only while it is large and not yet copied), a turn of the event loop as yieldToEventLoop.
 */
export async function yieldAfterWrites(db: Db): Promise<void> {
  await walRoom(db);
  await yieldToEventLoop();
}

/**
 * A document body whose work is worth splitting into turns of the event loop: each step on it (a
 * SQLite write, the search index's tokenizing, a response's serializing) takes a millisecond or
 * more. (Smaller than the store's threshold for worker threads, 256 KiB encoded: splitting costs
 * only a turn.)
 */
export const isLargeBody = (markdown: string): boolean => markdown.length >= 64 * 1024;
