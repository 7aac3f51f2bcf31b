import type { EntityManager } from '@mikro-orm/core';
import { GuardrailDeniedError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { isUuid, timeOrderedUuid } from '../../lib/ids.js';
import type { Runtime } from '../../runtime.js';
import type { CheckContext } from './checks/check.js';
import { createJwksCache, type JwksCache } from './checks/jwks-cache.js';
import { evaluateGuardrail, type CheckOutcome, type EvaluateOptions, type GuardrailOutcome } from './evaluate.js';
import { evaluationWriter } from './evaluation-writer.js';
import type { GuardrailStage } from './guardrail-evaluation.entity.js';
import { GuardrailSchema, type Guardrail } from './guardrail.entity.js';
import type { Feedback } from './validate.js';

/** The one JWKS cache of this app: a cache period costs one fetch however many requests arrive. */
export function jwksCacheOf(runtime: Runtime): JwksCache {
  return runtime.singleton('guardrails.jwksCache', () => createJwksCache({ clock: runtime.clock }));
}

export interface GuardrailScope {
  organisationId: string;
  /** The workspace of the request; guardrails of other workspaces are invisible to it. */
  workspaceId: string | null;
}

export interface ResolvedRefs {
  /** Active guardrails, in the order first named; a guardrail named twice (id and slug) once. */
  active: Array<{ ref: string; guardrail: Guardrail }>;
  /** Named guardrails that were archived (DELETE). */
  archived: Array<{ ref: string; guardrail: Guardrail }>;
  /** Refs that name no guardrail this scope can see. */
  missing: string[];
}

/**
 * Resolves a provider's `input_guardrails` / `output_guardrails` (ids or slugs) in one query.
 * Also the check to run when a provider's guardrail list is written.
 */
export async function resolveGuardrailRefs(em: EntityManager, scope: GuardrailScope, refs: readonly string[]): Promise<ResolvedRefs> {
  const ids = [...new Set(refs.filter(isUuid).map((r) => r.toLowerCase()))];
  const slugs = [...new Set(refs.filter((r) => !isUuid(r)))];
  const rows =
    ids.length || slugs.length
      ? await em.find(GuardrailSchema, {
          organisationId: scope.organisationId,
          $or: [...(ids.length ? [{ id: { $in: ids } }] : []), ...(slugs.length ? [{ slug: { $in: slugs } }] : [])],
        })
      : [];
  const visible = rows.filter((g) => g.workspaceId === null || g.workspaceId === scope.workspaceId);
  const byRef = new Map<string, Guardrail>();
  for (const g of visible) {
    byRef.set(g.id, g);
    byRef.set(g.slug, g);
  }
  const out: ResolvedRefs = { active: [], archived: [], missing: [] };
  const seen = new Set<string>();
  for (const ref of refs) {
    const guardrail = byRef.get(isUuid(ref) ? ref.toLowerCase() : ref);
    if (!guardrail) {
      if (!out.missing.includes(ref)) out.missing.push(ref);
      continue;
    }
    if (seen.has(guardrail.id)) continue;
    seen.add(guardrail.id);
    (guardrail.status === 'active' ? out.active : out.archived).push({ ref, guardrail });
  }
  return out;
}

/** One guardrail's evaluation, in wire terms (it is also the `guardrail_results` entry of a 446). */
export interface GuardrailRequestResult {
  id: string;
  slug: string;
  name: string;
  version_id: string;
  /** Every enabled check passed. */
  verdict: boolean;
  /** Failed, and its actions say deny. An async guardrail never blocks, whatever this says. */
  deny: boolean;
  async: boolean;
  checks: CheckOutcome[];
  /** `on_success.feedback` or `on_fail.feedback`, by the verdict. */
  feedback: Feedback;
  duration_ms: number;
  /** The stored evaluation (GraphQL `guardrailEvaluations`). */
  evaluation_id: string;
}

export interface RequestEvaluation {
  /** Every synchronous guardrail passed and every ref named a guardrail. */
  verdict: boolean;
  /** Refuse the request (446 on input, a failed run on output): a synchronous deny guardrail failed, or a ref is missing. */
  deny: boolean;
  /** The synchronous guardrails, in ref order. */
  results: GuardrailRequestResult[];
  /** Refs naming no guardrail visible in the request's workspace: fail closed (deny). */
  missing: string[];
  /** Archived guardrails still named by the provider: skipped (not evaluated), logged as a warning. */
  skipped: Array<{ ref: string; id: string; slug: string; reason: 'archived' }>;
  /** Ids of the async guardrails `runAsync` will evaluate. */
  pendingAsync: string[];
  /**
   * Evaluates and records the async guardrails. Call it after the response is sent
   * (`ctx.afterResponse.push(() => evaluation.runAsync().then(() => {}))`); it never rejects, and
   * calling it again returns the same promise.
   */
  runAsync(): Promise<GuardrailRequestResult[]>;
}

export interface EvaluateForRequestInput extends GuardrailScope {
  /** A provider's `input_guardrails` or `output_guardrails`: guardrail ids or slugs. */
  guardrailRefs: readonly string[];
  stage: GuardrailStage;
  context: CheckContext;
  runId?: string | null;
  requestId?: string | null;
  /**
   * The request's EntityManager, when there is one: the config cache's check that nothing else
   * wrote the database is then the one the request already made (once per EntityManager).
   */
  em?: EntityManager;
}

export interface EngineOptions {
  /** Per-check wall-clock budget (default 5000 ms). */
  checkTimeoutMs?: number;
}

/**
 * The data plane's entry point. Loads the latest version of each named guardrail, evaluates the
 * synchronous ones now (concurrently), queues each evaluation's record, and returns the verdict. Async
 * guardrails are left to `runAsync`, which the caller schedules after the response.
 *
 * Runs on its own EntityManager: do not call it inside a transaction (SQLite has one connection).
 */
export async function evaluateForRequest(runtime: Runtime, input: EvaluateForRequestInput, options: EngineOptions = {}): Promise<RequestEvaluation> {
  // From the config cache (scope `guardrails`, dropped by every guardrail write): a provider's refs
  // resolve to the same guardrails, at the same versions, until one of them changes. They load on
  // an EntityManager of their own, as the cached entities outlive the request.
  const cache = configCache(runtime);
  await cache.syncWith(input.em ?? runtime.fork());
  const key = JSON.stringify([input.organisationId, input.workspaceId, input.guardrailRefs]);
  const resolved = await cache.get('guardrails', key, () => resolveGuardrailRefs(runtime.fork(), input, input.guardrailRefs));
  // Made only when something is logged (rarely): a child logger per request costs more than the checks.
  const log = () => runtime.logger.child({ requestId: input.requestId ?? undefined, runId: input.runId ?? undefined });
  if (resolved.missing.length) {
    log().warn({ refs: resolved.missing, stage: input.stage }, 'guardrail refs name no visible guardrail; denying (fail closed)');
  }
  const skipped = resolved.archived.map(({ ref, guardrail }) => ({ ref, id: guardrail.id, slug: guardrail.slug, reason: 'archived' as const }));
  if (skipped.length) log().warn({ guardrails: skipped.map((s) => s.slug), stage: input.stage }, 'archived guardrails skipped');

  const evalOptions: EvaluateOptions = { jwksCache: jwksCacheOf(runtime), clock: runtime.clock, checkTimeoutMs: options.checkTimeoutMs };
  const sync = resolved.active.filter(({ guardrail }) => !guardrail.actions.async).map((r) => r.guardrail);
  const later = resolved.active.filter(({ guardrail }) => guardrail.actions.async).map((r) => r.guardrail);

  const evaluate = async (list: Guardrail[]): Promise<GuardrailRequestResult[]> => {
    const outcomes = await Promise.all(list.map((g) => evaluateGuardrail(g, input.context, evalOptions)));
    const results = list.map((g, i) => toResult(g, outcomes[i]!));
    record(runtime, input, list, results);
    return results;
  };

  const results = await evaluate(sync);
  let pending: Promise<GuardrailRequestResult[]> | undefined;
  const runAsync = () =>
    (pending ??= later.length
      ? evaluate(later).catch((error: unknown) => {
          log().error({ err: error }, 'async guardrail evaluation failed');
          return [];
        })
      : Promise.resolve([]));

  const deny = resolved.missing.length > 0 || results.some((r) => r.deny);
  return {
    verdict: resolved.missing.length === 0 && results.every((r) => r.verdict),
    deny,
    results,
    missing: resolved.missing,
    skipped,
    pendingAsync: later.map((g) => g.id),
    runAsync,
  };
}

function toResult(guardrail: Guardrail, outcome: GuardrailOutcome): GuardrailRequestResult {
  return {
    id: guardrail.id,
    slug: guardrail.slug,
    name: guardrail.name,
    version_id: guardrail.versionId,
    verdict: outcome.verdict,
    deny: outcome.deny,
    async: outcome.async,
    checks: outcome.checks,
    feedback: outcome.feedback,
    duration_ms: outcome.duration_ms,
    // The evaluation row's id: time-ordered, appended to its primary-key index (see timeOrderedUuid).
    evaluation_id: timeOrderedUuid(),
  };
}

/** Queued for the next batch (evaluation-writer.ts): the request does not wait for the insert. */
function record(runtime: Runtime, input: EvaluateForRequestInput, guardrails: Guardrail[], results: GuardrailRequestResult[]): void {
  if (!results.length) return;
  const now = runtime.clock.now();
  evaluationWriter(runtime).push(
    ...results.map((r, i) => ({
      id: r.evaluation_id,
      organisationId: input.organisationId,
      workspaceId: input.workspaceId,
      guardrailId: guardrails[i]!.id,
      versionId: r.version_id,
      stage: input.stage,
      verdict: r.verdict,
      deny: r.deny,
      async: r.async,
      checks: r.checks,
      feedback: r.feedback,
      durationMs: r.duration_ms,
      runId: input.runId ?? null,
      requestId: input.requestId ?? null,
      createdAt: now,
    })),
  );
}

/**
 * The 446 of a denied request (docs/contract.md#guardrails): the message names what denied it, and
 * `guardrail_results` lists the synchronous results. `what` is the checked text: the request
 * (input guardrails) or the answer (output guardrails).
 */
export function guardrailDeniedError(evaluation: RequestEvaluation, what: 'request' | 'answer' = 'request'): GuardrailDeniedError {
  const denied = evaluation.results.filter((r) => r.deny && !r.async);
  const parts = [
    ...denied.map((r) => `'${r.name}' (${r.slug})`),
    ...evaluation.missing.map((ref) => `'${ref}' (not found)`),
  ];
  const noun = parts.length === 1 ? 'guardrail' : 'guardrails';
  return new GuardrailDeniedError(`The ${what} was denied by ${noun} ${parts.join(', ')}.`, evaluation.results);
}
