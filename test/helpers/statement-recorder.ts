import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import { H } from './run-fixtures.js';

export interface StatementRecorder {
  /** The file's app (started before its tests, closed after them). */
  readonly t: TestApp;
  /** Starts a new recording; the array it returns grows as statements run. */
  start(): string[];
  /** Ends the recording and returns what it holds. */
  stop(): string[];
}

/**
 * A test file's app whose SQL statements a test records through the runtime's onQuery hook (a
 * count, not a timing); it starts before the file's tests and closes after them. Keys stay cached
 * for the whole file: a key lookup after the default 5 s expiry (a slow machine) would be counted
 * as one of the measured statements.
 */
export function useStatementRecorder(): StatementRecorder {
  let statements: string[] | null = null;
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await createTestApp({ API_KEY_CACHE_TTL_MS: 600_000 }, { onQuery: (sql) => statements?.push(sql) });
  });
  afterAll(() => app?.close());
  return {
    get t() {
      if (!app) throw new Error('The statement recorder\'s app starts in beforeAll.');
      return app;
    },
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
