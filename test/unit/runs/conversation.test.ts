import { describe, expect, it } from 'vitest';
import { buildConversation, functionTools, modelToolChoice } from '../../../src/modules/runs/conversation.js';

const auto = { type: 'auto' as const, last_messages: null };

describe('buildConversation', () => {
  it('orders messages and tool rounds by when they happened, instructions first', async () => {
    const result = await buildConversation({
      instructions: 'sys',
      messages: [
        { ordinal: 3, role: 'assistant', text: 'done' },
        { ordinal: 1, role: 'user', text: 'hi' },
      ],
      toolRounds: [{ ordinal: 2, calls: [{ id: 'call_1', name: 'f', arguments: '{}', output: 'out' }] }],
      truncation: auto,
      maxPromptTokens: null,
    });
    expect(result).toEqual({
      ok: true,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'f', arguments: '{}' }] },
        { role: 'tool', content: 'out', tool_call_id: 'call_1' },
        { role: 'assistant', content: 'done' },
      ],
    });
  });

  it('last_messages keeps the last n messages and later tool rounds', async () => {
    const result = await buildConversation({
      instructions: '',
      messages: [1, 2, 3].map((n) => ({ ordinal: n * 10, role: 'user' as const, text: `m${n}` })),
      toolRounds: [{ ordinal: 5, calls: [{ id: 'c', name: 'f', arguments: '{}', output: 'old' }] }],
      truncation: { type: 'last_messages', last_messages: 2 },
      maxPromptTokens: null,
    });
    expect(result.ok && result.messages.map((m) => m.content)).toEqual(['m2', 'm3']);
  });

  it('max_prompt_tokens drops the oldest units; a single unit too large fails', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    const fits = await buildConversation({
      instructions: '',
      messages: [
        { ordinal: 1, role: 'user', text: words(300) },
        { ordinal: 2, role: 'user', text: 'short question' },
      ],
      toolRounds: [],
      truncation: auto,
      maxPromptTokens: 256,
    });
    expect(fits.ok && fits.messages.map((m) => m.content)).toEqual(['short question']);
    const tooBig = await buildConversation({ instructions: '', messages: [{ ordinal: 1, role: 'user', text: words(400) }], toolRounds: [], truncation: auto, maxPromptTokens: 256 });
    expect(tooBig).toEqual({ ok: false, reason: 'max_prompt_tokens' });
  });
});

it('function tools and tool choice in model terms', () => {
  expect(functionTools([{ type: 'code_interpreter' }, { type: 'function', function: { name: 'f', description: 'd' } }])).toEqual([{ name: 'f', description: 'd' }]);
  expect(modelToolChoice({ type: 'file_search' })).toBe('auto');
  expect(modelToolChoice('required')).toBe('required');
});
