import type { z } from 'zod';
import type { Clock } from '../../../lib/clock.js';
import { isPromiseLike } from '../../../lib/promise-like.js';
import type { JwksCache } from './jwks-cache.js';

/** What a check may read about the request. The caller assembles it; checks never see raw bodies. */
export interface CheckContext {
  /** Tool outputs / message content for input guardrails, the model's answer for output guardrails. */
  text: string;
  model?: string;
  metadata?: Record<string, string>;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
}

export interface CheckResult {
  verdict: boolean;
  explanation: string;
  data?: Record<string, unknown>;
  /** Set when the check could not judge the input (an exception, an unreachable JWKS, a blown budget). */
  error?: string;
}

/** Long-lived collaborators owned by the caller (one set per app instance). */
export interface CheckOptions {
  /** Required by default.jwt: JWKS documents are cached here, see createJwksCache(). */
  jwksCache?: JwksCache;
  /** Time used to judge token expiry; defaults to the system clock. */
  clock?: Clock;
  /** CPU budget for user-supplied patterns (regexMatch, jsonSchema); default 250 ms. */
  regexBudgetMs?: number;
}

export interface GuardrailCheck<S extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly id: string;
  /** Parses and normalises parameters (defaults applied); used at write time and before evaluation. */
  readonly parameters: S;
  /**
   * Never throws, and its promise never rejects: any failure is a failed verdict with an
   * explanation. The result itself when the check decides without waiting (the text checks), so
   * the caller need not arm a timeout for it; a promise of it when the check waits (a JWKS fetch).
   */
  judge(params: z.output<S>, ctx: CheckContext, opts?: CheckOptions): CheckResult | Promise<CheckResult>;
  /** `judge`'s result, always as a promise. */
  evaluate(params: z.output<S>, ctx: CheckContext, opts?: CheckOptions): Promise<CheckResult>;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Builds a check whose evaluate cannot throw or reject: the guarantee lives here once instead of in
 * every check, so a bug in one check fails that check rather than the whole request.
 */
export function defineCheck<S extends z.ZodTypeAny>(
  id: string,
  parameters: S,
  run: (params: z.output<S>, ctx: CheckContext, opts: CheckOptions) => CheckResult | Promise<CheckResult>,
): GuardrailCheck<S> {
  const failed = (e: unknown): CheckResult => ({ verdict: false, explanation: `${id} could not be evaluated: ${errorMessage(e)}`, error: 'exception' });
  const judge = (params: z.output<S>, ctx: CheckContext, opts: CheckOptions = {}): CheckResult | Promise<CheckResult> => {
    let result: CheckResult | Promise<CheckResult>;
    try {
      result = run(params, ctx, opts);
    } catch (e) {
      return failed(e);
    }
    return isPromiseLike(result) ? Promise.resolve(result).catch(failed) : result;
  };
  return {
    id,
    parameters,
    judge,
    async evaluate(params, ctx, opts) {
      return judge(params, ctx, opts);
    },
  };
}
