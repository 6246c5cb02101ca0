// The server's sweep of abandoned seat-time sessions: every minute (or every idle timeout, when
// shorter) it records the end of sessions that have gone without a heartbeat past their timeout,
// at their last heartbeat. Reads do the same lazily; the sweep keeps the table tidy between them.
import type { Deps } from '../context';
import { endIdleSessions } from './service';

export function startSeatTimeSweep(deps: Pick<Deps, 'db' | 'clock' | 'config' | 'logger'>): { stop(): void } {
  const everyMs = Math.min(60, deps.config.complianceIdleTimeoutSeconds) * 1000;
  const timer = setInterval(() => {
    try {
      const ended = endIdleSessions(deps.db, deps.clock);
      if (ended > 0) deps.logger.debug({ ended }, 'seat-time sessions ended by the idle sweep');
    } catch (err) {
      deps.logger.warn({ err }, 'seat-time sweep failed; it runs again at the next interval');
    }
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
