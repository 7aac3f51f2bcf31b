/**
 * Chat traffic under enforcement, through a real HTTP server and the openai SDK v6: virtual key
 * (404), access (403), rate limit (429), usage-limit policies on tokens and cost with a
 * `metadata.user` group_by (412), input guardrails (446 / 246) and output guardrails; every call,
 * refused or not, in the request log, which agrees with the policies' counted usage.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOf } from '../../src/modules/usage/prices.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { allSettled, ok, policyUsage } from '../helpers/enforcement.js';

let t: TestApp;
let baseURL: string;

beforeAll(async () => {
  t = await createTestApp();
  baseURL = `${await t.listen()}/v1`;
});
afterAll(() => t.close());

const client = (headers: Record<string, string> = {}) => new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: headers, maxRetries: 0 });
const ask = (content: string, headers: Record<string, string> = {}, model = '@local/local') =>
  client(headers).chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();

async function refusal(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** The newest request-log records (GET /v1/logs), newest first. */
async function logs(query = ''): Promise<any[]> {
  return (await ok(t, 'GET', `/v1/logs?limit=100${query}`)).data;
}

describe('refusals on chat traffic', () => {
  it('an unknown virtual key: 404, logged', async () => {
    const error = await refusal(ask('hi', {}, '@nope/local'));
    expect(error.status).toBe(404);
    expect(error.error).toEqual({ message: "No provider found for virtual key 'nope' in this workspace.", type: 'invalid_request_error', param: null, code: 'virtual_key_not_found' });
    const [record] = await logs();
    expect(record).toMatchObject({ route: 'chat.completions', status: 404, virtual_key: 'nope', model: 'local', provider: null, refusal: 'virtual_key', total_tokens: 0 });
  });

  it('no virtual key at all: 400', async () => {
    const error = await refusal(client().chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('missing_virtual_key');
  });

  it('access disabled for the workspace: 403', async () => {
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: false }] });
    try {
      const error = await refusal(ask('hi'));
      expect(error.status).toBe(403);
      expect(error.code).toBe('integration_disabled');
    } finally {
      await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
    }
    expect((await logs())[0]).toMatchObject({ status: 403, refusal: 'integration_disabled' });
  });

  it('rate limit: 429 with its headers once the window is spent', async () => {
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rph', value: 2 }] }] });
    try {
      const remaining: string[] = [];
      for (let i = 0; i < 2; i++) remaining.push((await ask(`hi ${i}`)).response.headers.get('x-ratelimit-remaining')!);
      expect(remaining).toEqual(['1', '0']);
      const error = await refusal(ask('one too many'));
      expect(error.status).toBe(429);
      expect(error.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: null }] });
    }
    expect((await logs())[0]).toMatchObject({ status: 429, refusal: 'rate_limit' });
  });

  it('a tokens policy on metadata.user (header and body metadata): 412 for the user who spent it, not for another', async () => {
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', {
      name: 'Per user',
      conditions: [{ key: 'metadata.team', value: 'blue' }],
      group_by: [{ key: 'metadata.user' }],
      type: 'tokens',
      credit_limit: 30,
    });
    const alice = { 'x-gateway-metadata': JSON.stringify({ team: 'blue', user: 'alice' }) };
    const used: number[] = [];
    let refused: APIError | null = null;
    for (let i = 0; i < 20 && !refused; i++) {
      try {
        const { data } = await ask(`hello number ${i}`, alice);
        used.push(data.usage!.total_tokens);
      } catch (error) {
        if (!(error instanceof APIError)) throw error;
        refused = error;
      }
    }
    expect(refused?.status).toBe(412);
    expect(refused?.error).toMatchObject({ type: 'usage_limit_error', code: 'usage_limit_exceeded' });
    const total = used.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(30);
    expect(total - used.at(-1)!).toBeLessThan(30);

    // Bob (named in the body's metadata instead) has his own bucket.
    const bob = await client({ 'x-portkey-metadata': JSON.stringify({ team: 'blue' }) }).chat.completions.create({
      model: '@local/local',
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { user: 'bob' },
    });
    await allSettled(t);
    const usage = await policyUsage(t, policy.id);
    expect(usage['metadata.user:alice']).toMatchObject({ current_usage: total, status: 'exhausted' });
    expect(usage['metadata.user:bob'].current_usage).toBe(bob.usage!.total_tokens);

    // The log agrees with the policy: alice's admitted calls, then her refusal.
    const records = (await logs()).filter((r) => r.metadata.user === 'alice');
    expect(records[0]).toMatchObject({ status: 412, refusal: 'usage_limit', total_tokens: 0 });
    expect(records.slice(1).reduce((sum, r) => sum + r.total_tokens, 0)).toBe(total);
    await ok(t, 'PUT', `/v1/policies/usage-limits/${policy.id}`, { status: 'archived' });
  });

  it('a cost policy counts dollars from the model price; 412 once spent', async () => {
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', {
      name: 'Dollars',
      conditions: [{ key: 'model', value: 'gpt-4o-mini' }],
      group_by: [{ key: 'virtual_key' }],
      type: 'cost',
      credit_limit: 0.0002,
    });
    const costs: number[] = [];
    let refused: APIError | null = null;
    for (let i = 0; i < 40 && !refused; i++) {
      try {
        const completion = await client().chat.completions.create({ model: '@local/gpt-4o-mini', messages: [{ role: 'user', content: `a question number ${i}` }], max_tokens: 100 });
        costs.push(costOf('gpt-4o-mini', completion.usage!));
      } catch (error) {
        if (!(error instanceof APIError)) throw error;
        refused = error;
      }
    }
    expect(refused?.status).toBe(412);
    await allSettled(t);
    const spent = costs.reduce((a, b) => a + b, 0);
    expect((await policyUsage(t, policy.id))['virtual_key:local'].current_usage).toBeCloseTo(spent, 12);
    const logged = (await logs('&model=gpt-4o-mini')).filter((r) => r.status === 200);
    expect(logged).toHaveLength(costs.length);
    expect(logged.reduce((sum, r) => sum + r.cost, 0)).toBeCloseTo(spent, 12);
    await ok(t, 'PUT', `/v1/policies/usage-limits/${policy.id}`, { status: 'archived' });
  });
});

describe('guardrails on chat traffic', () => {
  let deny: string;
  let soft: string;
  let noSecrets: string;
  beforeAll(async () => {
    deny = (await ok(t, 'POST', '/v1/guardrails', { name: 'No forbidden words', checks: [{ id: 'default.regexMatch', parameters: { rule: 'forbidden', not: true } }], actions: { deny: true } })).slug;
    soft = (await ok(t, 'POST', '/v1/guardrails', { name: 'Must say please', checks: [{ id: 'default.regexMatch', parameters: { rule: 'please' } }], actions: { deny: false } })).slug;
    noSecrets = (await ok(t, 'POST', '/v1/guardrails', { name: 'No secrets out', checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret', not: true } }], actions: { deny: true } })).slug;
  });
  afterAll(() => ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [], output_guardrails: [] }));

  it('input: a deny answers 446 with guardrail_results; a failed non-deny guardrail answers 246', async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [deny, soft], output_guardrails: [] });
    const denied = await refusal(ask('this is forbidden, please'));
    expect(denied.status).toBe(446);
    expect(denied.error).toMatchObject({ type: 'guardrail_error', code: 'guardrail_denied' });
    expect(denied.message).toContain(`'No forbidden words' (${deny})`);
    expect((await logs())[0]).toMatchObject({ status: 446, refusal: 'guardrail', guardrails: [expect.objectContaining({ stage: 'input', slug: deny, verdict: false, deny: true }), expect.objectContaining({ slug: soft, verdict: true })] });

    const { data, response } = await ask('hello there');
    expect(response.status).toBe(246);
    expect(data.choices[0].message.content).toBe('You said: hello there');
    expect((await logs())[0]).toMatchObject({ status: 246, refusal: null, guardrails: [expect.objectContaining({ slug: deny, verdict: true }), expect.objectContaining({ slug: soft, verdict: false, deny: false })] });

    const passed = await ask('hello please');
    expect(passed.response.status).toBe(200);
  });

  it('a stream answers 246 too, as bare data events ending with [DONE]', async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [soft], output_guardrails: [] });
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@local/local', messages: [{ role: 'user', content: 'hello' }], stream: true } });
    expect(r.status).toBe(246);
    expect(r.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = r.text.split('\n\n').filter(Boolean);
    expect(events.slice(0, -1).every((e) => e.startsWith('data: {'))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const text = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)).choices[0].delta.content ?? '').join('');
    expect(text).toBe('You said: hello');
  });

  it('output: non-streamed deny answers 446; streamed answers are checked after the stream and recorded', async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [], output_guardrails: [noSecrets] });
    const denied = await refusal(ask('the secret is 42'));
    expect(denied.status).toBe(446);
    expect(denied.error).toMatchObject({ message: `The answer was denied by guardrail 'No secrets out' (${noSecrets}).`, code: 'guardrail_denied' });
    const [record] = await logs();
    expect(record).toMatchObject({ status: 446, refusal: 'output_guardrail', guardrails: [expect.objectContaining({ stage: 'output', verdict: false, deny: true })] });
    expect(record.total_tokens).toBeGreaterThan(0);

    const stream = await client().chat.completions.create({ model: '@local/local', messages: [{ role: 'user', content: 'the secret is 42' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('You said: the secret is 42');
    await expect.poll(async () => (await logs())[0].stream).toBe(true);
    expect((await logs())[0]).toMatchObject({ status: 200, stream: true, guardrails: [expect.objectContaining({ stage: 'output', verdict: false, deny: true })] });
  });
});

describe('request log reads', () => {
  it('pages newest first and filters; usageSummary agrees with the records', async () => {
    const all = await logs();
    const first = await ok(t, 'GET', '/v1/logs?limit=2');
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data.map((r: any) => r.id)).toEqual(all.slice(0, 2).map((r) => r.id));
    const second = await ok(t, 'GET', `/v1/logs?limit=2&after=${first.last_id}`);
    expect(second.data.map((r: any) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id));
    const times = all.map((r) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect((await logs('&status=412')).every((r) => r.status === 412)).toBe(true);

    const summary = await t.graphql(`{ usageSummary(groupBy: [model, virtual_key]) { model virtualKey requests errors promptTokens completionTokens totalTokens cost } }`);
    expect(summary.errors).toBeUndefined();
    const expected = new Map<string, any>();
    for (const r of all) {
      const key = `${r.model}|${r.virtual_key}`;
      const row = expected.get(key) ?? { model: r.model, virtualKey: r.virtual_key, requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 };
      row.requests++;
      if (r.status >= 400) row.errors++;
      row.promptTokens += r.prompt_tokens;
      row.completionTokens += r.completion_tokens;
      row.totalTokens += r.total_tokens;
      row.cost += r.cost;
      expected.set(key, row);
    }
    const rows = summary.data.usageSummary;
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      const want = expected.get(`${row.model}|${row.virtualKey}`);
      expect({ ...row, cost: 0 }).toEqual({ ...want, cost: 0 });
      expect(row.cost).toBeCloseTo(want.cost, 12);
    }
  });

  it('bad filters answer 400', async () => {
    const r = await t.request('GET', '/v1/logs?from=yesterday');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'from', code: 'invalid_value' });
    const g = await t.graphql('{ requestLogs(limit: 1000) { hasMore } }');
    expect(g.errors?.[0].message).toBe("Invalid 'limit': integer above maximum value. Expected a value <= 100, but got 1000 instead.");
  });
});
