import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
// pino's own bookkeeping fields: shown as the line's time, level and message, or not at all.
const HIDDEN = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'service', 'err']);

/**
 * One pino JSON line as one line for people: `12:04:05.123 INFO  request method=GET status=200`,
 * followed by an error's stack when the entry carries one. Lines that are not JSON pass through.
 */
export function formatPretty(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = (LEVELS[entry.level as number] ?? String(entry.level)).padEnd(5);
  const fields = Object.entries(entry)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const head = [time, level, String(entry.msg ?? ''), ...fields].filter(Boolean).join(' ');
  const err = entry.err as { stack?: string; message?: string } | undefined;
  const detail = err ? `\n    ${(err.stack ?? err.message ?? JSON.stringify(err)).replace(/\n/g, '\n    ')}` : '';
  return head + detail;
}

/** A stream for pino that writes each entry through `formatPretty` to `target`. */
export function prettyStream(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      const text = String(chunk)
        .split('\n')
        .filter(Boolean)
        .map((line) => `${formatPretty(line)}\n`)
        .join('');
      target.write(text);
      done();
    },
  });
}
