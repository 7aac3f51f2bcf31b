import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/errors.js';
import {
  validateContent,
  validateMetadata,
  validateRunOptions,
  validateToolChoice,
  validateTools,
  validateTruncationStrategy,
  validateResponseFormat,
} from '../../../src/modules/runs/validate.js';

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

describe('metadata', () => {
  it('16 pairs, keys ≤ 64, values ≤ 512 pass; one more of each fails', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect(validateMetadata(sixteen)).toEqual(sixteen);
    expect(validateMetadata({ ['k'.repeat(64)]: 'v'.repeat(512) })).toBeTruthy();
    expect(refusal(() => validateMetadata({ ...sixteen, extra: 'v' })).code).toBe('object_above_max_properties');
    expect(refusal(() => validateMetadata({ ['k'.repeat(65)]: 'v' })).param).toBe('metadata');
    expect(refusal(() => validateMetadata({ k: 'v'.repeat(513) })).param).toBe('metadata.k');
    expect(refusal(() => validateMetadata([])).message).toBe("Invalid type for 'metadata': expected an object, but got an array instead.");
    expect(validateMetadata(null)).toEqual({});
  });
});

describe('tools', () => {
  it('at most 20, well-formed and unique function names', () => {
    const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    expect(validateTools(tools(20))).toHaveLength(20);
    expect(refusal(() => validateTools(tools(21))).code).toBe('array_above_max_length');
    expect(refusal(() => validateTools([{ type: 'retrieval' }]))).toEqual({
      message: "Invalid value: 'retrieval'. Supported values are: 'code_interpreter', 'file_search' and 'function'.",
      param: 'tools[0].type',
      code: 'invalid_value',
    });
    expect(refusal(() => validateTools([{ type: 'function', function: {} }])).code).toBe('missing_required_parameter');
    expect(refusal(() => validateTools([...tools(1), ...tools(1)])).message).toMatch(/duplicate function name 'f0'/);
    expect(validateTools([{ type: 'code_interpreter' }, { type: 'file_search' }])).toEqual([{ type: 'code_interpreter' }, { type: 'file_search' }]);
  });
});

describe('forms', () => {
  const fn = [{ type: 'function' as const, function: { name: 'go' } }];
  it('tool_choice: none, auto, required, a forced function among the tools', () => {
    expect(validateToolChoice(undefined, fn)).toBe('auto');
    for (const choice of ['none', 'auto', 'required'] as const) expect(validateToolChoice(choice, fn)).toBe(choice);
    expect(validateToolChoice({ type: 'function', function: { name: 'go' } }, fn)).toEqual({ type: 'function', function: { name: 'go' } });
    expect(refusal(() => validateToolChoice('required', [])).param).toBe('tool_choice');
    expect(refusal(() => validateToolChoice({ type: 'function' }, fn)).code).toBe('missing_required_parameter');
    expect(refusal(() => validateToolChoice({ type: 'file_search' }, fn)).param).toBe('tool_choice');
    expect(refusal(() => validateToolChoice(3, fn)).message).toBe("Invalid type for 'tool_choice': expected a string or an object, but got an integer instead.");
  });

  it('response_format: auto, none, text, json_object, json_schema', () => {
    expect(validateResponseFormat(undefined)).toBe('auto');
    expect(validateResponseFormat('none')).toBe('none');
    expect(validateResponseFormat({ type: 'json_object', extra: 1 })).toEqual({ type: 'json_object' });
    expect(refusal(() => validateResponseFormat({ type: 'json_schema' })).param).toBe('response_format.json_schema');
  });

  it('truncation_strategy: auto, or last_messages with n ≥ 1', () => {
    expect(validateTruncationStrategy(undefined)).toEqual({ type: 'auto', last_messages: null });
    expect(validateTruncationStrategy({ type: 'last_messages', last_messages: 2 })).toEqual({ type: 'last_messages', last_messages: 2 });
    expect(refusal(() => validateTruncationStrategy({ type: 'last_messages', last_messages: 0 })).code).toBe('integer_below_min_value');
    expect(refusal(() => validateTruncationStrategy({ type: 'auto', last_messages: 3 })).param).toBe('truncation_strategy.last_messages');
  });

  it('content: a string or text parts', () => {
    expect(validateContent('hi')).toEqual([{ type: 'text', text: { value: 'hi', annotations: [] } }]);
    expect(validateContent([{ type: 'text', text: 'a' }, { type: 'text', text: { value: 'b' } }]).map((p) => p.text.value)).toEqual(['a', 'b']);
    expect(refusal(() => validateContent([{ type: 'image_url', image_url: {} }])).param).toBe('content[0].type');
    expect(refusal(() => validateContent('  ')).code).toBe('empty_string');
  });
});

describe('run options', () => {
  it('fall back to the assistant; additional instructions are appended', () => {
    const options = validateRunOptions({ additional_instructions: 'Be brief.' }, defaults);
    expect(options).toMatchObject({ model: 'm', instructions: 'Be kind.\n\nBe brief.', parallelToolCalls: true, toolChoice: 'auto', temperature: null });
    expect(validateRunOptions({ model: 'x', temperature: 0, top_p: 1 }, defaults)).toMatchObject({ model: 'x', temperature: 0, topP: 1 });
  });

  it('bounds: temperature 0–2, top_p 0–1, token limits ≥ 256', () => {
    expect(refusal(() => validateRunOptions({ temperature: 2.01 }, defaults)).code).toBe('decimal_above_max_value');
    expect(refusal(() => validateRunOptions({ top_p: -0.01 }, defaults)).code).toBe('decimal_below_min_value');
    expect(refusal(() => validateRunOptions({ max_prompt_tokens: 255 }, defaults)).param).toBe('max_prompt_tokens');
    expect(refusal(() => validateRunOptions({ max_completion_tokens: 300.5 }, defaults)).code).toBe('invalid_type');
    expect(validateRunOptions({ max_prompt_tokens: 256, max_completion_tokens: 256 }, defaults)).toMatchObject({ maxPromptTokens: 256, maxCompletionTokens: 256 });
  });
});
