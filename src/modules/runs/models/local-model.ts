/**
 * The built-in `local` model: deterministic, offline, and rich enough to drive every run path
 * (text, tool calls, tool results, truncation, streaming) in tests and demos.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  newToolCallId,
  throwIfAborted,
  type ChatMessage,
  type FunctionTool,
  type ModelAdapter,
  type ModelEvent,
  type ModelRequest,
  type ToolCall,
} from './model.js';
import { countPromptTokens, countToolCallTokens, decodePieces, encodeTextAsync } from './tokens.js';

export interface LocalModelOptions {
  /** Pause before each text delta, so tests can observe a stream in flight. Default 0. */
  delayMs?: number;
  /** Tokens per text delta. Default 3. */
  tokensPerDelta?: number;
}

export class LocalModel implements ModelAdapter {
  private readonly delayMs: number;
  private readonly tokensPerDelta: number;

  constructor(options: LocalModelOptions = {}) {
    this.delayMs = options.delayMs ?? 0;
    this.tokensPerDelta = Math.max(1, options.tokensPerDelta ?? 3);
  }

  async *stream(req: ModelRequest): AsyncGenerator<ModelEvent> {
    const { signal } = req;
    throwIfAborted(signal);
    const promptTokens = await countPromptTokens(req.messages);
    const lastUser = req.messages.findLastIndex((m) => m.role === 'user');
    const userText = lastUser >= 0 ? req.messages[lastUser].content : '';
    const toolResults = req.messages.slice(lastUser + 1).filter((m) => m.role === 'tool');

    // Tool results win over tool selection: the user message that triggered the calls still
    // names the tools, and answering with calls again would loop forever.
    if (toolResults.length === 0) {
      const calls = selectToolCalls(req, userText);
      if (calls.length > 0) {
        const completion = await countToolCallTokens(calls);
        yield { type: 'tool_calls', calls };
        yield { type: 'done', finishReason: 'tool_calls', usage: usage(promptTokens, completion) };
        return;
      }
    }

    let answer =
      toolResults.length > 0 ? describeToolResults(req.messages, toolResults) : `You said: ${userText}`;
    if (isJsonMode(req.responseFormat)) answer = JSON.stringify({ message: answer });

    const all = await encodeTextAsync(answer);
    const limit = req.maxCompletionTokens;
    const truncated = limit !== null && all.length > limit;
    const tokens = truncated ? all.slice(0, limit) : all;
    for (const text of decodePieces(tokens, this.tokensPerDelta)) {
      if (this.delayMs > 0) await pause(this.delayMs, signal);
      throwIfAborted(signal);
      yield { type: 'text_delta', text };
    }
    yield {
      type: 'done',
      finishReason: truncated ? 'length' : 'stop',
      usage: usage(promptTokens, tokens.length),
    };
  }
}

/**
 * Which tools to call for this user text. Matches keep the order of `req.tools`, so "the first"
 * is deterministic. A forced function is called even if the text does not name it.
 */
export function selectToolCalls(req: ModelRequest, userText: string): ToolCall[] {
  const { tools, toolChoice } = req;
  if (tools.length === 0 || toolChoice === 'none') return [];
  const args = JSON.stringify({ input: userText });
  const call = (tool: FunctionTool | string): ToolCall => ({
    id: newToolCallId(),
    name: typeof tool === 'string' ? tool : tool.name,
    arguments: args,
  });

  if (typeof toolChoice === 'object') return [call(toolChoice.function.name)];

  let chosen = tools.filter((t) => mentions(userText, t.name));
  if (!req.parallelToolCalls) chosen = chosen.slice(0, 1);
  if (chosen.length === 0 && toolChoice === 'required') chosen = [tools[0]];
  return chosen.map(call);
}

/** Whole-word match: the name is not glued to other letters, digits or underscores. */
function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).test(text);
}

/** `Tool results: <name>: <output>; …` with every output verbatim, in submission order. */
function describeToolResults(messages: readonly ChatMessage[], results: readonly ChatMessage[]): string {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.name);
  const parts = results.map((r) => {
    const id = r.tool_call_id ?? '';
    return `${names.get(id) ?? id}: ${r.content}`;
  });
  return `Tool results: ${parts.join('; ')}`;
}

/** JSON mode promises valid JSON (until a length cut), so the answer is wrapped in an object. */
function isJsonMode(responseFormat: unknown): boolean {
  return (
    typeof responseFormat === 'object' &&
    responseFormat !== null &&
    (responseFormat as { type?: unknown }).type === 'json_object'
  );
}

/** Like timers' sleep, but an abort rejects with the signal's own reason. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    throwIfAborted(signal);
    throw error;
  }
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
