import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** One pino logger per app; request loggers are children carrying the request id. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      // Belt and braces: secrets never reach a log line even if a caller logs a whole object.
      redact: {
        paths: ['*.key', '*.secret', '*.api_key', '*.apiKey', 'headers.authorization', 'headers["x-gateway-api-key"]', 'headers["x-portkey-api-key"]'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
