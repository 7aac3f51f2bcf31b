/**
 * What the run executor needs from a model, whatever serves it: a request in chat terms and a
 * stream of events. Adapters translate; they hold no run state.
 */
import { randomInt } from 'node:crypto';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it (may be invalid JSON from a real model). */
  arguments: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** On assistant messages that called tools. */
  tool_calls?: ToolCall[];
  /** On tool messages: the call this output answers. */
  tool_call_id?: string;
}

export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: object;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface ModelRequest {
  model: string;
  /** Instructions already first as a system message. */
  messages: ChatMessage[];
  tools: FunctionTool[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  maxCompletionTokens: number | null;
  /** Enforced by the executor when it builds `messages`; adapters do not send it upstream. */
  maxPromptTokens: number | null;
  temperature: number | null;
  topP: number | null;
  /** The run's response_format as stored (`"auto"`, `{type: "json_object"}`, …). */
  responseFormat: unknown;
  /** Aborting rejects the stream with `signal.reason` (not a ModelError): the caller asked for it. */
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * Text deltas come first (possibly none), then at most one `tool_calls` event with every call
 * assembled, then exactly one `done`. A stream that ends without `done` has failed.
 */
export type ModelEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_calls'; calls: ToolCall[] }
  | { type: 'done'; finishReason: FinishReason; usage: Usage };

export interface ModelAdapter {
  stream(req: ModelRequest): AsyncIterable<ModelEvent>;
}

/** The codes a run step's `last_error` may carry (the OpenAI document's enum). */
export type ModelErrorCode = 'server_error' | 'rate_limit_exceeded';

/** The codes a run's `last_error` may carry: a step's, and `invalid_prompt` (an answer or prompt refused). */
export type RunErrorCode = ModelErrorCode | 'invalid_prompt';

/**
 * A run's `last_error.code` when a check refused its answer (an output guardrail). A code of the
 * run object, not an HTTP error code, so it is not in the error registry.
 */
export const REFUSED_ANSWER: RunErrorCode = 'invalid_prompt';

/**
 * A step's `last_error` from its run's: the step enum has no `invalid_prompt`, so a refusal fails
 * the step with `server_error` and the same message.
 */
export function stepErrorOf(runError: { code: string; message: string } | null): { code: ModelErrorCode; message: string } | null {
  if (runError === null) return null;
  return { code: runError.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error', message: runError.message };
}

/**
 * A model failure the executor records in `last_error`. The message is shown to API callers, so
 * it never carries credentials, upstream URLs or stack traces.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
  /** Upstream HTTP status, when there was one (for logs and metrics, not for callers). */
  readonly status: number | undefined;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `call_` + 24 random alphanumerics, the contract's id shape for tool calls. */
export function newToolCallId(): string {
  let id = 'call_';
  for (let i = 0; i < 24; i++) id += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return id;
}

export const TOOL_CALL_ID = /^call_[A-Za-z0-9]{24}$/;

/** Rejects with the signal's own reason, so callers can tell their abort from a model failure. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
