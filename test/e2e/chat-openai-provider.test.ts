/**
 * Chat completions on an `openai` integration against a real HTTP peer: the body passes through
 * untouched, upstream usage is what counts, upstream errors keep their status (key redacted),
 * retries before the first byte, timeouts, and a client that leaves a stream early.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { errorReply, startFakeOpenAI, textReply, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { allSettled, heldReservations, ok, policyUsage } from '../helpers/enforcement.js';

const SECRET = 'sk-upstream-secret-0123456789';
let t: TestApp;
let fake: FakeOpenAI;
let baseURL: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({ MODEL_TIMEOUT_MS: 300, MODEL_MAX_RETRIES: 2, MODEL_RETRY_BACKOFF_MS: 10 });
  baseURL = `${await t.listen()}/v1`;
  await ok(t, 'POST', '/v1/integrations', { name: 'Upstream', slug: 'upstream', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: fake.url } });
  await ok(t, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

const openai = () => new OpenAI({ apiKey: TEST_KEY, baseURL, maxRetries: 0 });
const COMPLETION = {
  id: 'chatcmpl-upstream',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 13, completion_tokens: 2, total_tokens: 15 },
  service_tier: 'default',
  system_fingerprint: 'fp_123',
};

async function logs(): Promise<any[]> {
  return (await ok(t, 'GET', '/v1/logs?virtual_key=upstream&limit=100')).data;
}

describe('openai provider', () => {
  it('non-streamed: the body goes upstream untouched (model unprefixed), the answer comes back as the upstream sent it', async () => {
    fake.setScript({ json: COMPLETION });
    const completion = await openai().chat.completions.create({
      model: '@upstream/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello in French' }],
      temperature: 0.2,
      // A field this gateway has never heard of.
      ...({ future_knob: { level: 3 } } as object),
    });
    expect(completion).toEqual(COMPLETION);
    const sent = fake.requests[0];
    expect(sent.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(sent.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in French' }], temperature: 0.2, future_knob: { level: 3 } });
    expect((await logs())[0]).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', status: 200, prompt_tokens: 13, completion_tokens: 2, total_tokens: 15 });
  });

  it('streamed: usage is always asked for; the caller who did not ask gets none, the log has the upstream’s', async () => {
    fake.setScript(textReply(['Bon', 'jour'], { usage: { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 } }));
    const stream = await openai().chat.completions.create({ model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Bonjour');
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(fake.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    await expect.poll(async () => (await logs())[0]?.total_tokens).toBe(25);

    fake.setScript(textReply(['Salut'], { usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }));
    const withUsage = await openai().chat.completions.create({ model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let usage: unknown = null;
    for await (const chunk of withUsage) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
  });

  it('x-gateway-overhead-ms is the gateway’s own time, without the provider’s', async () => {
    fake.setScript({ headerDelayMs: 150, json: COMPLETION });
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).toBe(200);
    expect(Number(r.headers.get('x-gateway-overhead-ms'))).toBeLessThan(150);
    const [record] = await logs();
    expect(record.upstream_ms).toBeGreaterThanOrEqual(145);
    expect(record.total_ms).toBeGreaterThanOrEqual(record.upstream_ms);
  });

  it('an upstream 400 comes back with its status and message, the key redacted in every spelling', async () => {
    fake.setScript(errorReply(400, `Invalid model for key ${SECRET} (${SECRET.toUpperCase()}, ${SECRET.slice(0, 6)}...${SECRET.slice(-4)})`));
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@upstream/nope', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('The model provider answered HTTP 400: Invalid model for key [redacted] ([redacted], [redacted])');
    expect(r.text).not.toContain('0123456789');
    expect(fake.requests).toHaveLength(1);
    expect((await logs())[0]).toMatchObject({ status: 400, refusal: 'upstream_error', total_tokens: 0 });
  });

  it('an upstream failure gives the reserved estimate back: nothing stays held, the policy counts nothing', async () => {
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', { name: 'Failed upstream', conditions: [{ key: 'virtual_key', value: 'upstream' }], group_by: [{ key: 'virtual_key' }], type: 'tokens', credit_limit: 100_000 });
    fake.setScript(errorReply(400, 'no such model'));
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@upstream/nope', messages: [{ role: 'user', content: 'a prompt long enough to reserve an estimate' }] } });
    expect(r.status).toBe(400);
    expect(await heldReservations(t)).toBe(0);
    expect((await policyUsage(t, policy.id))['virtual_key:upstream']?.current_usage ?? 0).toBe(0);
    await ok(t, 'PUT', `/v1/policies/usage-limits/${policy.id}`, { status: 'archived' });
  });

  it('429 and 5xx are retried with backoff before the first byte; the last answer counts', async () => {
    let calls = 0;
    fake.setScript(() => (++calls < 3 ? errorReply(calls === 1 ? 429 : 503, 'busy') : { json: COMPLETION }));
    const completion = await openai().chat.completions.create({ model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.id).toBe('chatcmpl-upstream');
    expect(fake.requests).toHaveLength(3);

    fake.setScript(errorReply(503, 'down for maintenance'));
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).toBe(503);
    expect(r.body.error).toEqual({ message: 'The model provider answered HTTP 503: down for maintenance', type: 'server_error', param: null, code: 'upstream_error' });
    expect(fake.requests).toHaveLength(3 + 3);
  });

  it('a silent upstream times out with 504; one that cannot be reached is a 502', async () => {
    fake.setScript({ headerDelayMs: 2000, json: COMPLETION });
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).toBe(504);
    expect(r.body.error).toMatchObject({ message: 'The model provider did not respond within 300 ms.', code: 'upstream_timeout' });

    await ok(t, 'POST', '/v1/integrations', { name: 'Gone', slug: 'gone', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: 'http://127.0.0.1:9/v1' } });
    await ok(t, 'PUT', '/v1/integrations/gone/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
    const gone = await t.request('POST', '/v1/chat/completions', { body: { model: '@gone/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(gone.status).toBe(502);
    expect(gone.body.error).toMatchObject({ type: 'server_error', code: 'upstream_unreachable' });
  });

  it('a client that leaves a stream early: the upstream is read to its end, usage settles and the call is logged', async () => {
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', { name: 'Upstream tokens', conditions: [{ key: 'virtual_key', value: 'upstream' }], group_by: [{ key: 'virtual_key' }], type: 'tokens', credit_limit: 100_000 });
    fake.setScript(textReply(['one ', 'two ', 'three ', 'four ', 'five'], { chunkDelayMs: 40, usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } }));
    const controller = new AbortController();
    const stream = await openai().chat.completions.create({ model: '@upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'count' }], stream: true }, { signal: controller.signal });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) {
        controller.abort();
        break;
      }
    }
    await allSettled(t);
    await expect.poll(async () => (await policyUsage(t, policy.id))['virtual_key:upstream']?.current_usage, { timeout: 3000 }).toBe(14);
    expect(fake.requests.at(-1)!.clientClosed).toBe(false);
    expect((await logs())[0]).toMatchObject({ stream: true, status: 200, total_tokens: 14 });
    await ok(t, 'PUT', `/v1/policies/usage-limits/${policy.id}`, { status: 'archived' });
  });

  it('embeddings pass through to <base_url>/embeddings; usage and the log are the upstream’s', async () => {
    const seen: any[] = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (piece) => (raw += piece));
      req.on('end', () => {
        seen.push({ path: req.url, body: JSON.parse(raw) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }], model: 'text-embedding-3-small', usage: { prompt_tokens: 3, total_tokens: 3 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await ok(t, 'POST', '/v1/integrations', { name: 'Embedder', slug: 'embedder', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` } });
      await ok(t, 'PUT', '/v1/integrations/embedder/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
      const result = await openai().embeddings.create({ model: '@embedder/text-embedding-3-small', input: 'three tokens here', encoding_format: 'float', dimensions: 2 });
      expect(result.data[0].embedding).toEqual([0.6, 0.8]);
      expect(seen).toEqual([{ path: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'three tokens here', encoding_format: 'float', dimensions: 2 } }]);
      const [record] = (await ok(t, 'GET', '/v1/logs?virtual_key=embedder')).data;
      expect(record).toMatchObject({ route: 'embeddings', provider: 'openai', model: 'text-embedding-3-small', status: 200, prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
