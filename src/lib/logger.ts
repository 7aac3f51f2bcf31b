import pino, { type DestinationStream, type Logger } from 'pino';
import { prettyStream } from './pretty-log.js';
import { REDACTED } from './redact.js';

export type { Logger };

/** `json`: one JSON object a line, for machines; `pretty`: one readable line, for people. */
export type LogFormat = 'json' | 'pretty';

/** One pino logger per app; request loggers are children carrying the request id. */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      // Belt and braces: secrets never reach a log line even if a caller logs a whole object.
      redact: {
        paths: ['*.key', '*.secret', '*.api_key', '*.apiKey', 'headers.authorization', 'headers["x-gateway-api-key"]', 'headers["x-portkey-api-key"]'],
        censor: REDACTED,
      },
    },
    format === 'pretty' ? prettyStream((destination as NodeJS.WritableStream | undefined) ?? process.stdout) : destination,
  );
}
