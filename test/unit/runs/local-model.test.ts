import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { LocalModel } from '../../../src/modules/runs/models/local-model.js';
import {
  TOOL_CALL_ID,
  type ChatMessage,
  type ModelEvent,
  type ModelRequest,
} from '../../../src/modules/runs/models/model.js';
import { modelRequest } from '../../helpers/model-request.js';

const tools = [
  { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object' } },
  { name: 'lookup' },
  { name: 'send-mail' },
];

function request(messages: ChatMessage[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return modelRequest({ model: 'local', messages, ...overrides });
}

const system: ChatMessage = { role: 'system', content: 'You are terse.' };
const user = (content: string): ChatMessage => ({ role: 'user', content });

async function collect(req: ModelRequest, model = new LocalModel()): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of model.stream(req)) events.push(event);
  return events;
}

function textOf(events: ModelEvent[]): string {
  return events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');
}

function callsOf(events: ModelEvent[]) {
  const event = events.find((e) => e.type === 'tool_calls');
  return event?.type === 'tool_calls' ? event.calls : [];
}

function done(events: ModelEvent[]) {
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error('stream did not end with done');
  return last;
}

const promptTokens = (messages: ChatMessage[]) => messages.reduce((n, m) => n + encode(m.content).length, 0);

describe('local model: echo', () => {
  it('echoes the latest user message in several deltas with real token counts', async () => {
    const messages = [system, user('first question'), { role: 'assistant' as const, content: 'You said: first question' }, user('What is the capital of France, and why is it Paris?')];
    const events = await collect(request(messages));
    const answer = 'You said: What is the capital of France, and why is it Paris?';
    expect(textOf(events)).toBe(answer);
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas.length).toBe(Math.ceil(encode(answer).length / 3));
    expect(deltas.length).toBeGreaterThan(3);
    expect(done(events)).toEqual({
      type: 'done',
      finishReason: 'stop',
      usage: {
        prompt_tokens: promptTokens(messages),
        completion_tokens: encode(answer).length,
        total_tokens: promptTokens(messages) + encode(answer).length,
      },
    });
    expect(done(events).usage.prompt_tokens).toBeGreaterThan(20);
  });

  it('is deterministic', async () => {
    const req = request([user('same every time')]);
    expect(await collect(req)).toEqual(await collect(req));
  });

  it('honours tokensPerDelta', async () => {
    const events = await collect(request([user('one two three four five six')]), new LocalModel({ tokensPerDelta: 1 }));
    const answer = 'You said: one two three four five six';
    expect(events.filter((e) => e.type === 'text_delta')).toHaveLength(encode(answer).length);
    expect(textOf(events)).toBe(answer);
  });

  it('keeps multi-byte characters whole across deltas and counts special-token text as text', async () => {
    const text = 'héllo 👋🏽 世界 <|endoftext|>';
    const events = await collect(request([user(text)]), new LocalModel({ tokensPerDelta: 1 }));
    expect(textOf(events)).toBe(`You said: ${text}`);
    for (const e of events) if (e.type === 'text_delta') expect(e.text).not.toContain('\uFFFD');
    expect(done(events).usage.prompt_tokens).toBe(encode(text, { disallowedSpecial: new Set() }).length);
  });

  it('echoes even when tools exist but none is named', async () => {
    const events = await collect(request([user('nothing relevant here')], { tools }));
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe('You said: nothing relevant here');
  });

  it('wraps the answer in a JSON object in JSON mode', async () => {
    const events = await collect(request([user('hi "there"')], { responseFormat: { type: 'json_object' } }));
    expect(JSON.parse(textOf(events))).toEqual({ message: 'You said: hi "there"' });
  });
});

describe('local model: truncation', () => {
  it('cuts the answer at maxCompletionTokens and finishes with length', async () => {
    const long = 'word '.repeat(400).trim();
    const full = encode(`You said: ${long}`);
    const events = await collect(request([user(long)], { maxCompletionTokens: 256 }));
    const text = textOf(events);
    expect(encode(text)).toEqual(full.slice(0, 256));
    expect(text.startsWith('You said: word word')).toBe(true);
    expect(done(events).finishReason).toBe('length');
    expect(done(events).usage.completion_tokens).toBe(256);
  });

  it('does not cut an answer that fits exactly', async () => {
    const answer = 'You said: short';
    const events = await collect(request([user('short')], { maxCompletionTokens: encode(answer).length }));
    expect(textOf(events)).toBe(answer);
    expect(done(events).finishReason).toBe('stop');
  });
});

describe('local model: tool selection', () => {
  const ask = (text: string, overrides: Partial<ModelRequest> = {}) => collect(request([system, user(text)], { tools, ...overrides }));

  it('calls every tool named as a whole word, in tool order, with the message as input', async () => {
    const text = 'Please lookup the get_weather for Paris and send-mail it.';
    const events = await ask(text);
    const calls = callsOf(events);
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'lookup', 'send-mail']);
    for (const call of calls) {
      expect(call.id).toMatch(TOOL_CALL_ID);
      expect(call.arguments).toBe(JSON.stringify({ input: text }));
      expect(JSON.parse(call.arguments)).toEqual({ input: text });
    }
    expect(new Set(calls.map((c) => c.id)).size).toBe(3);
    expect(events.map((e) => e.type)).toEqual(['tool_calls', 'done']);
    const completion = calls.reduce((n, c) => n + encode(c.name).length + encode(c.arguments).length, 0);
    expect(done(events)).toEqual({
      type: 'done',
      finishReason: 'tool_calls',
      usage: {
        prompt_tokens: promptTokens([system, user(text)]),
        completion_tokens: completion,
        total_tokens: promptTokens([system, user(text)]) + completion,
      },
    });
  });

  it('ignores names glued to other word characters', async () => {
    const events = await ask('lookups and get_weather_now and xlookup');
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe('You said: lookups and get_weather_now and xlookup');
  });

  it('calls only the first match when parallel tool calls are off', async () => {
    const calls = callsOf(await ask('send-mail then lookup', { parallelToolCalls: false }));
    expect(calls.map((c) => c.name)).toEqual(['lookup']);
  });

  it('calls nothing with toolChoice none, even when a tool is named', async () => {
    const events = await ask('lookup this', { toolChoice: 'none' });
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe('You said: lookup this');
    expect(done(events).finishReason).toBe('stop');
  });

  it('required calls the first tool when none is named', async () => {
    const calls = callsOf(await ask('hello', { toolChoice: 'required' }));
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([['get_weather', '{"input":"hello"}']]);
  });

  it('required with names calls the named tools', async () => {
    const calls = callsOf(await ask('lookup and send-mail', { toolChoice: 'required' }));
    expect(calls.map((c) => c.name)).toEqual(['lookup', 'send-mail']);
  });

  it('a forced function is the only call, named or not', async () => {
    const forced = { type: 'function' as const, function: { name: 'send-mail' } };
    expect(callsOf(await ask('hello', { toolChoice: forced })).map((c) => c.name)).toEqual(['send-mail']);
    expect(callsOf(await ask('lookup and get_weather', { toolChoice: forced })).map((c) => c.name)).toEqual(['send-mail']);
  });
});

describe('local model: tool results', () => {
  it('answers with every submitted output verbatim, not with new calls', async () => {
    const question = 'lookup and get_weather please';
    const messages: ChatMessage[] = [
      system,
      user(question),
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_aaaaaaaaaaaaaaaaaaaaaaaa', name: 'get_weather', arguments: '{}' },
          { id: 'call_bbbbbbbbbbbbbbbbbbbbbbbb', name: 'lookup', arguments: '{}' },
        ],
      },
      { role: 'tool', tool_call_id: 'call_aaaaaaaaaaaaaaaaaaaaaaaa', content: '{"temp": 21, "sky": "clear"}' },
      { role: 'tool', tool_call_id: 'call_bbbbbbbbbbbbbbbbbbbbbbbb', content: 'forty-two; really' },
    ];
    const events = await collect(request(messages, { tools, toolChoice: 'required' }));
    expect(callsOf(events)).toEqual([]);
    const answer = 'Tool results: get_weather: {"temp": 21, "sky": "clear"}; lookup: forty-two; really';
    expect(textOf(events)).toBe(answer);
    expect(done(events).finishReason).toBe('stop');
    expect(done(events).usage.completion_tokens).toBe(encode(answer).length);
  });

  it('falls back to the call id when no assistant message names the call', async () => {
    const events = await collect(request([user('x'), { role: 'tool', tool_call_id: 'call_zzz', content: 'out' }]));
    expect(textOf(events)).toBe('Tool results: call_zzz: out');
  });

  it('a new user message after tool results starts over', async () => {
    const events = await collect(
      request([user('lookup'), { role: 'tool', tool_call_id: 'call_1', content: 'out' }, user('thanks lookup')], { tools }),
    );
    expect(callsOf(events).map((c) => c.name)).toEqual(['lookup']);
  });
});

describe('local model: streaming and abort', () => {
  it('spaces deltas by delayMs', async () => {
    const model = new LocalModel({ delayMs: 20, tokensPerDelta: 1 });
    const started = Date.now();
    const events = await collect(request([user('a b c')]), model);
    const deltas = events.filter((e) => e.type === 'text_delta').length;
    expect(deltas).toBe(encode('You said: a b c').length);
    expect(Date.now() - started).toBeGreaterThanOrEqual(deltas * 20 - 5);
  });

  it('stops with the signal reason when aborted mid-stream', async () => {
    const controller = new AbortController();
    const model = new LocalModel({ delayMs: 10, tokensPerDelta: 1 });
    const seen: ModelEvent[] = [];
    const reason = new Error('run cancelled');
    await expect(
      (async () => {
        for await (const event of model.stream(request([user('one two three four five')], { signal: controller.signal }))) {
          seen.push(event);
          if (seen.length === 2) controller.abort(reason);
        }
      })(),
    ).rejects.toBe(reason);
    expect(seen).toHaveLength(2);
  });

  it('refuses to start with an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(collect(request([user('x')], { signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
  });
});
