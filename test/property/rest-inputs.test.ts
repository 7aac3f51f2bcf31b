import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../rest/routes.js';
import type { RouteRow } from '../../rest/route.js';
import { runExecutor } from '../../src/modules/runs/executor.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AWKWARD_TEXT, mutateToText, mutationChoice, type MutationChoice } from './mutations.js';
import { tableNames } from '../helpers/tables.js';
import { rowCounts } from './row-counts.js';
import { arbitraryFor } from './zod-arbitrary.js';

/*
 * Generated inputs over every REST route (issue: no input may make a 500, freeze the server or
 * leave bad data behind). Each route's body and query come from its own zod schema, mostly valid,
 * then spoiled (mutations.ts: wrong types, out-of-range numbers, NUL, lone surrogates and other
 * control characters, huge and deeply nested values, duplicate and unknown keys, non-objects);
 * path parameters are real ids or awkward text; headers vary too. Every answer must be below 500;
 * every non-2xx the exact error envelope; an error must leave every table's row count as it was;
 * and afterwards every list still reads.
 *
 * Seeded and bounded: PROPERTY_SEED and PROPERTY_RUNS (per route) override the defaults to look
 * further; a failure prints the seed and the counterexample to replay.
 */

const SEED = Number(process.env.PROPERTY_SEED ?? 20261123);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 8);
const BETA = 'assistants=v2';

let t: TestApp;
/** Real ids and slugs by path-parameter name, so generated requests reach the services. */
const real: Record<string, string[]> = {};
let tables: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await t.request(method, path, { body, headers: { 'openai-beta': BETA, 'x-gateway-virtual-key': 'local' } });
    expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
    return r.body;
  };
  const workspaces = await call('GET', '/v1/admin/workspaces');
  const key = await call('POST', '/v1/admin/api-keys', { name: 'property', type: 'workspace', workspace_id: 'default' });
  const collection = await call('POST', '/v1/collections', { name: 'Property' });
  const integration = await call('POST', '/v1/integrations', { name: 'Property', ai_provider_id: 'local' });
  await call('PUT', `/v1/integrations/${integration.slug}/workspaces`, { global_workspace_access: { enabled: true } });
  const provider = await call('POST', '/v1/providers', { integration_id: integration.slug, name: 'Property' });
  const policy = await call('POST', '/v1/policies/usage-limits', { conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 1e9 });
  const assistant = await call('POST', '/v1/assistants', { model: 'gpt-4o-mini', name: 'Property' });
  const thread = await call('POST', '/v1/threads', { messages: [{ role: 'user', content: 'hello' }] });
  const messages = await call('GET', `/v1/threads/${thread.id}/messages`);
  const run = await call('POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistant.id });
  await runExecutor(t.app.runtime).whenIdle();
  Object.assign(real, {
    // Never the bootstrap key's id: deleting it would lock the suite out.
    id: [workspaces.data[0].id, key.id, policy.id],
    collectionId: [collection.id, 'default'],
    slug: [integration.slug, provider.slug ?? provider.id],
    guardrailId: [],
    thread_id: [thread.id],
    message_id: [messages.data[0].id],
    run_id: [run.id],
  });
  tables = await tableNames(t);
  expect(tables.length, 'tables to count').toBeGreaterThan(10);
});
afterAll(() => t.close());

/**
 * Row counts of every table but the request log: it records refused model requests too, by
 * design, so an error answer may add an audit row there and nowhere else.
 */
const counts = () => rowCounts(t, tables.filter((name) => name !== 'request_logs'));

const AWKWARD_SEGMENTS = ['nope', '00000000-0000-4000-8000-000000000000', '%00', 'a%00b', '%01', '%1B', '%ED%A0%80', '%F0%9F%98%80', '%25', '%2F', '..', 'x'.repeat(3000), '%E2%80%A8'];

function pathArbitrary(row: RouteRow): fc.Arbitrary<string> {
  const names = [...row.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const segments = names.map((name) => {
    const known = (real[name] ?? []).map(encodeURIComponent);
    return known.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: fc.constantFrom(...AWKWARD_SEGMENTS), weight: 2 }) : fc.constantFrom(...AWKWARD_SEGMENTS);
  });
  return fc.tuple(...segments).map((values) => {
    let i = 0;
    return row.path.replace(/:(\w+)/g, () => values[i++]);
  });
}

const QUERY_SPOILERS = ['', 'abc', '-1', '1.5', '2147483648', '-2147483649', '1e999', 'NaN', '0x10', ' 5', '[]', '{}', 'true', ...AWKWARD_TEXT];

/** A query string from the row's query schema (or none), spoiled in one of a few ways. */
function queryArbitrary(row: RouteRow): fc.Arbitrary<string> {
  const base = row.query ? arbitraryFor(row.query) : fc.constant({});
  return fc.tuple(base, fc.constantFrom('none', 'value', 'key', 'duplicate', 'huge'), fc.nat(), fc.nat()).map(([value, kind, at, variant]) => {
    const params = new URLSearchParams();
    const entries = Object.entries((value ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== null);
    for (const [k, v] of entries) params.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    const keys = entries.map(([k]) => k);
    const key = keys.length ? keys[at % keys.length] : 'limit';
    const spoiler = QUERY_SPOILERS[variant % QUERY_SPOILERS.length];
    if (kind === 'value') params.set(key, spoiler);
    if (kind === 'key') params.append(`k${spoiler}`, '1');
    if (kind === 'duplicate') params.append(key, spoiler);
    if (kind === 'huge') params.set(key, 'q '.repeat(4000));
    const text = params.toString();
    return text ? `?${text}` : '';
  });
}

/** Header values a client may send (the Fetch API refuses NUL, CR and LF in them). */
const headerValue = fc.oneof(
  fc.constantFrom('', '0', '-1', '2147483648', 'abc', 'local', BETA, `${BETA}, other`, 'x'.repeat(2000)),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
);

const headersArbitrary = fc.record({
  beta: fc.oneof({ arbitrary: fc.constant(BETA), weight: 5 }, { arbitrary: headerValue, weight: 1 }),
  virtualKey: fc.oneof({ arbitrary: fc.constant('local'), weight: 5 }, { arbitrary: headerValue, weight: 1 }),
  contentType: fc.oneof({ arbitrary: fc.constant('application/json'), weight: 8 }, { arbitrary: fc.constantFrom('text/plain', 'application/merge-patch+json', ''), weight: 1 }),
  extra: fc.dictionary(fc.constantFrom('last-event-id', 'x-portkey-virtual-key', 'x-gateway-request-id'), headerValue, { maxKeys: 2 }),
});

function bodyArbitrary(row: RouteRow): fc.Arbitrary<{ text: string | undefined; choice: MutationChoice | null }> {
  if (row.method === 'GET') return fc.constant({ text: undefined, choice: null });
  const base = row.body ? arbitraryFor(row.body) : fc.jsonValue({ maxDepth: 2 });
  return fc.tuple(base, mutationChoice).map(([value, choice]) => ({ text: mutateToText(value ?? {}, choice), choice }));
}

interface Outcome {
  status: number;
  contentType: string | null;
  body: any;
  text: string;
}

async function send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<Outcome> {
  const response = await t.app.fetch(new Request(`http://gatehouse.test${path}`, { method, headers: { 'x-gateway-api-key': t.key, ...headers }, body }));
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    // SSE or empty: only the status is checked.
  }
  return { status: response.status, contentType: response.headers.get('content-type'), body: parsed, text };
}

function expectEnvelope(outcome: Outcome, label: string): void {
  expect(outcome.contentType, label).toMatch(/^application\/json/);
  const { error, ...rest } = outcome.body ?? {};
  // A guardrail's refusal may carry its results beside the error; nothing else may.
  expect(Object.keys(rest).filter((k) => k !== 'guardrail_results'), label).toEqual([]);
  expect(Object.keys(error ?? {}).sort(), label).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof error.message === 'string' && error.message.length > 0, label).toBe(true);
  expect(typeof error.type, label).toBe('string');
  expect(error.param === null || typeof error.param === 'string', label).toBe(true);
  expect(error.code === null || typeof error.code === 'string', label).toBe(true);
}

describe('generated inputs on every REST route', () => {
  for (const row of routes) {
    it(`${row.method} ${row.path}`, async () => {
      const request = fc.record({ path: pathArbitrary(row), query: queryArbitrary(row), body: bodyArbitrary(row), headers: headersArbitrary });
      // The counts after one request are those before the next: one count per request, not two.
      let before = await counts();
      await fc.assert(
        fc.asyncProperty(request, async ({ path, query, body, headers }) => {
          const sent: Record<string, string> = { 'openai-beta': headers.beta, 'x-gateway-virtual-key': headers.virtualKey, ...headers.extra };
          if (body.text !== undefined && headers.contentType) sent['content-type'] = headers.contentType;
          const outcome = await send(row.method, path + query, body.text, sent);
          const label = `${row.method} ${(path + query).slice(0, 200)} (body: ${body.choice?.kind ?? 'none'}) → ${outcome.status} ${outcome.text.slice(0, 300)}`;
          const after = await counts();
          const previous = before;
          before = after;
          expect(outcome.status, label).toBeLessThan(500);
          if (outcome.status >= 300) {
            expectEnvelope(outcome, label);
            expect(after, `${label}: an error wrote rows`).toEqual(previous);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  }

  it('every list still reads afterwards', async () => {
    const lists = routes.filter((row) => row.method === 'GET' && !row.path.includes(':') && !row.stream);
    const threadLists = routes.filter((row) => row.method === 'GET' && /^\/v1\/threads\/:thread_id\/(messages|runs)$/.test(row.path));
    // A generated DELETE /v1/threads/{id} may have removed the thread (a success): its lists then
    // answer 404 like the thread itself, never a 500 or a list of orphans.
    const thread = await send('GET', `/v1/threads/${real.thread_id[0]}`, undefined, { 'openai-beta': BETA });
    expect([200, 404], thread.text.slice(0, 300)).toContain(thread.status);
    for (const row of [...lists, ...threadLists]) {
      const path = row.path.replace(':thread_id', real.thread_id[0]);
      const outcome = await send('GET', path, undefined, { 'openai-beta': BETA });
      const expected = threadLists.includes(row) ? thread.status : 200;
      expect(outcome.status, `GET ${path}: ${outcome.text.slice(0, 300)}`).toBe(expected);
    }
    expect(lists.length).toBeGreaterThan(5);
  });
});
