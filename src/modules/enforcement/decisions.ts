// The shapes an enforcement record stores (and GraphQL `Run.enforcement` shows).
import type { GuardrailRequestResult, RequestEvaluation } from '../guardrails/evaluation.service.js';
import type { LimitOwnerType, LimitType, UsageAmount } from '../usage/usage-engine.js';

export interface RateLimitDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
}

export interface LimitDecision {
  ownerType: LimitOwnerType;
  ownerId: string;
  label: string;
  valueKey: string;
  type: LimitType;
  creditLimit: number;
  /** Settled usage of the bucket right after this admission reserved on it. */
  currentUsage: number;
  /** Estimates held on the bucket by requests in progress, this one included. */
  reserved: number;
}

export interface GuardrailDecision {
  stage: 'input' | 'output';
  verdict: boolean;
  deny: boolean;
  results: GuardrailRequestResult[];
  missing: string[];
  skipped: string[];
  pendingAsync: string[];
}

export interface AdmissionDecision {
  /** 200, or 246 when a non-deny input guardrail failed. */
  status: number;
  rateLimit: RateLimitDecision | null;
  limits: LimitDecision[];
  /** What was reserved (tokens and US dollars); null when no limit applied. */
  estimate: UsageAmount | null;
}

export interface Settlement {
  action: 'settled' | 'released';
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** US dollars, when a cost limit applied; else 0. */
  cost: number;
  at: string;
}

export function guardrailDecision(stage: 'input' | 'output', evaluation: RequestEvaluation): GuardrailDecision {
  return {
    stage,
    verdict: evaluation.verdict,
    deny: evaluation.deny,
    results: evaluation.results,
    missing: evaluation.missing,
    skipped: evaluation.skipped.map((s) => s.slug),
    pendingAsync: evaluation.pendingAsync,
  };
}
