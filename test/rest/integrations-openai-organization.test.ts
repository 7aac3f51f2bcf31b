/**
 * An integration's `configurations.openai_organization` is kept, returned, and sent upstream as
 * the `OpenAI-Organization` header by both openai adapters: chat completions and runs. Checked
 * on a real HTTP peer that records what it received.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { startFakeOpenAI, textReply, type FakeOpenAI } from '../helpers/fake-openai-server.js';

let t: TestApp;
let fake: FakeOpenAI;
let openai: OpenAI;

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await t.request(method, path, { body });
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp();
  openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${await t.listen()}/v1`, maxRetries: 0, defaultHeaders: { 'OpenAI-Beta': 'assistants=v2', 'x-gateway-virtual-key': 'org-upstream' } });
  await ok('POST', '/v1/integrations', {
    name: 'Org upstream',
    slug: 'org-upstream',
    ai_provider_id: 'openai',
    key: 'sk-org-secret',
    configurations: { custom_host: fake.url, openai_organization: 'org-team-42' },
  });
  await ok('PUT', '/v1/integrations/org-upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

it('is returned by GET /v1/integrations/{slug}', async () => {
  expect((await ok('GET', '/v1/integrations/org-upstream')).configurations).toEqual({ custom_host: fake.url, openai_organization: 'org-team-42' });
});

it('reaches the upstream on chat completions', async () => {
  fake.setScript({
    json: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    },
  });
  await openai.chat.completions.create({ model: '@org-upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
  expect(fake.requests).toHaveLength(1);
  expect(fake.requests[0].headers['openai-organization']).toBe('org-team-42');
  expect(fake.requests[0].headers.authorization).toBe('Bearer sk-org-secret');
});

it('reaches the upstream on runs', async () => {
  fake.setScript(textReply(['Done.']));
  const assistant = await openai.beta.assistants.create({ model: 'gpt-4o-mini' });
  const run = await openai.beta.threads.createAndRunPoll({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'Go' }] } }, { pollIntervalMs: 10 });
  expect(run.status).toBe('completed');
  expect(fake.requests.map((r) => r.headers['openai-organization'])).toEqual(['org-team-42']);
});

it('is no longer sent once cleared', async () => {
  await ok('PUT', '/v1/integrations/org-upstream', { configurations: { openai_organization: null } });
  fake.setScript(textReply(['Hi']));
  await openai.chat.completions.create({ model: '@org-upstream/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true }).then(async (stream) => {
    for await (const _chunk of stream) void _chunk;
  });
  expect(fake.requests).toHaveLength(1);
  expect(fake.requests[0].headers).not.toHaveProperty('openai-organization');
  expect((await ok('GET', '/v1/integrations/org-upstream')).configurations).toEqual({ custom_host: fake.url });
});
