// In-process fixed-window counters, used to slow down repeated failed sign-ins.
// One process serves the whole server, so memory is the right place for them.
import type { Clock } from '../lib/clock';

interface Window {
  count: number;
  resetAt: number;
}

export class FailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Seconds until this key may try again, or 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const w = this.current(key);
    if (!w || w.count < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((w.resetAt - this.clock.now().getTime()) / 1000));
  }

  recordFailure(key: string): void {
    const now = this.clock.now().getTime();
    const w = this.current(key);
    if (w) {
      w.count += 1;
      return;
    }
    if (this.windows.size >= this.maxKeys) this.sweep(now);
    this.windows.set(key, { count: 1, resetAt: now + this.windowMs });
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private current(key: string): Window | undefined {
    const w = this.windows.get(key);
    if (w && w.resetAt <= this.clock.now().getTime()) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    // Still full of live windows: drop the oldest rather than grow without bound.
    while (this.windows.size >= this.maxKeys) {
      const oldest = this.windows.keys().next().value;
      if (oldest === undefined) break;
      this.windows.delete(oldest);
    }
  }
}
