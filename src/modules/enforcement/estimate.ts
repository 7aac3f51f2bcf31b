// Usage estimates for reservations, and the split of a run's usage between the admissions that
// paid for it. Pure: no ORM, no runtime.
//
// A reservation keeps a budget's cap only if it is not below what the run really uses, so the
// estimate is deliberately an upper bound of what the gateway will bill:
//   prompt     = tokens of everything the model may read (instructions, the thread's messages, the
//                run's tool outputs, the request's new text) + PER_MESSAGE_TOKENS per message +
//                PRIMING_TOKENS (what chat APIs add around messages); each text's tokens are
//                counted exactly up to a budget of characters and bounded by its UTF-8 byte length
//                beyond it (`tokenUpperBounds`), so a large thread costs no tokenizer time;
//   completion = the run's remaining `max_completion_tokens`, or DEFAULT_COMPLETION_ESTIMATE when
//                the run has none. Set `max_completion_tokens` for a hard cap with real models.
import type { RunUsage } from '../runs/run.entity.js';

export const DEFAULT_COMPLETION_ESTIMATE = 1024;
export const PER_MESSAGE_TOKENS = 4;
export const PRIMING_TOKENS = 3;

export interface EstimateInput {
  /** Token counts, or upper bounds of them, of each text the model may read (instructions, messages, tool outputs, new input). */
  promptParts: number[];
  /** The run's `max_completion_tokens` (null: unbounded). */
  maxCompletionTokens: number | null;
  /** Completion tokens the run has already used (later rounds get what earlier ones left). */
  completionTokensUsed: number;
}

export function estimateTokens(input: EstimateInput): { prompt_tokens: number; completion_tokens: number } {
  const prompt = input.promptParts.reduce((sum, n) => sum + n + PER_MESSAGE_TOKENS, PRIMING_TOKENS);
  const completion =
    input.maxCompletionTokens === null ? DEFAULT_COMPLETION_ESTIMATE : Math.max(0, input.maxCompletionTokens - input.completionTokensUsed);
  return { prompt_tokens: prompt, completion_tokens: completion };
}

export interface UsagePoint {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * Each admission of a run (create, then one per accepted tool-output submission) paid for the
 * model calls until the next one. Given the run's usage when each admission was committed (in
 * order) and its final usage, returns the usage of each segment; the segments add up to the final
 * usage exactly.
 */
export function segmentUsage(starts: readonly UsagePoint[], final: UsagePoint): RunUsage[] {
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? final;
    const prompt = Math.max(0, end.prompt_tokens - start.prompt_tokens);
    const completion = Math.max(0, end.completion_tokens - start.completion_tokens);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  });
}
