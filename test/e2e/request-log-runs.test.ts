/**
 * Every model call inside a run is one request-log record (a tool loop makes two), their usage
 * adds up to the run's, and /metrics counts tokens and upstream latency by provider and model.
 */
import OpenAI from 'openai';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { ok } from '../helpers/enforcement.js';

let t: TestApp;
let baseURL: string;
beforeAll(async () => {
  t = await createTestApp();
  baseURL = `${await t.listen()}/v1`;
});
afterAll(() => t.close());

describe('request log of runs', () => {
  it('a tool-calling run leaves one record per model call, adding up to the run’s usage', async () => {
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL, maxRetries: 0, defaultHeaders: { 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2' } });
    const assistant = await openai.beta.assistants.create({ model: 'local-logged', tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'please lookup the answer' }], metadata: { team: 'red' } });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id, metadata: { team: 'red' } }, { pollIntervalMs: 10 });
    expect(run.status).toBe('requires_action');
    const call = run.required_action!.submit_tool_outputs.tool_calls[0];
    const done = await openai.beta.threads.runs.submitToolOutputsAndPoll(run.id, { thread_id: thread.id, tool_outputs: [{ tool_call_id: call.id, output: '42' }] }, { pollIntervalMs: 10 });
    expect(done.status).toBe('completed');

    const records = (await ok(t, 'GET', '/v1/logs?model=local-logged')).data;
    expect(records).toHaveLength(2);
    for (const r of records) expect(r).toMatchObject({ route: 'runs', run_id: run.id, provider: 'local', virtual_key: 'local', status: 200, metadata: { team: 'red' } });
    const sum = (key: string) => records.reduce((s: number, r: any) => s + r[key], 0);
    expect({ prompt: sum('prompt_tokens'), completion: sum('completion_tokens'), total: sum('total_tokens') }).toEqual({
      prompt: done.usage!.prompt_tokens,
      completion: done.usage!.completion_tokens,
      total: done.usage!.total_tokens,
    });

    const metrics = (await t.request('GET', '/metrics', { key: null })).text;
    const counter = (kind: string) => Number(new RegExp(`gatehouse_model_tokens_total\\{provider="local",model="local-logged",kind="${kind}"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(counter('prompt')).toBe(done.usage!.prompt_tokens);
    expect(counter('completion')).toBe(done.usage!.completion_tokens);
    expect(metrics).toMatch(/gatehouse_upstream_latency_seconds_count\{provider="local",model="local-logged"\} 2/);
  });
});

describe('refused run requests', () => {
  it('are logged with their status and reason', async () => {
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL, maxRetries: 0, defaultHeaders: { 'x-gateway-virtual-key': 'missing', 'OpenAI-Beta': 'assistants=v2' } });
    const assistant = await openai.beta.assistants.create({ model: 'local-refused' });
    await expect(openai.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'hi' }] } })).rejects.toMatchObject({ status: 404 });
    const [record] = (await ok(t, 'GET', '/v1/logs?model=local-refused')).data;
    expect(record).toMatchObject({ route: 'runs', status: 404, refusal: 'virtual_key', virtual_key: 'missing', provider: null, total_tokens: 0 });
  });
});

describe('request log writer', () => {
  it('a full buffer drops new records and counts them, never waiting', async () => {
    const writer = new RequestLogWriter(t.app.runtime, 2, new Registry());
    const record = (i: number) => ({
      id: `00000000-0000-4000-8000-00000000000${i}`,
      createdAt: new Date(),
      organisationId: '00000000-0000-4000-8000-000000000000',
      workspaceId: '00000000-0000-4000-8000-000000000000',
      apiKeyId: null,
      virtualKey: null,
      provider: null,
      model: null,
      route: 'chat.completions',
      status: 200,
      stream: false,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      cost: 0,
      totalMs: 1,
      upstreamMs: null,
      requestId: null,
      runId: null,
      metadata: {},
      guardrails: [],
      refusal: null,
    });
    for (let i = 1; i <= 5; i++) writer.write(record(i));
    expect((await writer.dropped.get()).values).toEqual([{ value: 3, labels: { reason: 'buffer_full' } }]);
    await writer.flush();
    const rows = await t.app.runtime.fork().getConnection().execute<Array<{ n: number }>>("select count(*) as n from request_logs where cast(id as text) like '00000000-0000-4000-8000-00000000000%'", [], 'all');
    expect(Number(rows[0].n)).toBe(2);
  });
});
