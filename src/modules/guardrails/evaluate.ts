import type { CheckContext, CheckOptions, CheckResult, GuardrailCheck } from './checks/check.js';
import { isPromiseLike } from '../../lib/promise-like.js';
import { errorMessage } from './checks/check.js';
import { getCheck } from './checks/registry.js';
import type { Feedback, GuardrailActions, NormalizedCheck } from './validate.js';

export interface EvaluateOptions extends CheckOptions {
  /** Per-check wall-clock budget; a check that exceeds it fails with explanation 'timed out'. */
  checkTimeoutMs?: number;
}

export interface CheckOutcome {
  id: string;
  name: string;
  verdict: boolean;
  explanation: string;
  duration_ms: number;
  data?: Record<string, unknown>;
  /** Set when no real verdict was reached: 'timeout', 'unknown_check', 'invalid_parameters', 'exception'. */
  error?: string;
}

export interface GuardrailOutcome {
  verdict: boolean;
  checks: CheckOutcome[];
  duration_ms: number;
  feedback: Feedback;
  deny: boolean;
  async: boolean;
}

export interface GuardrailToEvaluate {
  checks: readonly NormalizedCheck[];
  actions: GuardrailActions;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 5000;

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

const TIMED_OUT = Symbol('timed out');

/**
 * Races a check against its budget. This bounds waiting (a slow JWKS), not CPU: synchronous
 * work cannot be interrupted from here, which is why user regexes carry their own budget.
 */
async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Stored parameters were validated at write time; parsing again fills defaults added since. A
 * guardrail's checks come from the config cache, the same objects request after request (and
 * never changed: a write makes new ones), so each is parsed once.
 */
const parsedParameters = new WeakMap<NormalizedCheck, ReturnType<GuardrailCheck['parameters']['safeParse']>>();

function parametersOf(check: GuardrailCheck, entry: NormalizedCheck): ReturnType<GuardrailCheck['parameters']['safeParse']> {
  let parsed = parsedParameters.get(entry);
  if (!parsed) {
    parsed = check.parameters.safeParse(entry.parameters ?? {});
    parsedParameters.set(entry, parsed);
  }
  return parsed;
}

async function runCheck(entry: NormalizedCheck, ctx: CheckContext, opts: EvaluateOptions): Promise<CheckOutcome> {
  const start = performance.now();
  const check = getCheck(entry.id);
  if (!check) return failedCheck(entry, start, `Unknown check "${entry.id}".`, 'unknown_check');
  const params = parametersOf(check, entry);
  if (!params.success) return failedCheck(entry, start, `Invalid parameters: ${params.error.issues[0]?.message ?? 'unknown problem'}.`, 'invalid_parameters');

  let result: CheckResult | typeof TIMED_OUT;
  try {
    const answer = check.judge(params.data, ctx, opts);
    // A check that answered at once is not raced against a timer: no timer could have fired before
    // its answer (timers run after the microtasks that deliver it). Most checks are such text rules.
    result = isPromiseLike(answer) ? await withTimeout(Promise.resolve(answer), opts.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS) : answer;
  } catch (e) {
    return failedCheck(entry, start, `Check failed: ${errorMessage(e)}`, 'exception');
  }
  if (result === TIMED_OUT) return failedCheck(entry, start, 'timed out', 'timeout');
  // Built field by field (the key order the spreads gave: id, name, verdict, explanation, duration_ms, data, error).
  const outcome: CheckOutcome = { id: entry.id, name: entry.name ?? entry.id, verdict: result.verdict, explanation: result.explanation, duration_ms: elapsed(start) };
  if (result.data !== undefined) outcome.data = result.data;
  if (result.error !== undefined) outcome.error = result.error;
  return outcome;
}

function failedCheck(entry: NormalizedCheck, start: number, explanation: string, error: string): CheckOutcome {
  return { id: entry.id, name: entry.name ?? entry.id, verdict: false, explanation, duration_ms: elapsed(start), error };
}

/**
 * Runs the enabled checks concurrently. The verdict is true when every enabled check passes (so
 * a guardrail with no enabled check passes). `deny` is set only when the guardrail failed and its
 * actions say deny; whether an async guardrail may block is the caller's decision.
 */
export async function evaluateGuardrail(guardrail: GuardrailToEvaluate, ctx: CheckContext, opts: EvaluateOptions = {}): Promise<GuardrailOutcome> {
  const start = performance.now();
  const enabled = guardrail.checks.filter((c) => c.is_enabled !== false);
  const checks = await Promise.all(enabled.map((c) => runCheck(c, ctx, opts)));
  const verdict = checks.every((c) => c.verdict);
  const { actions } = guardrail;
  return {
    verdict,
    checks,
    duration_ms: elapsed(start),
    feedback: { ...(verdict ? actions.on_success.feedback : actions.on_fail.feedback) },
    deny: actions.deny && !verdict,
    async: actions.async,
  };
}

export interface GuardrailsOutcome<G> {
  /** Every guardrail passed. */
  verdict: boolean;
  /** Some non-async guardrail failed with deny (async guardrails never block). */
  deny: boolean;
  results: Array<GuardrailOutcome & { guardrail: G }>;
}

/** Several guardrails (a provider's input or output list), concurrently; results keep the list order. */
export async function evaluateGuardrails<G extends GuardrailToEvaluate>(
  list: readonly G[],
  ctx: CheckContext,
  opts: EvaluateOptions = {},
): Promise<GuardrailsOutcome<G>> {
  const results = await Promise.all(list.map(async (g) => ({ ...(await evaluateGuardrail(g, ctx, opts)), guardrail: g })));
  return {
    verdict: results.every((r) => r.verdict),
    deny: results.some((r) => r.deny && !r.async),
    results,
  };
}
