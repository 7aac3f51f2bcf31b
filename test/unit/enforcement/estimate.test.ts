import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPLETION_ESTIMATE, estimateTokens, PER_MESSAGE_TOKENS, PRIMING_TOKENS, segmentUsage } from '../../../src/modules/enforcement/estimate.js';
import { refusalReason } from '../../../src/modules/enforcement/enforcement.service.js';
import { BadRequestError, GuardrailDeniedError, NotFoundError, PermissionError, RateLimitError, UsageLimitError } from '../../../src/errors.js';

describe('estimateTokens', () => {
  it('counts every part with its per-message overhead, plus the completion budget', () => {
    expect(estimateTokens({ promptParts: [10, 5], maxCompletionTokens: 300, completionTokensUsed: 0 })).toEqual({
      prompt_tokens: 15 + 2 * PER_MESSAGE_TOKENS + PRIMING_TOKENS,
      completion_tokens: 300,
    });
  });
  it('later rounds get what earlier ones left of max_completion_tokens; unbounded runs use the default', () => {
    expect(estimateTokens({ promptParts: [], maxCompletionTokens: 300, completionTokensUsed: 120 }).completion_tokens).toBe(180);
    expect(estimateTokens({ promptParts: [], maxCompletionTokens: 300, completionTokensUsed: 400 }).completion_tokens).toBe(0);
    expect(estimateTokens({ promptParts: [], maxCompletionTokens: null, completionTokensUsed: 50 }).completion_tokens).toBe(DEFAULT_COMPLETION_ESTIMATE);
  });
});

describe('segmentUsage', () => {
  it('splits the final usage between admissions; the segments add up exactly', () => {
    const segments = segmentUsage(
      [
        { prompt_tokens: 0, completion_tokens: 0 },
        { prompt_tokens: 12, completion_tokens: 7 },
      ],
      { prompt_tokens: 40, completion_tokens: 15 },
    );
    expect(segments).toEqual([
      { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
      { prompt_tokens: 28, completion_tokens: 8, total_tokens: 36 },
    ]);
    expect(segments.reduce((a, s) => a + s.total_tokens, 0)).toBe(55);
  });
  it('a segment that used nothing is zero (its reservation is then released)', () => {
    expect(segmentUsage([{ prompt_tokens: 5, completion_tokens: 5 }], { prompt_tokens: 5, completion_tokens: 5 })).toEqual([{ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }]);
  });
});

describe('refusalReason', () => {
  it('names each kind of refusal', () => {
    expect(refusalReason(new RateLimitError('x'))).toBe('rate_limit');
    expect(refusalReason(new UsageLimitError('x'))).toBe('usage_limit');
    expect(refusalReason(new GuardrailDeniedError('x', []))).toBe('guardrail');
    expect(refusalReason(new PermissionError('x', { code: 'integration_disabled' }))).toBe('integration_disabled');
    expect(refusalReason(new NotFoundError('x', { code: 'virtual_key_not_found' }))).toBe('virtual_key');
    expect(refusalReason(new BadRequestError('x', { code: 'model_price_unknown' }))).toBe('model_price_unknown');
  });
});
