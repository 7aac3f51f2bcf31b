import { encode } from 'gpt-tokenizer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ModelError,
  TOOL_CALL_ID,
  type ChatMessage,
  type ModelEvent,
  type ModelRequest,
} from '../../../src/modules/runs/models/model.js';
import { OpenAIChatModel } from '../../../src/modules/runs/models/openai-chat.js';
import {
  errorReply,
  startFakeOpenAI,
  textReply,
  toolCallsReply,
  type FakeOpenAI,
} from '../../helpers/fake-openai-server.js';
import { modelRequest } from '../../helpers/model-request.js';

const API_KEY = 'sk-test-SECRET-0123456789';
let fake: FakeOpenAI;
let model: OpenAIChatModel;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  model = new OpenAIChatModel({ baseUrl: `${fake.url}/`, apiKey: API_KEY, timeoutMs: 300 });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi there' },
  ];
  return modelRequest({ model: 'gpt-4o-mini', messages, ...overrides });
}

async function collect(req: ModelRequest, adapter = model): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of adapter.stream(req)) events.push(event);
  return events;
}

async function failure(req: ModelRequest, adapter = model): Promise<ModelError> {
  try {
    await collect(req, adapter);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).not.toContain(API_KEY);
    return error as ModelError;
  }
  throw new Error('expected the stream to fail');
}

describe('openai chat adapter: answers', () => {
  it('streams text deltas as they arrive and reports upstream usage', async () => {
    fake.setScript(textReply(['Hel', 'lo', ' world'], { usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } }));
    expect(await collect(request())).toEqual([
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'text_delta', text: ' world' },
      { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } },
    ]);
  });

  it('counts tokens itself when the upstream sends no usage', async () => {
    fake.setScript(textReply(['The answer', ' is 42.'], { usage: null }));
    const events = await collect(request());
    const prompt = encode('Be brief.').length + encode('Hi there').length;
    const completion = encode('The answer is 42.').length;
    expect(events.at(-1)).toEqual({
      type: 'done',
      finishReason: 'stop',
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    });
  });

  it('maps finish_reason length', async () => {
    fake.setScript(textReply(['cut'], { finishReason: 'length' }));
    expect((await collect(request())).at(-1)).toMatchObject({ type: 'done', finishReason: 'length' });
  });

  it('assembles tool calls split across chunks into one event', async () => {
    const calls = [
      { id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      { id: 'call_abcdefghijklmnopqrstuvwx', name: 'lookup', arguments: '{"q":"Eiffel tower height"}' },
    ];
    fake.setScript(toolCallsReply(calls, { splitInto: 4, usage: { prompt_tokens: 30, completion_tokens: 25, total_tokens: 55 } }));
    const events = await collect(request({ tools: [{ name: 'get_weather' }, { name: 'lookup' }] }));
    expect(events).toEqual([
      { type: 'tool_calls', calls },
      { type: 'done', finishReason: 'tool_calls', usage: { prompt_tokens: 30, completion_tokens: 25, total_tokens: 55 } },
    ]);
  });

  it('replaces tool call ids that do not follow the contract shape', async () => {
    fake.setScript(toolCallsReply([{ id: 'toolu_01', name: 'lookup', arguments: '{"q":1}' }]));
    const [event] = await collect(request({ tools: [{ name: 'lookup' }] }));
    if (event.type !== 'tool_calls') throw new Error('expected tool calls');
    expect(event.calls[0].id).toMatch(TOOL_CALL_ID);
    expect(event.calls[0]).toMatchObject({ name: 'lookup', arguments: '{"q":1}' });
  });

  it('drops tool calls cut off by the token limit and finishes with length', async () => {
    fake.setScript(toolCallsReply([{ id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', name: 'lookup', arguments: '{"q":"par' }], { finishReason: 'length' }));
    const events = await collect(request({ tools: [{ name: 'lookup' }] }));
    expect(events.map((e) => e.type)).toEqual(['done']);
    expect(events[0]).toMatchObject({ finishReason: 'length' });
  });
});

describe('openai chat adapter: request mapping', () => {
  it('sends a streamed chat completion with every set option', async () => {
    fake.setScript(textReply(['ok']));
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', tool_call_id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', content: 'rain' },
      { role: 'assistant', content: 'It rains.' },
    ];
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    await collect(
      request({
        messages,
        tools: [{ name: 'get_weather', description: 'Weather by city', parameters }, { name: 'noop' }],
        toolChoice: { type: 'function', function: { name: 'get_weather' } },
        parallelToolCalls: false,
        maxCompletionTokens: 512,
        maxPromptTokens: 1000,
        temperature: 0.2,
        topP: 0.9,
        responseFormat: { type: 'json_object' },
      }),
    );
    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent.clientClosed).toBe(false);
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.accept).toBe('text/event-stream');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', content: 'rain' },
        { role: 'assistant', content: 'It rains.' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters } },
        { type: 'function', function: { name: 'noop' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_completion_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
      response_format: { type: 'json_object' },
    });
  });

  it('leaves out tool options and unset knobs when there are no tools', async () => {
    fake.setScript(textReply(['ok']));
    await collect(request({ toolChoice: 'none' }));
    expect(fake.requests[0].body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi there' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('sends no authorization header without an API key', async () => {
    fake.setScript(textReply(['ok']));
    await collect(request(), new OpenAIChatModel({ baseUrl: fake.url, apiKey: '', timeoutMs: 1000 }));
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });
});

describe('openai chat adapter: failures', () => {
  it('HTTP 500 is a server_error with the upstream message, key redacted', async () => {
    fake.setScript(errorReply(500, `Upstream exploded while using ${API_KEY}`));
    const error = await failure(request());
    expect(error.code).toBe('server_error');
    expect(error.status).toBe(500);
    expect(error.message).toBe('The model provider answered HTTP 500: Upstream exploded while using [redacted]');
  });

  it('HTTP 429 is rate_limit_exceeded', async () => {
    fake.setScript(errorReply(429, 'Rate limit reached for requests', { 'retry-after': '1' }));
    const error = await failure(request());
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.status).toBe(429);
    expect(error.message).toBe("The model provider's rate limit was reached: Rate limit reached for requests");
  });

  it('HTTP 401 says nothing about the credentials beyond the status', async () => {
    fake.setScript(errorReply(401, `Incorrect API key provided: ${API_KEY.slice(0, 8)}****`));
    const error = await failure(request());
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('The model provider rejected the credentials (HTTP 401).');
  });

  it('a slow answer times out as server_error', async () => {
    fake.setScript({ ...textReply(['late']), headerDelayMs: 2_000 });
    const started = Date.now();
    const error = await failure(request());
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('The model provider did not respond within 300 ms.');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('a stream that stalls between chunks times out too', async () => {
    const piece = (content: string) => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    fake.setScript({ sse: [piece('one'), piece('two')], hang: true });
    const seen: ModelEvent[] = [];
    const started = Date.now();
    const error = await (async () => {
      try {
        for await (const event of model.stream(request())) seen.push(event);
      } catch (e) {
        return e as ModelError;
      }
      throw new Error('expected a timeout');
    })();
    expect(seen).toEqual([
      { type: 'text_delta', text: 'one' },
      { type: 'text_delta', text: 'two' },
    ]);
    expect(error).toBeInstanceOf(ModelError);
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('The model provider did not respond within 300 ms.');
    expect(Date.now() - started).toBeLessThan(1_500);
    await until(() => fake.requests[0].clientClosed);
    expect(fake.requests[0].clientClosed).toBe(true);
  });

  it('a slow but steady stream does not time out', async () => {
    fake.setScript(textReply(['a', 'b', 'c', 'd', 'e'], { chunkDelayMs: 100 }));
    const events = await collect(request());
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e.type === 'text_delta' ? e.text : ''))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a chunk that is not JSON is a malformed stream', async () => {
    fake.setScript({ sse: ['{"choices":[{"delta":{"content":"hi"}}]}', 'not json', '[DONE]'] });
    const error = await failure(request());
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('The model provider sent a malformed stream (a chunk is not JSON).');
  });

  it('a chunk whose read fields have the wrong type is a malformed stream', async () => {
    const misshapen = [
      [],
      { choices: 'hi' },
      { choices: [null] },
      { choices: [{ delta: { content: 42 } }] },
      { choices: [{ delta: [] }] },
      { choices: [{ delta: { tool_calls: [{ index: -1 }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0.5 }] } }] },
      { choices: [{ delta: { tool_calls: [{ function: { name: 7 } }] } }] },
      { choices: [{ delta: { tool_calls: {} } }] },
      { choices: [{ finish_reason: 1 }] },
      { usage: { prompt_tokens: '11', completion_tokens: 3 } },
      { usage: { prompt_tokens: 11 } },
      { usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 'x' } },
      { error: 'overloaded' },
      { error: { message: 5 } },
    ];
    for (const chunk of misshapen) {
      fake.setScript({ sse: [chunk, '[DONE]'] });
      const error = await failure(request());
      expect(error.message, JSON.stringify(chunk)).toBe('The model provider sent a malformed stream (unexpected chunk shape).');
    }
  });

  it('nulls and keys it does not read are accepted in a chunk', async () => {
    fake.setScript({
      sse: [
        { id: 'x', choices: null, usage: null, error: null, extra: { any: 1 } },
        { choices: [{ index: 0, delta: null, finish_reason: null, logprobs: null }] },
        { choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: null, refusal: null } }] },
        { choices: [{ index: 0, delta: { content: 'ok', tool_calls: [{ index: null, id: null, type: 'function', function: null }] } }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: null } }] }, finish_reason: 'stop' }] },
        { choices: [], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: null } },
        '[DONE]',
      ],
    });
    const events = await collect(request());
    expect(events[0]).toEqual({ type: 'text_delta', text: 'ok' });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls', usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } });
  });

  it('a stream that ends before any finish is an error', async () => {
    fake.setScript({ sse: [{ choices: [{ index: 0, delta: { content: 'half' }, finish_reason: null }] }] });
    const error = await failure(request());
    expect(error.message).toBe('The model provider closed the stream before the answer was complete.');
  });

  it('an error object inside the stream is a server_error', async () => {
    fake.setScript({ sse: [{ error: { message: 'overloaded' } }] });
    expect((await failure(request())).message).toBe('The model provider reported an error: overloaded');
  });

  it('a JSON answer to a stream request is refused', async () => {
    fake.setScript({ json: { choices: [] } });
    expect((await failure(request())).message).toBe('The model provider did not answer with an event stream.');
  });

  it('an unreachable provider is a server_error without the URL', async () => {
    const closed = await startFakeOpenAI();
    const url = closed.url;
    await closed.close();
    const error = await failure(request(), new OpenAIChatModel({ baseUrl: url, apiKey: API_KEY, timeoutMs: 1000 }));
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('The model provider could not be reached (ECONNREFUSED).');
  });
});

/** Polls briefly: the server notices a closed socket a moment after the client closes it. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('openai chat adapter: abort', () => {
  it('an abort mid-stream rejects with the signal reason and closes the upstream request', async () => {
    fake.setScript(textReply(['a', 'b', 'c', 'd'], { chunkDelayMs: 50 }));
    const controller = new AbortController();
    const reason = new Error('cancelled by user');
    const seen: ModelEvent[] = [];
    await expect(
      (async () => {
        for await (const event of model.stream(request({ signal: controller.signal }))) {
          seen.push(event);
          controller.abort(reason);
        }
      })(),
    ).rejects.toBe(reason);
    expect(seen).toEqual([{ type: 'text_delta', text: 'a' }]);
    await until(() => fake.requests[0].clientClosed);
    expect(fake.requests[0].clientClosed).toBe(true);
  });

  it('an abort while waiting for headers rejects with the signal reason', async () => {
    fake.setScript({ ...textReply(['late']), headerDelayMs: 1_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(collect(request({ signal: controller.signal }), new OpenAIChatModel({ baseUrl: fake.url, apiKey: API_KEY, timeoutMs: 5_000 }))).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('stopping early releases the connection', async () => {
    fake.setScript(textReply(['a', 'b', 'c'], { chunkDelayMs: 30 }));
    for await (const event of model.stream(request())) {
      expect(event).toEqual({ type: 'text_delta', text: 'a' });
      break;
    }
    await until(() => fake.requests[0].clientClosed);
    expect(fake.requests[0].clientClosed).toBe(true);
    fake.setScript(textReply(['next']));
    expect((await collect(request()))[0]).toEqual({ type: 'text_delta', text: 'next' });
  });

  it('answers read to their end keep their connection for the next calls (keep-alive)', async () => {
    for (let i = 0; i < 10; i++) {
      fake.setScript(textReply(['Hi', ' there']));
      expect((await collect(request())).at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    }
    // A call sent while the last answer's end is still arriving may take a second connection; a
    // connection closed after each answer would make it ten.
    expect(new Set(fake.requests.map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
  });
});
