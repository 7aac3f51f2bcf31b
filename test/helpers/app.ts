import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type App } from '../../src/app.js';
import { configFrom } from '../../src/config.js';
import type { RuntimeOptions } from '../../src/runtime.js';
import { onPostgres, TEST_SECRET_KEY, testDatabase } from './database.js';

export const TEST_KEY = 'gk_test_bootstrap_key_0123456789';

export interface TestApp {
  app: App;
  /** The bootstrap organisation key. */
  key: string;
  /** An in-process REST call: JSON body in, parsed JSON (or text) out. */
  request(method: string, path: string, init?: { body?: unknown; rawBody?: string; headers?: Record<string, string>; key?: string | null }): Promise<TestResponse>;
  /**
   * From now on keep every `/v1/...` response of `request` in the returned list (the conformance
   * test checks them against the published documents).
   */
  recordResponses(): RecordedResponse[];
  /** An in-process GraphQL call. */
  graphql<T = any>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<{ status: number; data?: T; errors?: any[]; body: any }>;
  /** A real HTTP server on 127.0.0.1 for clients that need one (SDKs, graphql-sse). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One response of `request`, as the recorder keeps it. */
export interface RecordedResponse {
  method: string;
  /** The request path with its query string. */
  path: string;
  status: number;
  contentType: string | null;
  body: any;
  text: string;
}

/**
 * With GATEHOUSE_CONFORMANCE=1 every `/v1/...` response of `request`, in any test, is checked against
 * the published documents as test/conformance/ does, and a mismatch not yet listed in
 * test/conformance/differences.ts fails the call: `GATEHOUSE_CONFORMANCE=1 npx vitest run test/rest/x.test.ts`.
 */
const conformance = process.env.GATEHOUSE_CONFORMANCE ? await import('../conformance/strict-mode.js') : undefined;

export async function createTestApp(env: Record<string, string | number> = {}, options: RuntimeOptions = {}): Promise<TestApp> {
  // With TEST_DATABASE_URL set, on a PostgreSQL database of its own (helpers/database.ts).
  const database = await testDatabase(String(env.DATABASE_URL ?? 'sqlite::memory:'));
  const secret = onPostgres ? { GATEWAY_SECRET_KEY: TEST_SECRET_KEY } : {};
  const config = configFrom({ LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: TEST_KEY, ...secret, ...env, DATABASE_URL: database.url });
  const app = await createApp(config, options).catch(async (error: unknown) => {
    await database.release();
    throw error;
  });
  let server: Server | undefined;
  let recorded: RecordedResponse[] | undefined;

  const testApp: TestApp = {
    app,
    key: config.GATEWAY_BOOTSTRAP_API_KEY ?? TEST_KEY,
    async request(method, path, init = {}) {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      const key = init.key === undefined ? testApp.key : init.key;
      if (key) headers['x-gateway-api-key'] = key;
      let body: string | undefined = init.rawBody;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await app.fetch(new Request(`http://gatehouse.test${path}`, { method, headers, body }));
      const text = await response.text();
      let parsed: any = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON (SSE or empty): tests read `text`.
      }
      if ((recorded || conformance) && path.startsWith('/v1/')) {
        const record = { method, path, status: response.status, contentType: response.headers.get('content-type'), body: parsed, text };
        recorded?.push(record);
        conformance?.assertConforms(record);
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    recordResponses() {
      recorded ??= [];
      return recorded;
    },
    async graphql(query, variables = {}, key) {
      const k = key === undefined ? testApp.key : key;
      const response = await app.fetch(
        new Request('http://gatehouse.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(k ? { 'x-gateway-api-key': k } : {}) },
          body: JSON.stringify({ query, variables }),
        }),
      );
      const body = await response.json();
      return { status: response.status, data: body.data, errors: body.errors, body };
    },
    async listen() {
      server = createServer(app.yoga);
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      app.runtime.beginShutdown();
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await app.close();
      await database.release();
    },
  };
  return testApp;
}
