// Structured JSON logs (pino). Credentials never reach a log line.
import pino, { type Logger } from 'pino';

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
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
    destination,
  );
}
