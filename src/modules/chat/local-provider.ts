/**
 * The `local` provider for chat completions and embeddings: the runs engine's deterministic
 * LocalModel (echoes, calls a tool the last user message names, streams a few tokens per chunk,
 * counts usage with the tokenizer) speaking chat-completion chunks, plus deterministic embeddings.
 */
import { createHash } from 'node:crypto';
import { randomAlphanumeric } from '../../lib/ids.js';
import { LocalModel } from '../runs/models/local-model.js';
import type { ChatMessage, FunctionTool, ModelRequest, ToolChoice } from '../runs/models/model.js';
import { countTokensAsync } from '../runs/models/tokens.js';
import { contentText, type ChatMessageWire, type WireBody } from './chat-request.js';
import { ChunkAccumulator } from './chunks.js';
import type { ModelProvider, ProviderCall } from './provider.js';

/** Dimension of the `local` provider's embeddings. */
export const LOCAL_EMBEDDING_DIMENSION = 64;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class LocalProvider implements ModelProvider {
  private readonly model = new LocalModel();

  async complete(call: ProviderCall): Promise<WireBody> {
    const chunks = new ChunkAccumulator();
    for await (const chunk of this.chunks(call)) chunks.add(chunk);
    return chunks.completion();
  }

  async stream(call: ProviderCall): Promise<AsyncIterable<WireBody>> {
    return this.chunks(call);
  }

  private async *chunks(call: ProviderCall): AsyncGenerator<WireBody> {
    const request = toModelRequest(call);
    const n = typeof call.body.n === 'number' ? call.body.n : 1;
    const base = { id: `chatcmpl-${randomAlphanumeric(24)}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: call.model };
    const total = { prompt_tokens: 0, completion_tokens: 0 };
    const chunk = (index: number, delta: object, finishReason: string | null = null): WireBody => ({
      ...base,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason }],
    });
    // Every choice is one deterministic pass of the model; they share the prompt, as with OpenAI.
    for (let index = 0; index < n; index++) {
      yield chunk(index, { role: 'assistant', content: '', refusal: null });
      for await (const event of this.model.stream(request)) {
        if (event.type === 'text_delta') yield chunk(index, { content: event.text });
        else if (event.type === 'tool_calls') {
          yield chunk(index, {
            tool_calls: event.calls.map((c, at) => ({ index: at, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
          });
        } else {
          total.prompt_tokens = event.usage.prompt_tokens;
          total.completion_tokens += event.usage.completion_tokens;
          yield chunk(index, {}, event.finishReason);
        }
      }
    }
    yield { ...base, choices: [], usage: { ...total, total_tokens: total.prompt_tokens + total.completion_tokens } };
  }

  async embed(call: ProviderCall, inputs: string[]): Promise<WireBody> {
    let tokens = 0;
    for (const text of inputs) tokens += await countTokensAsync(text);
    return {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(localEmbedding(text), call.body.encoding_format) })),
      model: call.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }
}

/**
 * A deterministic unit-length vector for a text: SHA-256 stretched over the dimension, centred,
 * normalised. Equal texts get equal vectors; it carries no meaning beyond that.
 */
export function localEmbedding(text: string): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < LOCAL_EMBEDDING_DIMENSION; block++) {
    for (const byte of createHash('sha256').update(`${block}:${text}`).digest()) {
      if (values.length < LOCAL_EMBEDDING_DIMENSION) values.push(byte - 127.5);
    }
  }
  const norm = Math.sqrt(values.reduce((sum, v) => sum + v * v, 0));
  return values.map((v) => v / norm);
}

/** `encoding_format: "base64"` (the openai SDK's default) is little-endian float32, as OpenAI sends it. */
function encodeEmbedding(vector: number[], format: unknown): number[] | string {
  if (format !== 'base64') return vector;
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** The chat request in the runs engine's model terms (what LocalModel reads). */
function toModelRequest(call: ProviderCall): ModelRequest {
  const { body } = call;
  const messages: ChatMessage[] = (body.messages as ChatMessageWire[]).map((m) => {
    const role = m.role === 'developer' ? 'system' : m.role === 'function' ? 'tool' : (m.role as ChatMessage['role']);
    const message: ChatMessage = { role, content: contentText(m.content) };
    if (Array.isArray(m.tool_calls)) {
      message.tool_calls = m.tool_calls.map((c) => ({ id: String(c.id ?? ''), name: String(c.function?.name ?? ''), arguments: String(c.function?.arguments ?? '') }));
    }
    if (typeof m.tool_call_id === 'string') message.tool_call_id = m.tool_call_id;
    return message;
  });
  const tools: FunctionTool[] = (Array.isArray(body.tools) ? body.tools : [])
    .filter((t): t is { function: Record<string, unknown> } => isRecord(t) && isRecord(t.function) && typeof t.function.name === 'string')
    .map((t) => ({ name: t.function.name as string, description: t.function.description as string | undefined, parameters: t.function.parameters as object | undefined }));
  return {
    model: call.model,
    messages,
    tools,
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls !== false,
    maxCompletionTokens: call.maxCompletionTokens,
    maxPromptTokens: null,
    temperature: null,
    topP: null,
    responseFormat: body.response_format,
    signal: call.signal,
  };
}

function toolChoiceOf(value: unknown): ToolChoice {
  if (value === 'none' || value === 'required' || value === 'auto') return value;
  if (isRecord(value) && isRecord(value.function) && typeof value.function.name === 'string') {
    return { type: 'function', function: { name: value.function.name } };
  }
  return 'auto';
}
