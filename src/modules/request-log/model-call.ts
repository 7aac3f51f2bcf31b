/**
 * What a data-plane service reports about one model call; `logModelCall` turns it into a request
 * log record (ids, time, cost from the model's price) and queues it.
 */
import { GuardrailDeniedError } from '../../errors.js';
import { timeOrderedUuid } from '../../lib/ids.js';
import type { GuardrailRequestResult } from '../guardrails/evaluation.service.js';
import type { Runtime } from '../../runtime.js';
import { costOf, priceOf, type PriceOverrides } from '../usage/prices.js';
import type { RequestLogGuardrail } from './request-log.entity.js';
import { requestLogWriter } from './request-log.writer.js';

/** What is known about a model call before it ends. */
export interface ModelCallFacts {
  organisationId: string;
  workspaceId: string;
  apiKeyId: string | null;
  virtualKey: string | null;
  provider: string | null;
  model: string | null;
  /** What the call came through: its request-log route. */
  route: 'chat.completions' | 'prompts.completions' | 'embeddings' | 'runs';
  stream: boolean;
  prices?: PriceOverrides | null;
  /** performance.now() when the gateway received the request. */
  startedAt: number;
  requestId: string | null;
  runId?: string | null;
  metadata: Record<string, string>;
}

/** How a model call ended. */
export interface ModelCallOutcome {
  status: number;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  upstreamMs: number | null;
  guardrails: RequestLogGuardrail[];
  refusal: string | null;
}

/** Guardrail verdicts as the log keeps them. */
export function guardrailVerdicts(stage: 'input' | 'output', results: readonly GuardrailRequestResult[]): RequestLogGuardrail[] {
  return results.map((r) => ({ stage, id: r.id, slug: r.slug, verdict: r.verdict, deny: r.deny }));
}

/** The input-guardrail verdicts a refusal carries (a 446 lists them), else none. */
export function refusalVerdicts(error: unknown): RequestLogGuardrail[] {
  return error instanceof GuardrailDeniedError ? guardrailVerdicts('input', error.extra.guardrail_results as GuardrailRequestResult[]) : [];
}

/** Dollars for the usage at the model's price; 0 when no price is known for it. */
export function costFor(model: string | null, usage: { prompt_tokens: number; completion_tokens: number }, prices?: PriceOverrides | null): number {
  if (!model || !priceOf(model, prices ?? undefined)) return 0;
  return costOf(model, usage, prices ?? undefined);
}

/**
 * The facts and the outcome come apart, so a service logs the facts it gathered up front with each
 * possible outcome without merging them into a new object first (`{ ...facts, status, … }`:
 * CONTRIBUTING, objects made per request).
 */
export function logModelCall(runtime: Runtime, call: ModelCallFacts, outcome: ModelCallOutcome): void {
  const usage = outcome.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
  try {
    requestLogWriter(runtime).write({
      // Time-ordered: appended to the table's primary-key index (see timeOrderedUuid).
      id: timeOrderedUuid(),
      createdAt: runtime.clock.now(),
      organisationId: call.organisationId,
      workspaceId: call.workspaceId,
      apiKeyId: call.apiKeyId,
      virtualKey: call.virtualKey,
      provider: call.provider,
      model: call.model,
      route: call.route,
      status: outcome.status,
      stream: call.stream,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      totalTokens: usage.prompt_tokens + usage.completion_tokens,
      cost: costFor(call.model, usage, call.prices),
      totalMs: performance.now() - call.startedAt,
      upstreamMs: outcome.upstreamMs,
      requestId: call.requestId,
      runId: call.runId ?? null,
      metadata: call.metadata,
      guardrails: outcome.guardrails,
      refusal: outcome.refusal,
    });
  } catch (error) {
    // The log never fails a request.
    runtime.logger.error({ err: error }, 'could not queue a request-log record');
  }
}
