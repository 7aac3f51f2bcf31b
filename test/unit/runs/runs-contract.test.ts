import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/errors.js';
import { parseContract } from '../../../src/lib/contract.js';
import {
  checkToolChoice,
  createAssistantContract,
  createMessageContract,
  createRunContract,
  runOptionsOf,
  type Tool,
} from '../../../src/modules/runs/runs.contract.js';

function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    const e = error as BadRequestError;
    return { message: e.message, param: e.param, code: e.code };
  }
  throw new Error('expected a refusal');
}

const defaults = { model: 'm', instructions: 'Be kind.', tools: [], temperature: null, topP: null, responseFormat: 'auto' as const };
const run = (fields: Record<string, unknown>) => parseContract(createRunContract, { assistant_id: 'asst_1', ...fields });
const options = (fields: Record<string, unknown>) => runOptionsOf(run(fields), defaults);
const message = (fields: Record<string, unknown>) => parseContract(createMessageContract, { role: 'user', content: 'hi', ...fields });

describe('metadata', () => {
  it('16 pairs, keys ≤ 64, values ≤ 512 pass; one more of each fails', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect(run({ metadata: sixteen }).metadata).toEqual(sixteen);
    expect(run({ metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } }).metadata).toBeTruthy();
    expect(refusal(() => run({ metadata: { ...sixteen, extra: 'v' } })).code).toBe('object_above_max_properties');
    expect(refusal(() => run({ metadata: { ['k'.repeat(65)]: 'v' } })).param).toBe('metadata');
    expect(refusal(() => run({ metadata: { k: 'v'.repeat(513) } })).param).toBe('metadata.k');
    expect(refusal(() => run({ metadata: [] })).message).toBe("Invalid type for 'metadata': expected an object, but got an array instead.");
    expect(options({ metadata: null }).metadata).toEqual({});
  });
});

describe('tools', () => {
  it('at most 20, well-formed and unique function names', () => {
    const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    expect(run({ tools: tools(20) }).tools).toHaveLength(20);
    expect(refusal(() => run({ tools: tools(21) })).code).toBe('array_above_max_length');
    expect(refusal(() => run({ tools: [{ type: 'retrieval' }] }))).toEqual({
      message: "Invalid value: 'retrieval'. Supported values are: 'code_interpreter', 'file_search' and 'function'.",
      param: 'tools[0].type',
      code: 'invalid_value',
    });
    expect(refusal(() => run({ tools: [{ type: 'function', function: {} }] })).code).toBe('missing_required_parameter');
    expect(refusal(() => run({ tools: [...tools(1), ...tools(1)] })).message).toMatch(/duplicate function name 'f0'/);
    expect(run({ tools: [{ type: 'code_interpreter' }, { type: 'file_search' }] }).tools).toEqual([{ type: 'code_interpreter' }, { type: 'file_search' }]);
  });

  it('a function definition keeps what was given and drops nulls', () => {
    const fn = { name: 'go', description: null, parameters: { type: 'object' }, strict: true };
    expect(run({ tools: [{ type: 'function', function: fn }] }).tools).toEqual([{ type: 'function', function: { name: 'go', parameters: { type: 'object' }, strict: true } }]);
  });
});

describe('forms', () => {
  const fn: Tool[] = [{ type: 'function', function: { name: 'go' } }];
  const choice = (value: unknown, tools: Tool[]) => checkToolChoice(run({ tool_choice: value }).tool_choice ?? 'auto', tools);
  it('tool_choice: none, auto, required, a forced function among the tools', () => {
    expect(choice(undefined, fn)).toBe('auto');
    for (const value of ['none', 'auto', 'required'] as const) expect(choice(value, fn)).toBe(value);
    expect(choice({ type: 'function', function: { name: 'go' } }, fn)).toEqual({ type: 'function', function: { name: 'go' } });
    expect(refusal(() => choice('required', [])).param).toBe('tool_choice');
    expect(refusal(() => choice({ type: 'function' }, fn)).code).toBe('missing_required_parameter');
    expect(refusal(() => choice({ type: 'file_search' }, fn)).param).toBe('tool_choice');
    expect(refusal(() => choice(3, fn)).message).toBe("Invalid type for 'tool_choice': expected a string or an object, but got an integer instead.");
  });

  it('response_format: auto, none, text, json_object, json_schema', () => {
    expect(options({}).responseFormat).toBe('auto');
    expect(run({ response_format: 'none' }).response_format).toBe('none');
    expect(run({ response_format: { type: 'json_object', extra: 1 } }).response_format).toEqual({ type: 'json_object' });
    expect(refusal(() => run({ response_format: { type: 'json_schema' } })).param).toBe('response_format.json_schema');
  });

  it('truncation_strategy: auto, or last_messages with n ≥ 1 within a 32-bit integer', () => {
    expect(options({}).truncationStrategy).toEqual({ type: 'auto', last_messages: null });
    expect(run({ truncation_strategy: { type: 'last_messages', last_messages: 2 } }).truncation_strategy).toEqual({ type: 'last_messages', last_messages: 2 });
    expect(refusal(() => run({ truncation_strategy: { type: 'last_messages', last_messages: 0 } })).code).toBe('integer_below_min_value');
    expect(refusal(() => run({ truncation_strategy: { type: 'auto', last_messages: 3 } })).param).toBe('truncation_strategy.last_messages');
    expect(refusal(() => run({ truncation_strategy: { type: 'last_messages', last_messages: 2147483648 } }))).toEqual({
      message: "Invalid 'truncation_strategy.last_messages': integer above maximum value. Expected a value <= 2147483647, but got 2147483648 instead.",
      param: 'truncation_strategy.last_messages',
      code: 'integer_above_max_value',
    });
  });

  it('content: a string or text parts', () => {
    expect(message({ content: 'hi' }).content).toEqual([{ type: 'text', text: { value: 'hi', annotations: [] } }]);
    expect(message({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: { value: 'b' } }] }).content.map((p) => p.text.value)).toEqual(['a', 'b']);
    expect(refusal(() => message({ content: [{ type: 'image_url', image_url: {} }] })).param).toBe('content[0].type');
    expect(refusal(() => message({ content: '  ' })).code).toBe('empty_string');
    expect(refusal(() => message({ content: 5 })).message).toBe("Invalid type for 'content': expected a string or an array, but got an integer instead.");
  });

  it('parsing is idempotent: a parsed input parses to itself (REST validates, then the resolver parses)', () => {
    const body = {
      assistant_id: 'asst_1',
      tools: [{ type: 'function', function: { name: 'go', description: null } }],
      truncation_strategy: { type: 'auto' },
      additional_messages: [{ role: 'user', content: 'hi' }],
    };
    const once = parseContract(createRunContract, body);
    expect(parseContract(createRunContract, once)).toEqual(once);
    const assistant = parseContract(createAssistantContract, { model: 'm', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } });
    expect(parseContract(createAssistantContract, assistant)).toEqual(assistant);
  });
});

describe('run options', () => {
  it('fall back to the assistant; additional instructions are appended', () => {
    expect(options({ additional_instructions: 'Be brief.' })).toMatchObject({ model: 'm', instructions: 'Be kind.\n\nBe brief.', parallelToolCalls: true, toolChoice: 'auto', temperature: null });
    expect(options({ model: 'x', temperature: 0, top_p: 1 })).toMatchObject({ model: 'x', temperature: 0, topP: 1 });
  });

  it('bounds: temperature 0–2, top_p 0–1, token limits ≥ 256 and within a 32-bit integer', () => {
    expect(refusal(() => run({ temperature: 2.01 })).code).toBe('decimal_above_max_value');
    expect(refusal(() => run({ top_p: -0.01 })).code).toBe('decimal_below_min_value');
    expect(refusal(() => run({ max_prompt_tokens: 255 })).param).toBe('max_prompt_tokens');
    expect(refusal(() => run({ max_completion_tokens: 300.5 })).code).toBe('invalid_type');
    expect(refusal(() => run({ max_completion_tokens: 2 ** 31 })).code).toBe('integer_above_max_value');
    expect(options({ max_prompt_tokens: 256, max_completion_tokens: 256 })).toMatchObject({ maxPromptTokens: 256, maxCompletionTokens: 256 });
  });
});
