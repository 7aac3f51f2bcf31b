import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { countTokens } from '../../src/modules/runs/models/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * The portkey-ai SDK's `prompts` methods against a real server with the built-in `local` provider:
 * create / list / retrieve / update / delete, versions, render, and completions (plain and
 * streamed) under chat's enforcement: a usage-limit policy (412) and a guardrail (446), each
 * leaving its request-log record.
 */

const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let t: TestApp;
let client: Portkey;
let promptId: string;

beforeAll(async () => {
  t = await createTestApp();
  client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1`, maxRetries: 0 });
  const created = plain(
    await client.prompts.create({
      name: 'Echo',
      collection_id: 'default',
      string: 'Tell me about {{topic}}.',
      parameters: { max_tokens: 64 },
      model: 'local',
      virtual_key: 'local',
    }),
  );
  promptId = created.id;
});
afterAll(() => t.close());

/** The SDK adds helpers (getHeaders) to what it returns; compare the JSON. */
function plain(value: unknown): any {
  return JSON.parse(JSON.stringify(value));
}

async function refusal(promise: Promise<unknown>): Promise<any> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!error) throw new Error('expected a refusal');
  return error;
}

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await t.request(method, path, { body });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
  return r.body;
}

/** The newest request-log record, once written (the writer inserts in timed batches: flushed here, so a loaded machine's timers do not decide). */
async function lastLog(): Promise<any> {
  for (let i = 0; i < 100; i++) {
    await requestLogWriter(t.app.runtime).flush();
    const [record] = (await ok('GET', '/v1/logs?limit=1')).data;
    if (record) return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no request-log record');
}

describe('control plane through the SDK', () => {
  it('create / retrieve / update / list / versions / delete', async () => {
    const created = plain(await client.prompts.create({ name: 'SDK prompt', collection_id: 'default', string: 'Hi {{name}}', parameters: {}, model: 'local' }));
    expect(created).toEqual({ id: UUID, slug: 'sdk-prompt', version_id: UUID, object: 'prompt' });
    expect(plain(await client.prompts.retrieve('sdk-prompt'))).toMatchObject({ id: created.id, string: 'Hi {{name}}', prompt_version: 1, prompt_version_id: created.version_id });

    const updated = plain(await client.prompts.update('sdk-prompt', { string: 'Hello {{name}}', version_description: 'Friendlier' }));
    expect(updated).toEqual({ id: created.id, slug: 'sdk-prompt', prompt_version_id: UUID });

    const list = plain(await client.prompts.list({ search: 'sdk' }));
    expect(list).toMatchObject({ total: 1, data: [{ id: created.id, slug: 'sdk-prompt', object: 'prompt' }] });

    // The SDK turns a top-level JSON array into an object of its items.
    const versions = Object.values(plain(await client.prompts.versions.list('sdk-prompt'))) as any[];
    expect(versions.map((v) => [v.prompt_version, v.prompt_template.string])).toEqual([
      [2, 'Hello {{name}}'],
      [1, 'Hi {{name}}'],
    ]);
    expect(plain(await client.prompts.versions.retrieve('sdk-prompt', created.version_id))).toMatchObject({ string: 'Hi {{name}}', prompt_version: 1 });
    const label = '0b6f3f4e-3f0a-4c8e-9a53-6d1f6f7a9b21';
    expect(plain(await client.prompts.versions.update('sdk-prompt', created.version_id, { label_id: label }))).toEqual({});
    expect(plain(await client.prompts.versions.retrieve('sdk-prompt', created.version_id))).toMatchObject({ prompt_version_label_id: label });

    expect(plain(await client.prompts.delete('sdk-prompt'))).toEqual({});
    expect(plain(await client.prompts.list({ search: 'sdk' }))).toMatchObject({ total: 0, data: [] });
  });

  it('render: the request the prompt makes, with the variables filled in', async () => {
    const rendered = plain(await client.prompts.render({ promptID: promptId, variables: { topic: 'gateways' }, temperature: 0.5 }));
    expect(rendered).toEqual({
      success: true,
      data: { max_tokens: 64, model: 'local', temperature: 0.5, messages: [{ role: 'user', content: 'Tell me about gateways.' }] },
    });
  });

  it('publish makes a kept version the default that render and retrieve use', async () => {
    const created = plain(await client.prompts.create({ name: 'Published', collection_id: 'default', string: 'First {{x}}', parameters: {}, model: 'local' }));
    plain(await client.prompts.update('published', { string: 'Second {{x}}' }));
    const rendered = async () => plain(await client.prompts.render({ promptID: 'published', variables: { x: 'take' } })).data.messages[0].content;
    expect(await rendered()).toBe('Second take');

    expect(plain(await client.prompts.publish('published', { version: 1 }))).toEqual({});
    expect(await rendered()).toBe('First take');
    expect(plain(await client.prompts.retrieve('published'))).toMatchObject({ prompt_version: 1, prompt_version_id: created.version_id });

    const error = await refusal(client.prompts.publish('published', { version: 7 }));
    expect(error.status).toBe(404);
    expect(error.error).toEqual({ error: { message: 'Prompt version 7 not found.', type: 'invalid_request_error', param: 'version', code: 'prompt_not_found' } });
  });

  it('bad input reaches the SDK with its status and envelope', async () => {
    const error = await refusal(client.prompts.create({ name: 'Broken', collection_id: 'default', string: '{{#x}}', parameters: {}, model: 'local' }));
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      error: { message: `Invalid 'string': not a valid Mustache template: Unclosed section "x" at 6.`, type: 'invalid_request_error', param: 'string', code: 'invalid_value' },
    });
  });
});

describe('completions through chat completions', () => {
  it('non-streamed: the local provider answers the rendered prompt; usage as chat, logged as prompts.completions', async () => {
    // Portkey's envelope `{status, headers, body}`, as the SDK hands it over.
    const answer = plain(await client.prompts.completions.create({ promptID: promptId, variables: { topic: 'prompts' } }));
    expect(answer).toMatchObject({ status: 'success', headers: {} });
    const completion = answer.body;
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'local',
      choices: [{ index: 0, message: { role: 'assistant', content: 'You said: Tell me about prompts.' }, finish_reason: 'stop' }],
    });
    const prompt = countTokens('Tell me about prompts.');
    expect(completion.usage.prompt_tokens).toBe(prompt);
    expect(await lastLog()).toMatchObject({ route: 'prompts.completions', status: 200, virtual_key: 'local', model: 'local', prompt_tokens: prompt });

    const r = await t.request('POST', `/v1/prompts/${promptId}/completions`, { body: { variables: { topic: 'x' } } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['status', 'headers', 'body']);
    expect(r.body).toMatchObject({ status: 'success', headers: {}, body: { object: 'chat.completion' } });
    expect(Number(r.headers.get('x-gateway-overhead-ms'))).toBeGreaterThanOrEqual(0);

    // Chat completions themselves keep their own route.
    const direct = await t.request('POST', '/v1/chat/completions', {
      body: { model: 'local', messages: [{ role: 'user', content: 'direct' }] },
      headers: { 'x-portkey-virtual-key': 'local' },
    });
    expect(direct.status, direct.text).toBe(200);
    await vi.waitFor(async () => expect(await lastLog()).toMatchObject({ route: 'chat.completions', prompt_tokens: countTokens('direct') }));
  });

  it('streamed: chat.completion.chunk events ending in [DONE]', async () => {
    const stream = await client.prompts.completions.create({ promptID: promptId, variables: { topic: 'streams' }, stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream as AsyncIterable<any>) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('You said: Tell me about streams.');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    await vi.waitFor(async () => expect(await lastLog()).toMatchObject({ route: 'prompts.completions', stream: true, prompt_tokens: countTokens('Tell me about streams.') }));
  });

  it('the virtual key comes from the request when the prompt has none', async () => {
    const bare = plain(await client.prompts.create({ name: 'No key', collection_id: 'default', string: 'Hello', parameters: {}, model: 'local' }));
    const missing = await refusal(client.prompts.completions.create({ promptID: bare.id, variables: {} }));
    expect(missing.status).toBe(400);
    expect(missing.error.error.code).toBe('missing_virtual_key');
    const withHeader = new Portkey({ apiKey: t.key, baseURL: client.baseURL, virtualKey: 'local', maxRetries: 0 });
    expect(plain(await withHeader.prompts.completions.create({ promptID: bare.id, variables: {} })).body.choices[0].message.content).toBe('You said: Hello');
    const unknown = new Portkey({ apiKey: t.key, baseURL: client.baseURL, virtualKey: 'nope', maxRetries: 0 });
    expect((await refusal(unknown.prompts.completions.create({ promptID: bare.id, variables: {} }))).status).toBe(404);
  });

  it('a usage-limit policy that is spent refuses with 412, logged', async () => {
    const policy = await ok('POST', '/v1/policies/usage-limits', {
      name: 'Prompt budget',
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 1,
    });
    try {
      // The first call is admitted (nothing spent yet) and spends the budget; the next is refused.
      await client.prompts.completions.create({ promptID: promptId, variables: { topic: 'budgets' } });
      const error = await refusal(client.prompts.completions.create({ promptID: promptId, variables: { topic: 'budgets' } }));
      expect(error.status).toBe(412);
      expect(error.error.error).toMatchObject({ type: 'usage_limit_error', code: 'usage_limit_exceeded' });
      expect(await lastLog()).toMatchObject({ route: 'prompts.completions', status: 412, refusal: 'usage_limit', total_tokens: 0 });
    } finally {
      await ok('DELETE', `/v1/policies/usage-limits/${policy.id}`);
    }
  });

  it('an input guardrail with deny refuses with 446 and guardrail_results; streamed too', async () => {
    const guard = await ok('POST', '/v1/guardrails', {
      name: 'No forbidden topics',
      checks: [{ id: 'default.regexMatch', parameters: { rule: 'forbidden', not: true } }],
      actions: { deny: true },
    });
    await ok('PUT', '/v1/providers/local', { input_guardrails: [guard.slug] });
    try {
      const error = await refusal(client.prompts.completions.create({ promptID: promptId, variables: { topic: 'forbidden things' } }));
      expect(error.status).toBe(446);
      expect(error.error.error).toMatchObject({ type: 'guardrail_error', code: 'guardrail_denied' });
      expect(error.error.guardrail_results).toEqual([expect.objectContaining({ id: guard.id, verdict: false })]);
      expect(await lastLog()).toMatchObject({ status: 446, refusal: 'guardrail' });

      const r = await t.request('POST', `/v1/prompts/${promptId}/completions`, { body: { variables: { topic: 'forbidden' }, stream: true } });
      expect(r.status).toBe(446);
      expect(r.headers.get('content-type')).toContain('application/json');

      // An allowed topic passes the same guardrail.
      expect(plain(await client.prompts.completions.create({ promptID: promptId, variables: { topic: 'cats' } })).body.choices[0].message.content).toBe(
        'You said: Tell me about cats.',
      );
    } finally {
      await ok('PUT', '/v1/providers/local', { input_guardrails: [] });
    }
  });
});
