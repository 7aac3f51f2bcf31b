/**
 * Real clients against a real HTTP server: the openai SDK v6 (named `thread_id`) and v4
 * (positional), and portkey-ai, driving a full tool-calling loop with the built-in `local` model.
 */
import OpenAI from 'openai';
import OpenAI4 from 'openai4';
import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';

let t: TestApp;
let baseURL: string;
const headers = { 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2' };
const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { input: { type: 'string' } } } },
};

beforeAll(async () => {
  t = await createTestApp();
  baseURL = `${await t.listen()}/v1`;
});
afterAll(() => t.close());

describe('openai SDK v6 (named thread_id)', () => {
  const client = () => new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: headers, maxRetries: 0 });

  it('assistant → thread → message → createAndPoll (requires_action) → submitToolOutputsAndPoll (completed)', async () => {
    const openai = client();
    const assistant = await openai.beta.assistants.create({ model: 'local-test', instructions: 'Use tools.', tools: [weatherTool] });
    expect(assistant).toMatchObject({ object: 'assistant', model: 'local-test' });
    expect(assistant.id).toMatch(/^asst_[A-Za-z0-9]{24}$/);
    const thread = await openai.beta.threads.create();
    expect(thread.id).toMatch(/^thread_[A-Za-z0-9]{24}$/);
    const message = await openai.beta.threads.messages.create(thread.id, { role: 'user', content: 'Call get_weather for Paris please' });
    expect(message.content[0]).toEqual({ type: 'text', text: { value: 'Call get_weather for Paris please', annotations: [] } });

    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(run.status).toBe('requires_action');
    expect(run.usage).toBeNull();
    const calls = run.required_action!.submit_tool_outputs.tool_calls;
    expect(calls).toHaveLength(1);
    expect(calls[0].id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(calls[0].function).toEqual({ name: 'get_weather', arguments: JSON.stringify({ input: 'Call get_weather for Paris please' }) });

    const done = await openai.beta.threads.runs.submitToolOutputsAndPoll(
      run.id,
      { thread_id: thread.id, tool_outputs: [{ tool_call_id: calls[0].id, output: '21 °C and sunny' }] },
      { pollIntervalMs: 20 },
    );
    expect(done.status).toBe('completed');
    expect(done.required_action).toBeNull();
    expect(done.expires_at).toBeNull();
    expect(done.usage!.total_tokens).toBe(done.usage!.prompt_tokens + done.usage!.completion_tokens);
    expect(done.usage!.completion_tokens).toBeGreaterThan(0);

    const messages = await openai.beta.threads.messages.list(thread.id, { order: 'asc' });
    expect(messages.data.map((m) => m.role)).toEqual(['user', 'assistant']);
    const answer = messages.data[1].content[0];
    expect(answer.type === 'text' && answer.text.value).toContain('21 °C and sunny');

    const steps = await openai.beta.threads.runs.steps.list(run.id, { thread_id: thread.id, order: 'asc' });
    expect(steps.data.map((s) => [s.type, s.status])).toEqual([
      ['tool_calls', 'completed'],
      ['message_creation', 'completed'],
    ]);
    const details = steps.data[0].step_details;
    expect(details.type === 'tool_calls' && details.tool_calls[0]).toMatchObject({ id: calls[0].id, function: { output: '21 °C and sunny' } });
  });

  it('submitToolOutputsStream: finalRun() resolves and the text deltas assemble the answer', async () => {
    const openai = client();
    const assistant = await openai.beta.assistants.create({ model: 'local-test', tools: [weatherTool] });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather in Oslo' }] });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(run.status).toBe('requires_action');
    const callId = run.required_action!.submit_tool_outputs.tool_calls[0].id;

    const stream = openai.beta.threads.runs.submitToolOutputsStream(run.id, {
      thread_id: thread.id,
      tool_outputs: [{ tool_call_id: callId, output: 'snow, -3 °C' }],
    });
    const deltas: string[] = [];
    stream.on('textDelta', (delta) => deltas.push(delta.value ?? ''));
    const finalRun = await stream.finalRun();
    expect(finalRun.status).toBe('completed');
    expect(finalRun.usage).not.toBeNull();
    expect(deltas.length).toBeGreaterThan(1);
    const text = deltas.join('');
    expect(text).toContain('snow, -3 °C');
    const [finalMessage] = await stream.finalMessages();
    const part = finalMessage.content[0];
    expect(part.type === 'text' && part.text.value).toBe(text);
  });

  it('createAndStream of a plain question streams the echo and completes', async () => {
    const openai = client();
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'hello there, local model' }] });
    const stream = openai.beta.threads.runs.stream(thread.id, { assistant_id: assistant.id });
    const names: string[] = [];
    stream.on('event', (e) => names.push(e.event));
    const finalRun = await stream.finalRun();
    expect(finalRun.status).toBe('completed');
    expect(names[0]).toBe('thread.run.created');
    expect(names.at(-1)).toBe('thread.run.completed');
    const [message] = await stream.finalMessages();
    const part = message.content[0];
    expect(part.type === 'text' && part.text.value).toBe('You said: hello there, local model');
  });
});

describe('openai SDK v4 (positional)', () => {
  const client = () => new OpenAI4({ apiKey: TEST_KEY, baseURL, defaultHeaders: headers, maxRetries: 0 });

  it('createAndPoll → submitToolOutputsAndPoll → submitToolOutputsStream', async () => {
    const openai = client();
    const assistant = await openai.beta.assistants.create({ model: 'local-test', tools: [weatherTool] });
    const thread = await openai.beta.threads.create();
    await openai.beta.threads.messages.create(thread.id, { role: 'user', content: 'get_weather for Rome' });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(run.status).toBe('requires_action');
    const callId = run.required_action!.submit_tool_outputs.tool_calls[0].id;
    const done = await openai.beta.threads.runs.submitToolOutputsAndPoll(
      thread.id,
      run.id,
      { tool_outputs: [{ tool_call_id: callId, output: 'hot' }] },
      { pollIntervalMs: 20 },
    );
    expect(done.status).toBe('completed');

    // A second round on the same thread, streamed.
    await openai.beta.threads.messages.create(thread.id, { role: 'user', content: 'and get_weather for Milan?' });
    const second = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(second.status).toBe('requires_action');
    const stream = openai.beta.threads.runs.submitToolOutputsStream(thread.id, second.id, {
      tool_outputs: [{ tool_call_id: second.required_action!.submit_tool_outputs.tool_calls[0].id, output: 'foggy' }],
    });
    let text = '';
    stream.on('textDelta', (delta) => (text += delta.value ?? ''));
    const finalRun = await stream.finalRun();
    expect(finalRun.status).toBe('completed');
    expect(text).toBe('Tool results: get_weather: foggy');
  });
});

describe('portkey-ai SDK', () => {
  it('beta.threads.runs.submitToolOutputs', async () => {
    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: headers, maxRetries: 0 });
    const assistant = await openai.beta.assistants.create({ model: 'local-test', tools: [weatherTool] });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather in Lima' }] });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    const callId = run.required_action!.submit_tool_outputs.tool_calls[0].id;

    const portkey = new Portkey({ apiKey: TEST_KEY, baseURL, virtualKey: 'local' });
    const submitted: any = await portkey.beta.threads.runs.submitToolOutputs(run.id, {
      thread_id: thread.id,
      tool_outputs: [{ tool_call_id: callId, output: 'mild' }],
    } as any);
    expect(submitted.status).toBe('queued');
    expect(submitted.required_action).toBeNull();
    const done = await openai.beta.threads.runs.poll(run.id, { thread_id: thread.id }, { pollIntervalMs: 20 });
    expect(done.status).toBe('completed');
  });
});
