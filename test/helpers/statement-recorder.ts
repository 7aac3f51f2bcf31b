import { createTestApp, type TestApp } from './app.js';
import { H } from './run-fixtures.js';

export interface StatementRecorder {
  t: TestApp;
  /** Starts a new recording; the array it returns grows as statements run. */
  start(): string[];
  /** Ends the recording and returns what it holds. */
  stop(): string[];
}

/**
 * A test app whose SQL statements a test records through the runtime's onQuery hook (a count, not
 * a timing). Keys stay cached for the whole file: a key lookup after the default 5 s expiry (a slow
 * machine) would be counted as one of the measured statements.
 */
export async function statementRecordingApp(): Promise<StatementRecorder> {
  let statements: string[] | null = null;
  const t = await createTestApp({ API_KEY_CACHE_TTL_MS: 600_000 }, { onQuery: (sql) => statements?.push(sql) });
  return {
    t,
    start: () => (statements = []),
    stop: () => {
      const all = statements ?? [];
      statements = null;
      return all;
    },
  };
}

/** `POST /v1/threads/runs` on a new thread holding one short user message. */
export function postShortRun(t: TestApp, assistantId: string, extra: Record<string, unknown> = {}) {
  const body = { assistant_id: assistantId, ...extra, thread: { messages: [{ role: 'user', content: 'Say something short.' }] } };
  return t.request('POST', '/v1/threads/runs', { body, headers: H });
}
