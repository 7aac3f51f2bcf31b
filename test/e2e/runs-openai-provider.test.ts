/**
 * Runs on an `openai` integration: the adapter against a real HTTP peer speaking streamed chat
 * completions (tool calls, text, 500, 429, a slow upstream), through the whole run pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { errorReply, startFakeOpenAI, textReply, toolCallsReply, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { BETA, ok, parseSse, names, waitFor } from '../helpers/run-fixtures.js';

let t: TestApp;
let fake: FakeOpenAI;
const VK = { ...BETA, 'x-gateway-virtual-key': 'upstream' };
const CALL_ID = 'call_ABCDEFGHIJKLMNOPQRSTUVWX';

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({ MODEL_TIMEOUT_MS: 300 });
  await ok(t, 'POST', '/v1/integrations', { name: 'Upstream', slug: 'upstream', ai_provider_id: 'openai', key: 'sk-upstream-secret', configurations: { base_url: fake.url } }, {});
  await ok(t, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] }, {});
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function run(text: string, headers = VK) {
  const a = await ok(t, 'POST', '/v1/assistants', { model: 'gpt-upstream', instructions: 'Be brief.', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] }, headers);
  const th = await ok(t, 'POST', '/v1/threads', { messages: [{ role: 'user', content: text }] }, headers);
  const r = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id }, headers);
  return { threadId: th.id, runId: r.id };
}

/** The request-log record of a run's one model call (a failed call is recorded too). */
async function loggedCall(runId: string) {
  const records = (await ok(t, 'GET', '/v1/logs?model=gpt-upstream&limit=100', undefined, {})).data.filter((r: { run_id: string }) => r.run_id === runId);
  expect(records).toHaveLength(1);
  return records[0];
}

describe('openai provider', () => {
  it('tool calls → requires_action; outputs go back upstream; text → completed with upstream usage', async () => {
    fake.setScript(toolCallsReply([{ id: CALL_ID, name: 'get_weather', arguments: '{"city":"Paris"}' }], { usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } }));
    const { threadId, runId } = await run('Weather in Paris?');
    const waiting = await waitFor(t, threadId, runId, ['requires_action', 'failed']);
    expect(waiting.required_action.submit_tool_outputs.tool_calls).toEqual([{ id: CALL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    const first = fake.requests.at(-1)!;
    expect(first.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(first.body).toMatchObject({
      model: 'gpt-upstream',
      stream: true,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });

    fake.setScript(textReply(['It is ', 'sunny ', 'in Paris.'], { usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 } }));
    const streamed = await t.request('POST', `/v1/threads/${threadId}/runs/${runId}/submit_tool_outputs`, {
      body: { tool_outputs: [{ tool_call_id: CALL_ID, output: '22C sunny' }], stream: true },
      headers: VK,
    });
    const events = parseSse(streamed.text);
    const deltas = events.filter((e) => e.event === 'thread.message.delta').map((e) => JSON.parse(e.data).delta.content[0].text.value);
    expect(deltas).toEqual(['It is ', 'sunny ', 'in Paris.']);
    expect(names(events).slice(-2)).toEqual(['thread.run.completed', 'done']);
    const second = fake.requests.at(-1)!.body;
    expect(second.messages.slice(1)).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: CALL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: CALL_ID, content: '22C sunny' },
    ]);
    const done = await waitFor(t, threadId, runId, ['completed']);
    expect(done.usage).toEqual({ prompt_tokens: 41, completion_tokens: 11, total_tokens: 52 });
  });

  it('HTTP 500 → failed, server_error; the key never appears', async () => {
    fake.setScript(errorReply(500, 'it exploded with key sk-upstream-secret'));
    const { threadId, runId } = await run('hi');
    const failed = await waitFor(t, threadId, runId, ['failed', 'completed']);
    expect(failed).toMatchObject({ status: 'failed', last_error: { code: 'server_error' } });
    expect(failed.last_error.message).toBe('The model provider answered HTTP 500: it exploded with key [redacted]');
    expect(await loggedCall(runId)).toMatchObject({ route: 'runs', status: 500, refusal: 'server_error', provider: 'openai', virtual_key: 'upstream', total_tokens: 0 });
  });

  it('masked, upper-cased and partial echoes of the key are blanked too', async () => {
    fake.setScript(errorReply(400, 'Bad key sk-ups...cret, sk-upst***cret, SK-UPSTREAM-SECRET, key=sk-upstream-se\u0000\nend'));
    const { threadId, runId } = await run('hi');
    const failed = await waitFor(t, threadId, runId, ['failed', 'completed']);
    expect(failed.last_error).toEqual({
      code: 'server_error',
      message: 'The model provider answered HTTP 400: Bad key [redacted], [redacted], [redacted], key=[redacted] end',
    });
  });

  it('HTTP 429 → failed, rate_limit_exceeded', async () => {
    fake.setScript(errorReply(429, 'Too many requests'));
    const { threadId, runId } = await run('hi');
    const failed = await waitFor(t, threadId, runId, ['failed', 'completed']);
    expect(failed.last_error).toEqual({ code: 'rate_limit_exceeded', message: "The model provider's rate limit was reached: Too many requests" });
    expect(await loggedCall(runId)).toMatchObject({ route: 'runs', status: 429, refusal: 'rate_limit_exceeded', total_tokens: 0 });
  });

  it('a slow upstream times out (MODEL_TIMEOUT_MS) → failed, server_error; the server goes on', async () => {
    fake.setScript({ ...textReply(['late']), headerDelayMs: 2_000 });
    const { threadId, runId } = await run('hi');
    const failed = await waitFor(t, threadId, runId, ['failed', 'completed']);
    expect(failed.last_error).toEqual({ code: 'server_error', message: 'The model provider did not respond within 300 ms.' });
    fake.setScript(textReply(['back']));
    const again = await run('hi again');
    expect((await waitFor(t, again.threadId, again.runId, ['failed', 'completed'])).status).toBe('completed');
  });

  it('an upstream unreachable at execution time fails the run, never the server', async () => {
    await ok(t, 'PUT', '/v1/integrations/upstream', { configurations: { base_url: 'http://127.0.0.1:9/v1' } }, {});
    try {
      const { threadId, runId } = await run('hi');
      const failed = await waitFor(t, threadId, runId, ['failed', 'completed']);
      expect(failed.last_error.code).toBe('server_error');
      expect(failed.last_error.message).toMatch(/^The model provider could not be reached/);
    } finally {
      await ok(t, 'PUT', '/v1/integrations/upstream', { configurations: { base_url: fake.url } }, {});
    }
  });

  it('disabled workspace access: 403 integration_disabled before any model work', async () => {
    const a = await ok(t, 'POST', '/v1/assistants', { model: 'gpt-upstream' }, VK);
    const th = await ok(t, 'POST', '/v1/threads', { messages: [{ role: 'user', content: 'hi' }] }, VK);
    await ok(t, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: false }] }, {});
    try {
      const before = fake.requests.length;
      const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id }, headers: VK });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ type: 'permission_error', code: 'integration_disabled' });
      expect(fake.requests.length).toBe(before);
    } finally {
      await ok(t, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] }, {});
    }
  });
});
