import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveProvider } from '../../src/modules/integrations/provider-resolution.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { tableNames } from '../helpers/tables.js';

// An integration's secret key never appears in a response, a log line (debug level) or the
// database file: it is stored AES-256-GCM encrypted and only ever shown masked.

const SECRET = 'sk-proj-NEVER-SHOW-ME-0123456789abcdef';
const OTHER_SECRET = 'sk-proj-ROTATED-SECRET-fedcba9876543210';
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secrets-'));
const file = join(dir, 'gatehouse.sqlite');
const logLines: string[] = [];
const responses: string[] = [];

let t: TestApp;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await createTestApp({ LOG_LEVEL: 'debug', DATABASE_URL: `sqlite:${file}` }, { logDestination: sink });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<void> {
  const r = await t.request(method, path, body === undefined ? {} : { body });
  responses.push(r.text);
}

it('exercises every route that sees the key, including failures', async () => {
  await call('POST', '/v1/integrations', { name: 'Secret', slug: 'secret', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: 'http://127.0.0.1:1/v1' } });
  // Failures with the key in the body: validation (zod and service), conflict.
  await call('POST', '/v1/integrations', { name: 'Secret', slug: 'secret', ai_provider_id: 'openai', key: SECRET });
  await call('POST', '/v1/integrations', { name: 'Bad', ai_provider_id: 'nope', key: SECRET });
  await call('POST', '/v1/integrations', { name: 'Bad', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: 'ftp://x' } });
  await call('PUT', '/v1/integrations/secret', { key: SECRET, configurations: { prices: { m: { input: -1, output: 1 } } } });
  await call('PUT', '/v1/integrations/nope', { key: SECRET });
  await call('GET', '/v1/integrations');
  await call('GET', '/v1/integrations/secret');
  await call('PUT', '/v1/integrations/secret/workspaces', { global_workspace_access: { enabled: true } });
  await call('GET', '/v1/integrations/secret/workspaces');
  await call('GET', '/v1/providers');
  await call('GET', '/v1/providers/secret');
  // GraphQL, with the key in variables, including a coercion error on another field.
  const gql = async (query: string, variables: Record<string, unknown>) => responses.push(JSON.stringify((await t.graphql(query, variables)).body));
  await gql('mutation($input: CreateIntegrationInput!) { createIntegration(input: $input) { slug maskedKey } }', { input: { name: 'G', aiProviderId: 'openai', key: SECRET } });
  await gql('mutation($input: CreateIntegrationInput!) { createIntegration(input: $input) { slug } }', { input: { name: 'G', aiProviderId: 'wrong', key: SECRET } });
  await gql('{ integrations { data { slug maskedKey configurations { baseUrl } } } }', {});
  // The SDK over a real socket.
  const client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1` });
  responses.push(JSON.stringify(await client.integrations.retrieve({ slug: 'secret' })));
  responses.push(JSON.stringify(await client.integrations.list()));
  await client.integrations.update({ slug: 'secret', key: OTHER_SECRET });
  responses.push(JSON.stringify(await client.integrations.retrieve({ slug: 'secret' })));
  // The data plane decrypts it; logging what it got (even carelessly) must not leak it.
  const defaultId = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
  const resolved = await resolveProvider(t.app.runtime.fork(), t.app.runtime, defaultId, 'secret');
  expect(resolved.integration.apiKey).toBe(OTHER_SECRET);
  t.app.runtime.logger.info({ resolved, integration: resolved.integration, copy: { ...resolved.integration } }, 'resolved provider');

  expect(responses.some((text) => text.includes('****cdef'))).toBe(true);
  expect(responses.some((text) => text.includes('****3210'))).toBe(true);
});

it('no response contains either secret', () => {
  expect(responses.length).toBeGreaterThan(15);
  for (const text of responses) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(OTHER_SECRET);
  }
});

it('no log line contains either secret (debug level, so every request is logged)', () => {
  expect(logLines.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThan(10);
  expect(logLines.some((line) => line.includes('resolved provider'))).toBe(true);
  for (const line of logLines) {
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain(OTHER_SECRET);
  }
});

/** What the database holds: the SQLite file's bytes, or on PostgreSQL every row of every table as text. */
async function storedBytes(): Promise<string> {
  if (!onPostgres) return [file, `${file}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1')).join('');
  const connection = t.app.runtime.fork().getConnection();
  const dumps = await Promise.all((await tableNames(t)).map((name) => connection.execute<Array<{ row: string }>>(`select row_to_json(t)::text as row from "${name}" t`, [], 'all')));
  return dumps.flat().map((r) => r.row).join('\n');
}

it('the database holds the key only encrypted', async () => {
  const bytes = await storedBytes();
  expect(bytes.length).toBeGreaterThan(0);
  expect(bytes).not.toContain(SECRET);
  expect(bytes).not.toContain(OTHER_SECRET);
  // What is there instead: the versioned AES-256-GCM envelope.
  expect(bytes).toMatch(/v1:[A-Za-z0-9+/]{40,}={0,2}/);
});
