// Structured JSON logs (pino). Credentials never reach a log line.
import pino, { type Logger } from 'pino';

/**
 * sonic-boom measures (and so flattens) the chunk it appends each line to, so every line copied the
 * ones batched before it; small chunks bound that copy. A longer line still goes out whole.
 */
export const LOG_CHUNK_BYTES = 2048;

/**
 * The app's logger. Without a destination it writes to stdout asynchronously: lines written while
 * a write is in flight are batched into the next one, which keeps one log line per request cheap
 * under load. Before exiting, `closeLog` writes what is pending.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          '*.password',
          '*.token',
          '*.access_token',
          '*.refresh_token',
          '*.api_key',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false, maxWrite: LOG_CHUNK_BYTES }),
  );
}

/**
 * Writes every line logged so far, in order, and resolves once they are out (or after `timeoutMs`,
 * so that a stdout nobody reads cannot hold an exit). Call it last before `process.exit`: pino's
 * own flush at exit writes the queued lines synchronously but skips a chunk whose write is still
 * in flight, which then lands after them, or never if that write was waiting to be retried.
 * Nothing can be logged after it.
 */
export function closeLog(logger: Logger, timeoutMs = 2_000): Promise<void> {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | { end?: () => void; once?: (event: string, listener: () => void) => void; destroyed?: boolean }
    | undefined;
  if (!stream || typeof stream.end !== 'function' || typeof stream.once !== 'function' || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stream.once!('close', done);
    stream.end!();
  });
}

let stampedAt = -1;
let stamp = '';

/**
 * pino's ISO time, formatted at most once per millisecond: under load many lines share a
 * millisecond, and `toISOString` was a fifth of a log line's cost.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

const accessLoggers = new WeakMap<Logger, Logger>();

/**
 * The logger of the one-line-per-request access log: same stream, level and time format as the
 * app's logger, without redaction. Its lines hold fixed fields that are never secret (method,
 * path without query, status, duration, ids), and redaction would cost more than the rest of
 * the line on every request.
 */
export function accessLoggerOf(logger: Logger): Logger {
  let access = accessLoggers.get(logger);
  if (!access) {
    const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
    access = pino({ level: logger.level, base: undefined, timestamp: isoTime }, stream);
    accessLoggers.set(logger, access);
  }
  return access;
}

/**
 * A destination that holds every line until `release`, then passes them on after the line logged
 * in `release`'s callback: the server's first log line says what started (version, port, data
 * folder, features), which is known only once the start has done what it logs about. Ends and
 * closes with the stream it wraps, so `closeLog` works on a logger writing to it.
 */
class HeldDestination {
  private held: string[] | null = [];
  private first: string[] | null = null;

  constructor(private readonly target: pino.DestinationStream & { end?: () => void; once?: (event: string, listener: () => void) => void; destroyed?: boolean }) {}

  write(line: string): void {
    if (this.first) this.first.push(line);
    else if (this.held) this.held.push(line);
    else this.target.write(line);
  }

  release(first?: () => void): void {
    const held = this.held;
    if (!held) return;
    this.first = [];
    try {
      first?.();
    } finally {
      const lines = [...this.first, ...held];
      this.first = null;
      this.held = null;
      // One write: the lines reach a reader of stdout together.
      if (lines.length > 0) this.target.write(lines.join(''));
    }
  }

  end(): void {
    this.release();
    this.target.end?.();
  }

  once(event: string, listener: () => void): this {
    this.target.once?.(event, listener);
    return this;
  }

  get destroyed(): boolean | undefined {
    return this.target.destroyed;
  }
}

export function createHeldLogger(level: string): { logger: Logger; release(first?: () => void): void } {
  const destination = new HeldDestination(pino.destination({ dest: 1, sync: false, maxWrite: LOG_CHUNK_BYTES }));
  return { logger: createLogger(level, destination), release: (first) => destination.release(first) };
}
