// Structured JSON logs (pino). Credentials never reach a log line.
import pino, { type Logger } from 'pino';

/**
 * sonic-boom measures the chunk it appends each line to (`Buffer.byteLength`), which flattens the
 * growing string: every line copied all the lines batched before it, up to the 16 KiB default.
 * Under load that was about a quarter of all the memory a request allocated. Chunks of 2 KiB
 * (about nine access lines) bound the copy; a longer line still goes out whole.
 */
export const LOG_CHUNK_BYTES = 2048;

/**
 * The app's logger. Without a destination it writes to stdout asynchronously: lines written while
 * a write is in flight are batched into the next one, which keeps one log line per request cheap
 * under load; pino flushes what is pending when the process exits.
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
