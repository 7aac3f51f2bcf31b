/**
 * Adapter for any OpenAI-compatible `POST /chat/completions` endpoint, always streamed. It maps
 * the request, turns the SSE chunks into ModelEvents and every upstream failure into a
 * ModelError whose message is safe to show to API callers.
 */
import {
  TOOL_CALL_ID,
  ModelError,
  abortReason,
  newToolCallId,
  throwIfAborted,
  type ChatMessage,
  type FinishReason,
  type ModelAdapter,
  type ModelEvent,
  type ModelRequest,
  type ToolCall,
  type Usage,
} from './model.js';
import { followAbort, safeUpstreamText, unreachableMessage, UpstreamDeadline, upstreamHeaders } from '../../../lib/upstream-http.js';
import { postUpstream, type UpstreamResponse } from '../../../lib/upstream-post.js';
import { countPromptTokens, countTokensAsync, countToolCallTokens } from './tokens.js';

export interface OpenAIChatOptions {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Sent as `OpenAI-Organization` when set (the integration's `openai_organization`). */
  organization?: string | null;
  /** Longest wait for the response headers and for each next piece of the stream. */
  timeoutMs: number;
}

/** What is read of a streamed chunk; anything else in it is ignored. */
interface Chunk {
  choices?: { delta?: { content?: string | null; tool_calls?: ToolCallDelta[] | null } | null; finish_reason?: string | null }[] | null;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number | null } | null;
  error?: { message?: string | null } | null;
}
interface ToolCallDelta {
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export class OpenAIChatModel implements ModelAdapter {
  /** The endpoint and the request headers: the same for every call. */
  private readonly url: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: OpenAIChatOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.headers = upstreamHeaders(options, { accept: 'text/event-stream' });
  }

  async *stream(req: ModelRequest): AsyncGenerator<ModelEvent> {
    throwIfAborted(req.signal);
    const { apiKey, timeoutMs } = this.options;
    const controller = new AbortController();
    const unfollow = req.signal ? followAbort(req.signal, controller) : () => {};

    const deadline = new UpstreamDeadline(timeoutMs, () => controller.abort());
    const waitFor = <T>(promise: Promise<T>): Promise<T> => deadline.wait(promise);
    /** The answer was read to its end (`[DONE]`): its connection goes back to the agent. */
    let complete = false;

    try {
      const response = await waitFor(postUpstream(this.url, this.headers, JSON.stringify(toChatCompletionBody(req)), controller.signal));
      if (response.status < 200 || response.status >= 300) throw await httpError(response, apiKey, waitFor);
      if (!(response.header('content-type') ?? '').includes('text/event-stream')) {
        throw new ModelError('server_error', 'The model provider did not answer with an event stream.');
      }

      let text = '';
      const slots: { id: string; name: string; arguments: string }[] = [];
      let finish: string | null = null;
      let usage: Usage | null = null;
      let sawDone = false;

      for await (const data of sseData(() => waitFor(response.read()))) {
        if (data === '[DONE]') {
          sawDone = true;
          complete = true;
          response.drain();
          break;
        }
        const chunk = parseChunk(data);
        if (chunk.error) {
          const detail = safeDetail(chunk.error.message, apiKey);
          throw new ModelError('server_error', `The model provider reported an error${detail}`);
        }
        if (chunk.usage) {
          const { prompt_tokens, completion_tokens, total_tokens } = chunk.usage;
          usage = { prompt_tokens, completion_tokens, total_tokens: total_tokens ?? prompt_tokens + completion_tokens };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const content = choice.delta?.content;
        if (content) {
          text += content;
          yield { type: 'text_delta', text: content };
        }
        // Streamed tool calls arrive in fragments keyed by index: id and name once, arguments in pieces.
        (choice.delta?.tool_calls ?? []).forEach((part, position) => {
          const slot = (slots[part.index ?? position] ??= { id: '', name: '', arguments: '' });
          if (part.id) slot.id = part.id;
          if (part.function?.name && !slot.name) slot.name = part.function.name;
          if (part.function?.arguments) slot.arguments += part.function.arguments;
        });
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      if (!sawDone && finish === null) {
        throw new ModelError('server_error', 'The model provider closed the stream before the answer was complete.');
      }

      // Calls cut off by the token limit have partial arguments: the run ends incomplete instead.
      const calls = finish === 'length' ? [] : assembleCalls(slots);
      const finishReason: FinishReason = finish === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';
      if (calls.length > 0) yield { type: 'tool_calls', calls };
      usage ??= await estimateUsage(req.messages, text, calls);
      yield { type: 'done', finishReason, usage };
    } catch (error) {
      if (req.signal?.aborted) throw abortReason(req.signal);
      if (deadline.timedOut) throw new ModelError('server_error', deadline.message, { cause: error });
      if (error instanceof ModelError) throw error;
      throw new ModelError('server_error', unreachableMessage(error), { cause: error });
    } finally {
      unfollow();
      // Closes the connection of an answer not read to its end (an error, a consumer that stopped).
      if (!complete) controller.abort();
    }
  }
}

/** The upstream request body. Optional knobs are sent only when set, as the API defaults them. */
export function toChatCompletionBody(req: ModelRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: req.model,
    messages: req.messages.map(toWireMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  // tool_choice and parallel_tool_calls without tools are rejected by OpenAI.
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description !== undefined && { description: t.description }),
        ...(t.parameters !== undefined && { parameters: t.parameters }),
      },
    }));
    body.tool_choice = req.toolChoice;
    body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.maxCompletionTokens !== null) body.max_completion_tokens = req.maxCompletionTokens;
  if (req.temperature !== null) body.temperature = req.temperature;
  if (req.topP !== null) body.top_p = req.topP;
  // The run's "auto" is the absence of a format in chat completions; objects pass as they are.
  const format = req.responseFormat;
  if (typeof format === 'object' && format !== null && typeof (format as { type?: unknown }).type === 'string') {
    body.response_format = format;
  }
  return body;
}

function toWireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  if (m.role === 'assistant' && m.tool_calls?.length) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.tool_calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  }
  return { role: m.role, content: m.content };
}

/** `data:` payloads of an SSE byte stream; comments, `event:` and `id:` lines are ignored. */
export async function* sseData(
  read: () => Promise<ReadableStreamReadResult<Uint8Array>>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for (;;) {
    const { done, value } = await read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const lines = buffer.split('\n');
    buffer = done ? '' : (lines.pop() ?? '');
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    if (done) {
      if (data.length > 0) yield data.join('\n');
      return;
    }
  }
}

function parseChunk(data: string): Chunk {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new ModelError('server_error', 'The model provider sent a malformed stream (a chunk is not JSON).');
  }
  if (!isChunk(json)) {
    throw new ModelError('server_error', 'The model provider sent a malformed stream (unexpected chunk shape).');
  }
  return json;
}

// Lenient on purpose: compatible servers send nulls and extra keys; only what is read is checked.
// Plain checks rather than a schema: a stream's every chunk passes here (a zod parse of each cost
// more than the rest of reading it).
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullish = (value: unknown) => value === null || value === undefined;
const nullishOr = (value: unknown, check: (value: unknown) => boolean) => isNullish(value) || check(value);
const isString = (value: unknown) => typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number';
const nullishArrayOf = (value: unknown, check: (item: unknown) => boolean) => isNullish(value) || (Array.isArray(value) && value.every(check));

const isToolCallDelta = (part: unknown) =>
  isObject(part) &&
  nullishOr(part.index, (index) => Number.isInteger(index) && (index as number) >= 0) &&
  nullishOr(part.id, isString) &&
  nullishOr(part.function, (fn) => isObject(fn) && nullishOr(fn.name, isString) && nullishOr(fn.arguments, isString));

const isChoice = (choice: unknown) =>
  isObject(choice) &&
  nullishOr(choice.delta, (delta) => isObject(delta) && nullishOr(delta.content, isString) && nullishArrayOf(delta.tool_calls, isToolCallDelta)) &&
  nullishOr(choice.finish_reason, isString);

function isChunk(json: unknown): json is Chunk {
  return (
    isObject(json) &&
    nullishArrayOf(json.choices, isChoice) &&
    nullishOr(json.usage, (usage) => isObject(usage) && isNumber(usage.prompt_tokens) && isNumber(usage.completion_tokens) && nullishOr(usage.total_tokens, isNumber)) &&
    nullishOr(json.error, (error) => isObject(error) && nullishOr(error.message, isString))
  );
}

function assembleCalls(slots: readonly { id: string; name: string; arguments: string }[]): ToolCall[] {
  return slots
    .filter((slot) => slot !== undefined)
    .map((slot) => {
      if (!slot.name) throw new ModelError('server_error', 'The model provider sent a tool call without a name.');
      // Our ids are part of the contract (`call_` + 24 alphanumerics); a foreign id is replaced,
      // which is safe because the conversation sent back upstream carries our id on both sides.
      const id = TOOL_CALL_ID.test(slot.id) ? slot.id : newToolCallId();
      return { id, name: slot.name, arguments: slot.arguments || '{}' };
    });
}

async function estimateUsage(messages: readonly ChatMessage[], text: string, calls: readonly ToolCall[]): Promise<Usage> {
  const prompt = await countPromptTokens(messages);
  const completion = (await countTokensAsync(text)) + (await countToolCallTokens(calls));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

async function httpError(
  response: UpstreamResponse,
  apiKey: string,
  waitFor: <T>(p: Promise<T>) => Promise<T>,
): Promise<ModelError> {
  const { status } = response;
  if (status === 401 || status === 403) {
    // Upstream messages about credentials often quote part of the key: say nothing more.
    return new ModelError('server_error', `The model provider rejected the credentials (HTTP ${status}).`, { status });
  }
  let message: string | null | undefined;
  try {
    const body = await waitFor(response.text());
    message = (JSON.parse(body) as { error?: { message?: string } })?.error?.message;
  } catch {
    message = undefined;
  }
  const detail = safeDetail(message, apiKey);
  if (status === 429) {
    return new ModelError('rate_limit_exceeded', `The model provider's rate limit was reached${detail}`, { status });
  }
  return new ModelError('server_error', `The model provider answered HTTP ${status}${detail}`, { status });
}

/** `: <upstream message>` as src/lib/upstream-http.ts makes it safe to show, or a bare full stop. */
function safeDetail(message: string | null | undefined, apiKey: string): string {
  const text = safeUpstreamText(message, [apiKey]);
  return text ? `: ${text}` : '.';
}
