/**
 * Chat completions, embeddings and models through a real HTTP server with real clients: the
 * openai SDK v6 and v4 and portkey-ai, on the built-in `local` provider.
 */
import OpenAI from 'openai';
import OpenAI4 from 'openai4';
import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localEmbedding, LOCAL_EMBEDDING_DIMENSION } from '../../src/modules/chat/local-provider.js';
import { countTokens } from '../../src/modules/runs/models/tokens.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';

let t: TestApp;
let baseURL: string;

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { input: { type: 'string' } } } },
};

beforeAll(async () => {
  t = await createTestApp();
  baseURL = `${await t.listen()}/v1`;
});
afterAll(() => t.close());

const v6 = (headers: Record<string, string> = { 'x-gateway-virtual-key': 'local' }) => new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: headers, maxRetries: 0 });

describe('openai SDK v6', () => {
  it('non-streamed: echoes the last user message with usage counted by the tokenizer', async () => {
    const completion = await v6().chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(completion.id).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/);
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'local',
      choices: [{ index: 0, message: { role: 'assistant', content: 'You said: Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    });
    const [prompt, answer] = [countTokens('Hello there'), countTokens('You said: Hello there')];
    expect(completion.usage).toEqual({ prompt_tokens: prompt, completion_tokens: answer, total_tokens: prompt + answer });
  });

  it('streamed with include_usage: several content chunks, then the usage chunk', async () => {
    const stream = await v6().chat.completions.create({
      model: 'local',
      messages: [{ role: 'user', content: 'Tell me something long enough to split' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('You said: Tell me something long enough to split');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(2);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const [prompt, answer] = [countTokens('Tell me something long enough to split'), countTokens(content)];
    expect(last.usage).toEqual({ prompt_tokens: prompt, completion_tokens: answer, total_tokens: prompt + answer });
  });

  it('streamed without include_usage: no usage chunk', async () => {
    const stream = await v6().chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  it('tool-call round trip: the named tool is called, its output answered', async () => {
    const openai = v6();
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Call get_weather for Paris' }];
    const first = await openai.chat.completions.create({ model: 'local', messages, tools: [weatherTool] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ input: 'Call get_weather for Paris' }) } });
    expect(first.choices[0].message.content).toBeNull();
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21 °C and sunny' });
    const second = await openai.chat.completions.create({ model: 'local', messages, tools: [weatherTool] });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Tool results: get_weather: 21 °C and sunny' } });
  });

  it('the stream helper assembles a streamed tool call into the final completion', async () => {
    const runner = v6().chat.completions.stream({ model: 'local', messages: [{ role: 'user', content: 'Use get_weather now' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ input: 'Use get_weather now' }) } });
  });

  it('the @<virtual-key>/<model> form needs no header', async () => {
    const completion = await v6({}).chat.completions.create({ model: '@local/my-model', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.model).toBe('my-model');
    expect(completion.choices[0].message.content).toBe('You said: Hi');
  });

  it('embeddings: deterministic unit vectors, one per input', async () => {
    const result = await v6().embeddings.create({ model: 'local', input: ['alpha', 'beta'], encoding_format: 'float' });
    expect(result.object).toBe('list');
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    for (const [i, text] of ['alpha', 'beta'].entries()) {
      const vector = result.data[i].embedding;
      expect(vector).toHaveLength(LOCAL_EMBEDDING_DIMENSION);
      expect(vector).toEqual(localEmbedding(text));
      expect(Math.hypot(...vector)).toBeCloseTo(1, 10);
    }
    expect(result.data[0].embedding).not.toEqual(result.data[1].embedding);
    const tokens = countTokens('alpha') + countTokens('beta');
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('models.list: the models of the workspace’s enabled providers', async () => {
    const page = await v6().models.list();
    expect(page.data.map((m) => m.id)).toEqual(['@local/local']);
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'local' });
  });
});

describe('openai SDK v4', () => {
  const v4 = () => new OpenAI4({ apiKey: TEST_KEY, baseURL, defaultHeaders: { 'x-gateway-virtual-key': 'local' }, maxRetries: 0 });

  it('non-streamed and streamed with stream_options', async () => {
    const completion = await v4().chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(completion.choices[0].message.content).toBe('You said: Hello there');
    const stream = await v4().chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hello there' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('You said: Hello there');
    expect(usage).toEqual(completion.usage);
  });

  it('tool-call round trip', async () => {
    const messages: any[] = [{ role: 'user', content: 'Call get_weather for Rome' }];
    const first = await v4().chat.completions.create({ model: 'local', messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls![0];
    expect(call.function.name).toBe('get_weather');
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'warm' });
    const second = await v4().chat.completions.create({ model: 'local', messages, tools: [weatherTool] });
    expect(second.choices[0].message.content).toBe('Tool results: get_weather: warm');
  });

  it('embeddings and models', async () => {
    const result = await v4().embeddings.create({ model: 'local', input: 'alpha' });
    // v4 asks for base64 (float32) and decodes it.
    expect(result.data[0].embedding).toEqual(Array.from(new Float32Array(localEmbedding('alpha'))));
    const models = await v4().models.list();
    expect(models.data.map((m) => m.id)).toEqual(['@local/local']);
  });
});

describe('portkey-ai SDK', () => {
  it('chat.completions.create with a virtual key', async () => {
    const portkey = new Portkey({ apiKey: TEST_KEY, baseURL, virtualKey: 'local' });
    const completion = await portkey.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hi from portkey' }] });
    expect(completion.choices[0].message?.content).toBe('You said: Hi from portkey');
  });
});
