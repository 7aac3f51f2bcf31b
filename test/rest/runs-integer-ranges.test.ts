/**
 * Every integer a runs input carries, top-level or inside a JSON object, is range-checked before
 * anything is written: a value GraphQL's 32-bit Int cannot return is a 400 naming the parameter,
 * on both front doors, and the lists stay readable afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { BETA, H, assistant, ok, thread } from '../helpers/run-fixtures.js';

let t: TestApp;
let assistantId: string;
let threadId: string;
beforeAll(async () => {
  t = await createTestApp();
  assistantId = (await assistant(t)).id;
  threadId = (await thread(t, 'hi')).id;
});
afterAll(() => t.close());

const TOO_BIG = 2_147_483_648;
const above = (param: string, max = 2147483647) =>
  error(`Invalid '${param}': integer above maximum value. Expected a value <= ${max}, but got ${TOO_BIG} instead.`, param, 'integer_above_max_value');

async function threadCount(): Promise<number> {
  const r = await t.graphql('{ threads(limit: 100) { data { id } } }');
  return r.data.threads.data.length;
}

describe('REST bodies', () => {
  it.each([
    ['truncation_strategy.last_messages', { truncation_strategy: { type: 'last_messages', last_messages: TOO_BIG } }],
    ['max_prompt_tokens', { max_prompt_tokens: TOO_BIG }],
    ['max_completion_tokens', { max_completion_tokens: TOO_BIG }],
  ])('POST /v1/threads/runs with %s = 2^31: 400, no thread, no run', async (param, fields) => {
    const before = await threadCount();
    const r = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'x' }] }, ...fields }, headers: H });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(above(param));
    expect(await threadCount()).toBe(before);
  });

  it('POST /v1/threads/{id}/runs refuses it too, and the thread’s runs stay readable', async () => {
    const r = await t.request('POST', `/v1/threads/${threadId}/runs`, {
      body: { assistant_id: assistantId, truncation_strategy: { type: 'last_messages', last_messages: TOO_BIG } },
      headers: H,
    });
    expect(r.body).toEqual(above('truncation_strategy.last_messages'));
    const list = await ok(t, 'GET', `/v1/threads/${threadId}/runs`, undefined, BETA);
    expect(list.data).toEqual([]);
  });
});

describe('REST query strings', () => {
  it.each([
    [`/v1/threads/THREAD/runs?limit=${TOO_BIG}`, 'limit'],
    [`/v1/assistants?limit=${TOO_BIG}`, 'limit'],
    [`/v1/threads/THREAD/messages?limit=99999999999999999999`, 'limit'],
  ])('%s: 400 with param, never a 500', async (path, param) => {
    const r = await t.request('GET', path.replace('THREAD', threadId), { headers: BETA });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe(param);
  });

  it('events?after= beyond a 32-bit integer: 400', async () => {
    const r = await t.request('GET', `/v1/threads/${threadId}/runs/run_x/events?after=${TOO_BIG}`, { headers: BETA });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(above('after'));
  });
});

describe('GraphQL', () => {
  it('a JSON input holding an integer beyond 32 bits gets the same 400 as REST', async () => {
    const r = await t.graphql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', {
      t: threadId,
      i: { assistantId, truncationStrategy: { type: 'last_messages', last_messages: TOO_BIG } },
    });
    expect(r.errors?.[0]).toMatchObject({
      message: "Invalid 'truncation_strategy.last_messages': integer above maximum value. Expected a value <= 2147483647, but got 2147483648 instead.",
      extensions: { status: 400, param: 'truncation_strategy.last_messages', code: 'integer_above_max_value' },
    });
    const runs = await t.graphql('query($t: String!) { runs(threadId: $t) { data { id } } }', { t: threadId });
    expect(runs.errors).toBeUndefined();
    expect(runs.data.runs.data).toEqual([]);
  });
});
