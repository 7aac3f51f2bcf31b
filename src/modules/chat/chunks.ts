/**
 * Chat completion chunks (`chat.completion.chunk`) and the completion they add up to. Pure. The
 * `local` provider only produces chunks and answers non-streamed requests with their assembly; the
 * gateway reads every stream (local or upstream) through `ChunkAccumulator` to learn the answer
 * text (output guardrails) and the usage (settlement, log).
 */
import type { WireBody } from './chat-request.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface ChoiceState {
  content: string;
  hasContent: boolean;
  toolCalls: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  finishReason: string | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A usage object from a wire body, or null when it has none that adds up to numbers. */
export function usageOf(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = value;
  if (typeof prompt !== 'number' || !Number.isFinite(prompt)) return null;
  const done = typeof completion === 'number' && Number.isFinite(completion) ? completion : 0;
  return { prompt_tokens: prompt, completion_tokens: done, total_tokens: typeof total === 'number' ? total : prompt + done };
}

export class ChunkAccumulator {
  private readonly choices = new Map<number, ChoiceState>();
  private first: WireBody | null = null;
  usage: Usage | null = null;

  add(chunk: WireBody): void {
    this.first ??= chunk;
    const usage = usageOf(chunk.usage);
    if (usage) this.usage = usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let state = this.choices.get(index);
      if (!state) this.choices.set(index, (state = { content: '', hasContent: false, toolCalls: [], finishReason: null }));
      const delta = isRecord(choice.delta) ? choice.delta : {};
      if (typeof delta.content === 'string') {
        state.content += delta.content;
        state.hasContent = true;
      }
      if (Array.isArray(delta.tool_calls)) {
        delta.tool_calls.forEach((part, position) => {
          if (!isRecord(part)) return;
          const at = typeof part.index === 'number' ? part.index : position;
          const call = (state.toolCalls[at] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          const fn = isRecord(part.function) ? part.function : {};
          if (typeof part.id === 'string') call.id = part.id;
          if (typeof fn.name === 'string') call.function.name += fn.name;
          if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
        });
      }
      if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
    }
  }

  /** The answer text of every choice, in index order (what output guardrails read). */
  text(): string {
    return [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, state]) => state.content)
      .join('\n');
  }

  /** The non-streamed `chat.completion` the chunks add up to. */
  completion(): WireBody {
    const first = this.first ?? {};
    return {
      id: first.id,
      object: 'chat.completion',
      created: first.created,
      model: first.model,
      choices: [...this.choices.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, state]) => ({
          index,
          message: {
            role: 'assistant',
            content: state.hasContent && state.content !== '' ? state.content : state.toolCalls.length ? null : state.content,
            refusal: null,
            ...(state.toolCalls.length > 0 && { tool_calls: state.toolCalls.filter(Boolean) }),
          },
          logprobs: null,
          finish_reason: state.finishReason ?? 'stop',
        })),
      usage: this.usage,
      ...(first.system_fingerprint !== undefined && { system_fingerprint: first.system_fingerprint }),
    };
  }
}

/** The text of every choice of a non-streamed completion (what output guardrails read). */
export function completionText(completion: WireBody): string {
  if (!Array.isArray(completion.choices)) return '';
  return completion.choices
    .map((choice) => (isRecord(choice) && isRecord(choice.message) && typeof choice.message.content === 'string' ? choice.message.content : ''))
    .join('\n');
}
