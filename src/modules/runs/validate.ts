/**
 * Validation of run, assistant, thread and message inputs (interface.md §8), shared by both front
 * doors: REST bodies check only JSON types, GraphQL takes JSON for the polymorphic fields, and
 * every limit and form is checked here, once. Messages and codes follow OpenAI's wording; `param`
 * is the wire (snake_case) path of the offending input. Pure: no ORM, no GraphQL.
 */
import { BadRequestError } from '../../errors.js';
import type { TextContent } from './message.entity.js';

export const MAX_TOOLS = 20;
export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY = 64;
export const MAX_METADATA_VALUE = 512;
export const MIN_TOKEN_LIMIT = 256;
export const MAX_INSTRUCTIONS = 256_000;
export const MAX_MESSAGE_LENGTH = 256_000;
export const MAX_ADDITIONAL_MESSAGES = 32;
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface FunctionDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean | null;
}

export type Tool =
  | { type: 'code_interpreter' }
  | { type: 'file_search'; file_search?: Record<string, unknown> }
  | { type: 'function'; function: FunctionDefinition };

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } } | { type: 'file_search' };

export type ResponseFormat =
  | 'auto'
  | 'none'
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: Record<string, unknown> };

export type TruncationStrategy = { type: 'auto'; last_messages: null } | { type: 'last_messages'; last_messages: number };

function fail(message: string, param: string, code: string): never {
  throw new BadRequestError(message, { param, code });
}

/** `an integer`, `a string`, … as OpenAI names the type of a value. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

function wrongType(param: string, expected: string, value: unknown): never {
  fail(`Invalid type for '${param}': expected ${expected}, but got ${describeValue(value)} instead.`, param, 'invalid_type');
}

function quoteList(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

function invalidValue(param: string, value: unknown, supported: readonly string[]): never {
  const shown = typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
  fail(`Invalid value: ${shown}. Supported values are: ${quoteList(supported)}.`, param, 'invalid_value');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireString(value: unknown, param: string, options: { max?: number; allowEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') wrongType(param, 'a string', value);
  if (!options.allowEmpty && value.trim() === '') {
    fail(`Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`, param, 'empty_string');
  }
  if (options.max !== undefined && value.length > options.max) {
    fail(
      `Invalid '${param}': string too long. Expected a string with maximum length ${options.max}, but got a string with length ${value.length} instead.`,
      param,
      'string_above_max_length',
    );
  }
  return value;
}

export function optionalString(value: unknown, param: string, max?: number): string | null {
  if (value === undefined || value === null) return null;
  return requireString(value, param, { max, allowEmpty: true });
}

/** Up to 16 string pairs, keys ≤ 64 and values ≤ 512 characters. */
export function validateMetadata(value: unknown, param = 'metadata'): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) wrongType(param, 'an object', value);
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_PAIRS) {
    fail(
      `Invalid '${param}': too many properties. Expected an object with at most ${MAX_METADATA_PAIRS} properties, but got an object with ${entries.length} properties instead.`,
      param,
      'object_above_max_properties',
    );
  }
  const out: Record<string, string> = {};
  for (const [key, raw] of entries) {
    if (key.length > MAX_METADATA_KEY) {
      fail(
        `Invalid '${param}': key too long. Expected a key with maximum length ${MAX_METADATA_KEY}, but got a key with length ${key.length} instead.`,
        param,
        'string_above_max_length',
      );
    }
    out[key] = requireString(raw, `${param}.${key}`, { max: MAX_METADATA_VALUE, allowEmpty: true });
  }
  return out;
}

function validateTool(value: unknown, param: string): Tool {
  if (!isPlainObject(value)) wrongType(param, 'an object', value);
  const type = value.type;
  if (type === undefined) fail(`Missing required parameter: '${param}.type'.`, `${param}.type`, 'missing_required_parameter');
  if (type === 'code_interpreter') return { type };
  if (type === 'file_search') {
    return value.file_search === undefined ? { type } : { type, file_search: isPlainObject(value.file_search) ? value.file_search : wrongType(`${param}.file_search`, 'an object', value.file_search) };
  }
  if (type !== 'function') invalidValue(`${param}.type`, type, ['code_interpreter', 'file_search', 'function']);
  const fn = value.function;
  if (fn === undefined) fail(`Missing required parameter: '${param}.function'.`, `${param}.function`, 'missing_required_parameter');
  if (!isPlainObject(fn)) wrongType(`${param}.function`, 'an object', fn);
  if (fn.name === undefined) fail(`Missing required parameter: '${param}.function.name'.`, `${param}.function.name`, 'missing_required_parameter');
  const name = requireString(fn.name, `${param}.function.name`);
  if (!FUNCTION_NAME.test(name)) {
    fail(
      `Invalid '${param}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.`,
      `${param}.function.name`,
      'invalid_value',
    );
  }
  const definition: FunctionDefinition = { name };
  if (fn.description !== undefined && fn.description !== null) definition.description = requireString(fn.description, `${param}.function.description`, { allowEmpty: true, max: 1024 });
  if (fn.parameters !== undefined && fn.parameters !== null) {
    if (!isPlainObject(fn.parameters)) wrongType(`${param}.function.parameters`, 'an object', fn.parameters);
    definition.parameters = fn.parameters;
  }
  if (fn.strict !== undefined && fn.strict !== null) {
    if (typeof fn.strict !== 'boolean') wrongType(`${param}.function.strict`, 'a boolean', fn.strict);
    definition.strict = fn.strict;
  }
  return { type: 'function', function: definition };
}

/** At most 20 tools; function names unique and well-formed. */
export function validateTools(value: unknown, param = 'tools'): Tool[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) wrongType(param, 'an array', value);
  if (value.length > MAX_TOOLS) {
    fail(
      `Invalid '${param}': array too long. Expected an array with maximum length ${MAX_TOOLS}, but got an array with length ${value.length} instead.`,
      param,
      'array_above_max_length',
    );
  }
  const tools = value.map((tool, i) => validateTool(tool, `${param}[${i}]`));
  const seen = new Set<string>();
  tools.forEach((tool, i) => {
    if (tool.type !== 'function') return;
    if (seen.has(tool.function.name)) {
      fail(`Invalid '${param}[${i}].function.name': duplicate function name '${tool.function.name}'.`, `${param}[${i}].function.name`, 'invalid_value');
    }
    seen.add(tool.function.name);
  });
  return tools;
}

/** A number in [min, max] (both inclusive), or null when absent. */
export function validateNumberRange(value: unknown, param: string, min: number, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) wrongType(param, 'a number', value);
  if (value < min) {
    fail(`Invalid '${param}': decimal below minimum value. Expected a value >= ${min}, but got ${value} instead.`, param, 'decimal_below_min_value');
  }
  if (value > max) {
    fail(`Invalid '${param}': decimal above maximum value. Expected a value <= ${max}, but got ${value} instead.`, param, 'decimal_above_max_value');
  }
  return value;
}

/** `max_prompt_tokens` / `max_completion_tokens`: an integer ≥ 256, or null. */
export function validateTokenLimit(value: unknown, param: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value)) wrongType(param, 'an integer', value);
  if (value < MIN_TOKEN_LIMIT) {
    fail(
      `Invalid '${param}': integer below minimum value. Expected a value >= ${MIN_TOKEN_LIMIT}, but got ${value} instead.`,
      param,
      'integer_below_min_value',
    );
  }
  return value;
}

export function validateToolChoice(value: unknown, tools: readonly Tool[], param = 'tool_choice'): ToolChoice {
  if (value === undefined || value === null) return 'auto';
  if (typeof value === 'string') {
    if (value === 'none' || value === 'auto' || value === 'required') {
      if (value === 'required' && tools.length === 0) {
        fail(`Invalid '${param}': 'required' needs at least one tool in 'tools'.`, param, 'invalid_value');
      }
      return value;
    }
    invalidValue(param, value, ['none', 'auto', 'required']);
  }
  if (!isPlainObject(value)) wrongType(param, 'a string or an object', value);
  if (value.type === 'file_search') {
    if (!tools.some((t) => t.type === 'file_search')) {
      fail(`Invalid '${param}': the file_search tool is not among the run's tools.`, param, 'invalid_value');
    }
    return { type: 'file_search' };
  }
  if (value.type !== 'function') invalidValue(`${param}.type`, value.type, ['function', 'file_search']);
  const fn = value.function;
  if (!isPlainObject(fn)) {
    if (fn === undefined) fail(`Missing required parameter: '${param}.function'.`, `${param}.function`, 'missing_required_parameter');
    wrongType(`${param}.function`, 'an object', fn);
  }
  if (fn.name === undefined) fail(`Missing required parameter: '${param}.function.name'.`, `${param}.function.name`, 'missing_required_parameter');
  const name = requireString(fn.name, `${param}.function.name`);
  if (!tools.some((t) => t.type === 'function' && t.function.name === name)) {
    fail(`Invalid '${param}.function.name': no function named '${name}' among the run's tools.`, `${param}.function.name`, 'invalid_value');
  }
  return { type: 'function', function: { name } };
}

export function validateResponseFormat(value: unknown, param = 'response_format'): ResponseFormat {
  if (value === undefined || value === null) return 'auto';
  if (typeof value === 'string') {
    if (value === 'auto' || value === 'none') return value;
    invalidValue(param, value, ['auto', 'none']);
  }
  if (!isPlainObject(value)) wrongType(param, 'a string or an object', value);
  if (value.type === 'text' || value.type === 'json_object') return { type: value.type };
  if (value.type === 'json_schema') {
    const schema = value.json_schema;
    if (schema === undefined) fail(`Missing required parameter: '${param}.json_schema'.`, `${param}.json_schema`, 'missing_required_parameter');
    if (!isPlainObject(schema)) wrongType(`${param}.json_schema`, 'an object', schema);
    if (schema.name === undefined) fail(`Missing required parameter: '${param}.json_schema.name'.`, `${param}.json_schema.name`, 'missing_required_parameter');
    requireString(schema.name, `${param}.json_schema.name`, { max: 64 });
    return { type: 'json_schema', json_schema: schema };
  }
  invalidValue(`${param}.type`, value.type, ['text', 'json_object', 'json_schema']);
}

export function validateTruncationStrategy(value: unknown, param = 'truncation_strategy'): TruncationStrategy {
  if (value === undefined || value === null) return { type: 'auto', last_messages: null };
  if (!isPlainObject(value)) wrongType(param, 'an object', value);
  if (value.type === undefined) fail(`Missing required parameter: '${param}.type'.`, `${param}.type`, 'missing_required_parameter');
  if (value.type === 'auto') {
    if (value.last_messages !== undefined && value.last_messages !== null) {
      fail(`Invalid '${param}.last_messages': only allowed when '${param}.type' is 'last_messages'.`, `${param}.last_messages`, 'invalid_value');
    }
    return { type: 'auto', last_messages: null };
  }
  if (value.type !== 'last_messages') invalidValue(`${param}.type`, value.type, ['auto', 'last_messages']);
  const n = value.last_messages;
  if (n === undefined || n === null) fail(`Missing required parameter: '${param}.last_messages'.`, `${param}.last_messages`, 'missing_required_parameter');
  if (typeof n !== 'number' || !Number.isInteger(n)) wrongType(`${param}.last_messages`, 'an integer', n);
  if (n < 1) {
    fail(`Invalid '${param}.last_messages': integer below minimum value. Expected a value >= 1, but got ${n} instead.`, `${param}.last_messages`, 'integer_below_min_value');
  }
  return { type: 'last_messages', last_messages: n };
}

export function validateBoolean(value: unknown, param: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') wrongType(param, 'a boolean', value);
  return value;
}

export function validateRole(value: unknown, param = 'role'): 'user' | 'assistant' {
  if (value === undefined) fail(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  if (value === 'user' || value === 'assistant') return value;
  if (typeof value !== 'string') wrongType(param, 'a string', value);
  invalidValue(param, value, ['user', 'assistant']);
}

/** A message's content: a non-empty string, or an array of text parts (`{type: "text", text}`). */
export function validateContent(value: unknown, param = 'content'): TextContent[] {
  if (value === undefined) fail(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  if (typeof value === 'string') {
    return [textPart(requireString(value, param, { max: MAX_MESSAGE_LENGTH }))];
  }
  if (!Array.isArray(value)) wrongType(param, 'a string or an array', value);
  if (value.length === 0) {
    fail(`Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`, param, 'empty_array');
  }
  return value.map((part, i) => {
    const at = `${param}[${i}]`;
    if (!isPlainObject(part)) wrongType(at, 'an object', part);
    if (part.type !== 'text') invalidValue(`${at}.type`, part.type, ['text']);
    const text = isPlainObject(part.text) ? part.text.value : part.text;
    return textPart(requireString(text, `${at}.text`, { max: MAX_MESSAGE_LENGTH }));
  });
}

export function textPart(value: string): TextContent {
  return { type: 'text', text: { value, annotations: [] } };
}

/** Everything about a run that its request may set (the assistant fills in what is omitted). */
export interface RunOptionsInput {
  model?: unknown;
  instructions?: unknown;
  additional_instructions?: unknown;
  tools?: unknown;
  metadata?: unknown;
  temperature?: unknown;
  top_p?: unknown;
  max_prompt_tokens?: unknown;
  max_completion_tokens?: unknown;
  truncation_strategy?: unknown;
  tool_choice?: unknown;
  parallel_tool_calls?: unknown;
  response_format?: unknown;
}

export interface AssistantDefaults {
  model: string;
  instructions: string | null;
  tools: Tool[];
  temperature: number | null;
  topP: number | null;
  responseFormat: ResponseFormat;
}

export interface RunOptions {
  model: string;
  instructions: string;
  tools: Tool[];
  metadata: Record<string, string>;
  temperature: number | null;
  topP: number | null;
  maxPromptTokens: number | null;
  maxCompletionTokens: number | null;
  truncationStrategy: TruncationStrategy;
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  responseFormat: ResponseFormat;
}

/** A run's settings: the request's values, checked, over the assistant's. */
export function validateRunOptions(input: RunOptionsInput, assistant: AssistantDefaults): RunOptions {
  const model = input.model === undefined || input.model === null ? assistant.model : requireString(input.model, 'model', { max: 256 });
  const base = input.instructions === undefined || input.instructions === null ? (assistant.instructions ?? '') : requireString(input.instructions, 'instructions', { max: MAX_INSTRUCTIONS, allowEmpty: true });
  const extra = optionalString(input.additional_instructions, 'additional_instructions', MAX_INSTRUCTIONS);
  const tools = input.tools === undefined || input.tools === null ? assistant.tools : validateTools(input.tools);
  const temperature = validateNumberRange(input.temperature, 'temperature', 0, 2);
  const topP = validateNumberRange(input.top_p, 'top_p', 0, 1);
  return {
    model,
    instructions: extra ? (base ? `${base}\n\n${extra}` : extra) : base,
    tools,
    metadata: validateMetadata(input.metadata),
    temperature: temperature ?? assistant.temperature,
    topP: topP ?? assistant.topP,
    maxPromptTokens: validateTokenLimit(input.max_prompt_tokens, 'max_prompt_tokens'),
    maxCompletionTokens: validateTokenLimit(input.max_completion_tokens, 'max_completion_tokens'),
    truncationStrategy: validateTruncationStrategy(input.truncation_strategy),
    toolChoice: validateToolChoice(input.tool_choice, tools),
    parallelToolCalls: validateBoolean(input.parallel_tool_calls, 'parallel_tool_calls', true),
    responseFormat: input.response_format === undefined || input.response_format === null ? assistant.responseFormat : validateResponseFormat(input.response_format),
  };
}

export interface AssistantInput {
  model?: unknown;
  name?: unknown;
  description?: unknown;
  instructions?: unknown;
  tools?: unknown;
  tool_resources?: unknown;
  metadata?: unknown;
  temperature?: unknown;
  top_p?: unknown;
  response_format?: unknown;
}

export function validateAssistant(input: AssistantInput) {
  if (input.model === undefined || input.model === null) fail("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  const toolResources = input.tool_resources ?? {};
  if (!isPlainObject(toolResources)) wrongType('tool_resources', 'an object', toolResources);
  return {
    model: requireString(input.model, 'model', { max: 256 }),
    name: optionalString(input.name, 'name', 256),
    description: optionalString(input.description, 'description', 512),
    instructions: optionalString(input.instructions, 'instructions', MAX_INSTRUCTIONS),
    tools: validateTools(input.tools),
    toolResources,
    metadata: validateMetadata(input.metadata),
    temperature: validateNumberRange(input.temperature, 'temperature', 0, 2),
    topP: validateNumberRange(input.top_p, 'top_p', 0, 1),
    responseFormat: validateResponseFormat(input.response_format),
  };
}

export interface MessageInput {
  role?: unknown;
  content?: unknown;
  attachments?: unknown;
  metadata?: unknown;
}

export function validateMessage(input: MessageInput, param = '') {
  const at = (name: string) => (param ? `${param}.${name}` : name);
  const attachments = input.attachments ?? [];
  if (!Array.isArray(attachments)) wrongType(at('attachments'), 'an array', attachments);
  return {
    role: validateRole(input.role, at('role')),
    content: validateContent(input.content, at('content')),
    attachments,
    metadata: validateMetadata(input.metadata, at('metadata')),
  };
}

export function validateMessages(value: unknown, param: string, max = MAX_ADDITIONAL_MESSAGES) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) wrongType(param, 'an array', value);
  if (value.length > max) {
    fail(
      `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${value.length} instead.`,
      param,
      'array_above_max_length',
    );
  }
  return value.map((m, i) => {
    if (!isPlainObject(m)) wrongType(`${param}[${i}]`, 'an object', m);
    return validateMessage(m, `${param}[${i}]`);
  });
}

export function validateToolResources(value: unknown, param = 'tool_resources'): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) wrongType(param, 'an object', value);
  return value;
}
