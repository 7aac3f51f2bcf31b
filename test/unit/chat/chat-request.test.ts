import { describe, expect, it } from 'vitest';
import { checkChatBody, contentText, metadataOf, routingOf } from '../../../src/modules/chat/chat-request.js';
import { callerFacts } from '../../../src/http/caller-facts.js';
import { ChunkAccumulator } from '../../../src/modules/chat/chunks.js';
import { LOCAL_EMBEDDING_DIMENSION, localEmbedding } from '../../../src/modules/chat/local-provider.js';

const headers = (h: Record<string, string>) => callerFacts(new Headers(h));
const failure = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    const e = error as { message: string; param: string | null; code: string | null; status: number };
    return { message: e.message, param: e.param, code: e.code, status: e.status };
  }
  throw new Error('expected a failure');
};

describe('routingOf', () => {
  it('the @<virtual-key>/<model> form names both and wins over the header', () => {
    expect(routingOf('@openai-prod/gpt-4o-mini', null, headers({ 'x-gateway-virtual-key': 'local' }))).toEqual({ virtualKey: 'openai-prod', model: 'gpt-4o-mini' });
    expect(routingOf('@vk/org/model-with/slashes', null, undefined)).toEqual({ virtualKey: 'vk', model: 'org/model-with/slashes' });
  });

  it('else the argument, then x-gateway-virtual-key, then x-portkey-virtual-key', () => {
    expect(routingOf('m', 'arg', headers({ 'x-gateway-virtual-key': 'h' }))).toEqual({ virtualKey: 'arg', model: 'm' });
    expect(routingOf('m', null, headers({ 'x-portkey-virtual-key': 'p', 'x-gateway-virtual-key': 'g' }))).toEqual({ virtualKey: 'g', model: 'm' });
    expect(routingOf('m', null, headers({ 'x-portkey-virtual-key': 'p' }))).toEqual({ virtualKey: 'p', model: 'm' });
  });

  it('refuses a missing model, a malformed @ form and a missing virtual key', () => {
    expect(failure(() => routingOf(undefined, null, undefined))).toMatchObject({ status: 400, param: 'model', code: 'missing_required_parameter' });
    for (const bad of ['@', '@vk', '@/m', '@vk/']) expect(failure(() => routingOf(bad, null, undefined))).toMatchObject({ status: 400, param: 'model', code: 'invalid_value' });
    expect(failure(() => routingOf('m', null, headers({})))).toMatchObject({ status: 400, code: 'missing_virtual_key' });
  });
});

describe('metadataOf', () => {
  it('merges the header’s object with the body’s (the body wins)', () => {
    expect(metadataOf({ user: 'bob' }, headers({ 'x-gateway-metadata': '{"user":"alice","team":"blue"}' }))).toEqual({ user: 'bob', team: 'blue' });
    expect(metadataOf(undefined, headers({ 'x-portkey-metadata': '{"env":"prod"}' }))).toEqual({ env: 'prod' });
    expect(metadataOf(null, undefined)).toEqual({});
  });

  it('refuses what is not a JSON object of strings, naming where it came from', () => {
    expect(failure(() => metadataOf(undefined, headers({ 'x-gateway-metadata': 'nope' })))).toMatchObject({ param: 'x-gateway-metadata', message: "Invalid 'x-gateway-metadata' header: expected a JSON object of strings." });
    expect(failure(() => metadataOf({ n: 1 }, undefined))).toMatchObject({ param: 'metadata', message: "Invalid 'metadata': the value of 'n' must be a string." });
    expect(failure(() => metadataOf(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), undefined))).toMatchObject({ message: "Invalid 'metadata': at most 16 keys." });
  });
});

describe('checkChatBody', () => {
  it('reads stream, include_usage, n and the completion budget', () => {
    expect(checkChatBody({ messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true }, n: 2, max_tokens: 5 })).toMatchObject({
      stream: true,
      includeUsage: true,
      n: 2,
      maxCompletionTokens: 5,
    });
    expect(checkChatBody({ messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 7, max_tokens: 5 }).maxCompletionTokens).toBe(7);
  });

  it('names the first bad parameter', () => {
    expect(failure(() => checkChatBody({}))).toMatchObject({ param: 'messages', code: 'missing_required_parameter' });
    expect(failure(() => checkChatBody({ messages: [] }))).toMatchObject({ param: 'messages' });
    expect(failure(() => checkChatBody({ messages: [{ role: 'robot' }] }))).toMatchObject({ param: 'messages[0].role' });
    expect(failure(() => checkChatBody({ messages: [{ role: 'user' }], n: 0 }))).toMatchObject({ param: 'n' });
    expect(failure(() => checkChatBody({ messages: [{ role: 'user' }], max_tokens: -1 }))).toMatchObject({ param: 'max_tokens' });
    expect(failure(() => checkChatBody({ messages: [{ role: 'user' }], stream: 'yes' }))).toMatchObject({ param: 'stream' });
  });

  it('content text: strings, and the text of parts', () => {
    expect(contentText('a')).toBe('a');
    expect(contentText([{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'b' }])).toBe('a\nb');
    expect(contentText(null)).toBe('');
  });
});

describe('ChunkAccumulator', () => {
  it('assembles text, tool calls in fragments and usage into the completion', () => {
    const acc = new ChunkAccumulator();
    const base = { id: 'c1', created: 1, model: 'm' };
    acc.add({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] });
    acc.add({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] } }] });
    acc.add({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }] });
    acc.add({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    acc.add({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(acc.completion()).toEqual({
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, logprobs: null, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
    expect(acc.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });
});

describe('localEmbedding', () => {
  it('is deterministic, unit-length and of the fixed dimension', () => {
    const a = localEmbedding('hello');
    expect(a).toHaveLength(LOCAL_EMBEDDING_DIMENSION);
    expect(localEmbedding('hello')).toEqual(a);
    expect(localEmbedding('hello!')).not.toEqual(a);
    expect(Math.hypot(...a)).toBeCloseTo(1, 12);
  });
});
