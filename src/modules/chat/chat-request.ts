/**
 * What the gateway reads of an OpenAI-style model request (chat completions, embeddings), in
 * wire terms. Pure: no ORM, no runtime. Only what routing, enforcement and the `local` provider
 * need is checked; every other field travels to the upstream untouched.
 */
import type { CallerFacts } from '../../context.js';
import { BadRequestError, missingParameter } from '../../errors.js';

export type WireBody = Record<string, unknown>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(message: string, param: string, code = 'invalid_value'): never {
  throw new BadRequestError(message, { param, code });
}

export interface Routing {
  /** The provider slug in the caller's workspace. */
  virtualKey: string;
  /** The model name the upstream is asked for (without any `@<virtual-key>/` prefix). */
  model: string;
}

/**
 * The virtual key and the upstream model: `"model": "@<virtual-key>/<model>"` names both (so a
 * plain SDK needs no extra header), else the virtual key comes from the header or argument.
 */
export function routingOf(model: unknown, explicitVirtualKey: string | null | undefined, caller: Pick<CallerFacts, 'virtualKey'> | undefined): Routing {
  if (typeof model !== 'string' || model.trim() === '') throw missingParameter('model');
  if (model.startsWith('@')) {
    const slash = model.indexOf('/');
    if (slash <= 1 || slash === model.length - 1) {
      fail(`Invalid model '${model}': the virtual-key form is '@<virtual-key>/<model>', e.g. '@openai-prod/gpt-4o-mini'.`, 'model');
    }
    return { virtualKey: model.slice(1, slash), model: model.slice(slash + 1) };
  }
  const virtualKey = explicitVirtualKey || caller?.virtualKey;
  if (!virtualKey) {
    throw new BadRequestError(
      "Missing virtual key: send the x-gateway-virtual-key header with the slug of a provider in your workspace (for example `local`), or write the model as '@<virtual-key>/<model>'.",
      { code: 'missing_virtual_key' },
    );
  }
  return { virtualKey, model };
}

const MAX_METADATA_KEYS = 16;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 512;

/** Checks one metadata object (from the header or the body); `param` names where it came from. */
function metadataObject(value: unknown, param: string): Record<string, string> {
  if (!isRecord(value)) fail(`Invalid '${param}': expected a JSON object of strings.`, param);
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_KEYS) fail(`Invalid '${param}': at most ${MAX_METADATA_KEYS} keys.`, param);
  for (const [key, v] of entries) {
    if (typeof v !== 'string') fail(`Invalid '${param}': the value of '${key}' must be a string.`, param);
    if (key.length > MAX_METADATA_KEY || v.length > MAX_METADATA_VALUE) {
      fail(`Invalid '${param}': keys are at most ${MAX_METADATA_KEY} and values at most ${MAX_METADATA_VALUE} characters.`, param);
    }
  }
  return value as Record<string, string>;
}

/**
 * The request's metadata: the `x-gateway-metadata` (or `x-portkey-metadata`) header's JSON object
 * merged with the body's `metadata` (the body wins on a shared key). Policies match on it.
 */
export function metadataOf(bodyMetadata: unknown, caller: Pick<CallerFacts, 'metadataHeader'> | undefined): Record<string, string> {
  const header = caller?.metadataHeader;
  let fromHeader: Record<string, string> = {};
  if (header) {
    const { name } = header;
    let parsed: unknown;
    try {
      parsed = JSON.parse(header.value);
    } catch {
      fail(`Invalid '${name}' header: expected a JSON object of strings.`, name);
    }
    fromHeader = metadataObject(parsed, name);
  }
  const fromBody = bodyMetadata === undefined || bodyMetadata === null ? {} : metadataObject(bodyMetadata, 'metadata');
  return { ...fromHeader, ...fromBody };
}

/** The text of a message's `content`: a string, or the `text` of its parts (images have none). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

export interface ChatMessageWire {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }>;
  tool_call_id?: unknown;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** The chat request's shape checks, with the OpenAI-style `param` of the first problem. */
export function checkChatBody(body: WireBody): { messages: ChatMessageWire[]; stream: boolean; includeUsage: boolean; n: number; maxCompletionTokens: number | null } {
  const { messages } = body;
  if (messages === undefined) throw missingParameter('messages');
  if (!Array.isArray(messages) || messages.length === 0) fail("Invalid 'messages': expected a non-empty array of messages.", 'messages');
  messages.forEach((m, i) => {
    if (!isRecord(m) || typeof m.role !== 'string' || !ROLES.has(m.role)) {
      fail(`Invalid 'messages[${i}].role': expected one of system, developer, user, assistant, tool.`, `messages[${i}].role`);
    }
  });
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') fail("Invalid 'stream': expected a boolean.", 'stream');
  const options = body.stream_options;
  if (options !== undefined && options !== null && !isRecord(options)) fail("Invalid 'stream_options': expected an object.", 'stream_options');
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 128) fail("Invalid 'n': expected an integer from 1 to 128.", 'n');
  const maxCompletionTokens = positiveIntOrNull(body.max_completion_tokens, 'max_completion_tokens') ?? positiveIntOrNull(body.max_tokens, 'max_tokens');
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) fail("Invalid 'tools': expected an array.", 'tools');
  return {
    messages: messages as ChatMessageWire[],
    stream: body.stream === true,
    includeUsage: isRecord(options) && options.include_usage === true,
    n: n as number,
    maxCompletionTokens,
  };
}

function positiveIntOrNull(value: unknown, param: string): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || (value as number) < 1) fail(`Invalid '${param}': expected a positive integer.`, param);
  return value as number;
}

/** The texts the model reads from a chat request (guardrails check them; estimates count them). */
export function promptTexts(messages: readonly ChatMessageWire[]): string[] {
  return messages.map((m) => contentText(m.content));
}

/** The embeddings request's inputs: a string or an array of strings. */
export function checkEmbeddingsBody(body: WireBody): string[] {
  const { input } = body;
  if (input === undefined || input === null) throw missingParameter('input');
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.length <= 2048 && input.every((s) => typeof s === 'string')) return input as string[];
  return fail("Invalid 'input': expected a string or a non-empty array of at most 2048 strings.", 'input');
}
