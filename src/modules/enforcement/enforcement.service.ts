/**
 * Data-plane enforcement: the checks every request that makes a model work passes (after the
 * virtual key resolved to a provider), in this order, refusing with the first that fails:
 *
 *   1. the rate limit of the workspace's access to the integration → 429 (+ Retry-After);
 *   2. usage limits (the access's own and every matching usage-limit policy) → 412, else reserve
 *      an estimate on every bucket;
 *   3. the provider's input guardrails → 446 on a deny (the reservation is given back); a failed
 *      non-deny guardrail lets the request through with status 246; async ones run after the
 *      response.
 *
 * Then: output guardrails check the answer (deny → the run fails `invalid_prompt`), and when
 * the run ends its usage settles into every bucket its admissions reserved on (released when it
 * used nothing). Every decision is stored per run (`run_enforcement_records`, GraphQL
 * `Run.enforcement`; a create to which nothing applied needs no record, its run row names it);
 * refusals are counted on /metrics by reason.
 */
import type { EntityManager } from '@mikro-orm/core';
import { executeSql } from '../../db/sql.js';
import { AppError, GuardrailDeniedError, NotFoundError, PermissionError, RateLimitError, UsageLimitError } from '../../errors.js';
import { setBounded } from '../../lib/bounded-map.js';
import { timeOrderedUuid } from '../../lib/ids.js';
import type { Runtime } from '../../runtime.js';
import { evaluateForRequest, guardrailDeniedError, type RequestEvaluation } from '../guardrails/evaluation.service.js';
import { enforceRateLimit } from '../integrations/rate-limiter.js';
import { workspaceAccessLimitSpec } from '../integrations/usage-limits.js';
import { reserveForRequest } from '../policies/request-usage.js';
import { creatingAdmissions, type Admission, type AdmissionUsage, type ModelWorkContext, type ModelWorkRequest, type OutputCheckInput, type OutputVerdict, type RowInserts, type RunSummary } from '../runs/admission.js';
import { REFUSED_ANSWER } from '../runs/models/model.js';
import { tokenUpperBounds } from '../runs/models/tokens.js';
import { nextOrdinal } from '../runs/ordinal.js';
import { readableSoFar } from '../runs/readable.js';
import type { RunUsage } from '../runs/run.entity.js';
import { measureUsage, usageEngine, type BucketAmounts, type LimitSpec, type Reservation, type UsageAmount, type WithClaim } from '../usage/usage-engine.js';
import { guardrailDecision, type AdmissionDecision, type GuardrailDecision, type LimitDecision, type Settlement } from './decisions.js';
import { EnforcementRecordSchema, type EnforcementRecord } from './enforcement-record.entity.js';
import { estimateTokens, segmentUsage, type UsagePoint } from './estimate.js';

/** What an admission holds between the checks and the commit (or abandonment) of its writes. */
interface PendingAdmission {
  decision: AdmissionDecision;
  guardrails: GuardrailDecision | null;
  reservation: Reservation | null;
  prices: Record<string, { input: number; output: number }> | null;
  /** Its record, once written in the request's transaction (null: none needed, see recordAdmissionDecisions). */
  record: AdmissionToSettle | null;
  /** Recorded in the request's transaction (a record written, or none needed). */
  recorded: boolean;
}

const pendingAdmissions = new WeakMap<Admission, PendingAdmission>();

/** What settling a run needs of an admission record. */
type AdmissionToSettle = Pick<EnforcementRecord, 'id' | 'reservation' | 'prices' | 'usageAtStart' | 'settledAt'>;

/**
 * The admission records this process wrote for runs that have not ended, in order. `complete`
 * when this process committed the run's first admission (its create; among them unless it needed
 * no record, see recordAdmissionDecisions). Alone on the database (no other instance can admit a
 * submission to the run) a complete list is all the run's admissions: a run none of which holds a
 * reservation ends without touching the database, any other settles without reading its records
 * back. Otherwise (a submission to a run admitted before a restart; instances sharing the
 * database, where a submission may have been admitted by another, with a reservation this process
 * never saw) they are read (test: e2e/multi-instance-settlement).
 */
interface RunAdmissions {
  complete: boolean;
  records: AdmissionToSettle[];
}

const admittedRuns = (runtime: Runtime) => runtime.singleton('enforcement.admittedRuns', () => new Map<string, RunAdmissions>());

/**
 * Runs remembered at most: a run that ends on another instance never leaves this map through
 * `runFinished`, so the oldest go first. A run no longer remembered reads its records when it ends.
 */
const ADMITTED_RUNS_LIMIT = 10_000;

// ---------------------------------------------------------------------------------------------
// Admission

/** The refusal reason /metrics counts. */
export function refusalReason(error: unknown): string {
  if (error instanceof RateLimitError) return 'rate_limit';
  if (error instanceof UsageLimitError) return 'usage_limit';
  if (error instanceof GuardrailDeniedError) return 'guardrail';
  if (error instanceof PermissionError && error.code === 'integration_disabled') return 'integration_disabled';
  if (error instanceof NotFoundError) return 'virtual_key';
  if (error instanceof AppError && error.code) return error.code;
  return 'error';
}

/** The decision of an admission before any check applied (and after, when none did). */
function admittedWithNothing(): AdmissionDecision {
  return { status: 200, rateLimit: null, limits: [], estimate: null };
}

/** Steps 2–4 of the order of checks (step 1, the provider, is admitModelWork's). */
export async function enforceAdmission(ctx: ModelWorkContext, admission: Admission): Promise<void> {
  const { request, provider } = admission;
  const { runtime } = ctx;
  const pending: PendingAdmission = {
    decision: admittedWithNothing(),
    guardrails: null,
    reservation: null,
    prices: provider.integration.prices ?? null,
    record: null,
    recorded: false,
  };
  pendingAdmissions.set(admission, pending);

  // 2. Rate limit (429 carries its own headers; admitted responses get them too).
  const rateHeaders = await enforceRateLimit(runtime, provider);
  Object.assign(admission.answer.headers, rateHeaders);
  if (rateHeaders['x-ratelimit-limit']) {
    pending.decision.rateLimit = {
      limit: Number(rateHeaders['x-ratelimit-limit']),
      remaining: Number(rateHeaders['x-ratelimit-remaining']),
      resetAt: Number(rateHeaders['x-ratelimit-reset']),
    };
  }

  // 3. Usage limits: reserve an estimate on every applicable bucket, or refuse (412).
  const accessSpec = workspaceAccessLimitSpec(provider);
  const reserved = await reserveForRequest(
    runtime,
    ctx.em,
    {
      organisationId: request.organisationId,
      workspaceId: request.workspaceId,
      apiKeyId: request.apiKeyId,
      virtualKey: request.virtualKey,
      model: request.model,
      metadata: request.metadata,
      extraLimits: accessSpec ? [accessSpec] : [],
      prices: pending.prices,
    },
    () => estimateRequest(ctx, request),
  );
  if (reserved) {
    pending.reservation = reserved.reservation;
    pending.decision.estimate = reserved.amount;
    pending.decision.limits = bucketSnapshot(reserved.limits, reserved.usage);
  }

  // 4. Input guardrails (a deny throws; admitModelWork then abandons the admission: released).
  if (provider.provider.inputGuardrails.length > 0) {
    const evaluation = await evaluateForRequest(runtime, {
      organisationId: request.organisationId,
      workspaceId: request.workspaceId,
      guardrailRefs: provider.provider.inputGuardrails,
      stage: 'input',
      context: { text: request.inputText, model: request.model, metadata: request.metadata, headers: ctx.caller?.headers ?? {} },
      runId: request.runId,
      requestId: ctx.requestId ?? null,
      em: ctx.em,
    });
    pending.guardrails = guardrailDecision('input', evaluation);
    scheduleAsync(ctx, evaluation);
    if (evaluation.deny) throw guardrailDeniedError(evaluation);
    if (!evaluation.verdict) {
      pending.decision.status = 246;
      admission.answer.status = 246;
    }
  }
}

function scheduleAsync(ctx: ModelWorkContext, evaluation: RequestEvaluation): void {
  if (evaluation.pendingAsync.length === 0) return;
  const task = async () => {
    await evaluation.runAsync();
  };
  if (ctx.afterResponse) ctx.afterResponse.push(task);
  else void task();
}

/**
 * Tokens the admitted request can make the model use, as an upper bound (see estimate.ts): the
 * instructions, the thread's messages, the run's tool outputs so far, the new input, and the
 * completion budget.
 */
async function estimateRequest(ctx: ModelWorkContext, request: ModelWorkRequest): Promise<{ prompt_tokens: number; completion_tokens: number }> {
  const readable = await readableSoFar(ctx.em, request);
  // Bounds, not exact counts: exact counting of a large thread would hold the event loop.
  return estimateTokens({
    promptParts: tokenUpperBounds([request.instructions ?? '', request.inputText, ...readable.texts]),
    maxCompletionTokens: request.maxCompletionTokens ?? null,
    completionTokensUsed: readable.completionTokensUsed,
  });
}

/** Each spec's bucket usage right after the reservation (as the reservation's own statements left it). */
function bucketSnapshot(specs: LimitSpec[], usage: BucketAmounts[]): LimitDecision[] {
  return specs.map((spec, i) => ({
    ownerType: spec.ownerType,
    ownerId: spec.ownerId,
    label: spec.label,
    valueKey: spec.valueKey,
    type: spec.type,
    creditLimit: spec.creditLimit,
    ...usage[i],
  }));
}

/**
 * Stores the admission's decisions, linked to the run, in the transaction of the request's writes
 * (a row of its batched inserts, run-store.ts RunTx.insert): the run cannot end before its record exists, and a record that cannot be written
 * rolls the run back (the reservation is then given back as for any abandoned admission).
 *
 * A run's first admission (its create) to which nothing applied (no rate limit, limit,
 * reservation or guardrail) writes no record, sparing the request an INSERT: its run row holds
 * its kind and request id (`Run.enforcement` lists it from there, see enforcementOfRuns), and with
 * no reservation it has nothing to settle. Every submission is recorded, whatever applied: its
 * record ends the previous admission's segment (without it, an admission that held a reservation
 * would pay for the model calls after it), and it is the only link to the request that admitted
 * it. Test: e2e/enforcement-segments.
 */
export function recordAdmissionDecisions(
  rtx: RowInserts,
  ctx: ModelWorkContext,
  admission: Admission,
  runId: string,
  usageAtStart: AdmissionUsage,
): void {
  const pending = pendingAdmissions.get(admission);
  if (!pending) return;
  pending.recorded = true;
  if (admission.request.kind !== 'submit_tool_outputs' && enforcedNothing(pending)) return;
  const now = ctx.runtime.clock.now();
  const record = rtx.insert(EnforcementRecordSchema, {
    // Time-ordered, as every row written per request (see timeOrderedUuid).
    id: timeOrderedUuid(),
    runId,
    organisationId: admission.request.organisationId,
    workspaceId: admission.request.workspaceId,
    ordinal: nextOrdinal(),
    stage: 'admission',
    kind: admission.request.kind,
    requestId: ctx.requestId ?? null,
    admission: pending.decision,
    guardrails: pending.guardrails,
    reservation: pending.reservation,
    prices: pending.prices,
    usageAtStart: { prompt_tokens: usageAtStart.prompt_tokens, completion_tokens: usageAtStart.completion_tokens },
    settlement: null,
    // Nothing to settle without a reservation.
    settledAt: pending.reservation ? null : now,
    createdAt: now,
  });
  pending.record = record;
}

/** Nothing applied to the admission: no rate limit, usage limit, reservation or guardrail (prices matter only to a reservation). */
function enforcedNothing(pending: PendingAdmission): boolean {
  const { decision } = pending;
  return (
    !pending.reservation &&
    !pending.guardrails &&
    decision.status === 200 &&
    !decision.rateLimit &&
    decision.limits.length === 0 &&
    decision.estimate === null
  );
}

/** The admitted request's writes (its record among them) committed: the run may hold a reservation to settle. */
export function admissionCommitted(ctx: ModelWorkContext, admission: Admission, runId: string): void {
  const pending = pendingAdmissions.get(admission);
  if (!pending) return;
  pendingAdmissions.delete(admission);
  if (!pending.recorded) return;
  const runs = admittedRuns(ctx.runtime);
  const known = runs.get(runId) ?? { complete: admission.request.kind !== 'submit_tool_outputs', records: [] };
  if (pending.record) known.records.push(pending.record);
  setBounded(runs, runId, known, ADMITTED_RUNS_LIMIT);
}

/** The admitted request will not run: give its reservation back. */
export async function admissionAbandoned(ctx: ModelWorkContext, admission: Admission): Promise<void> {
  const pending = pendingAdmissions.get(admission);
  if (!pending) return;
  pendingAdmissions.delete(admission);
  if (pending.reservation) await usageEngine(ctx.runtime).release(pending.reservation);
}

/**
 * An admitted request answered without a run (chat completions, embeddings): its usage settles at
 * once into every bucket it reserved on (released when it used nothing). Returns the admission's
 * decisions (null when it was already settled or abandoned).
 */
export async function settleAdmission(
  runtime: Runtime,
  admission: Admission,
  usage: { prompt_tokens: number; completion_tokens: number },
): Promise<{ decision: AdmissionDecision; inputGuardrails: GuardrailDecision | null } | null> {
  const pending = pendingAdmissions.get(admission);
  if (!pending) return null;
  pendingAdmissions.delete(admission);
  const { reservation } = pending;
  if (reservation) {
    const engine = usageEngine(runtime);
    // Priced now, so a price error is the request's; written by `write`, which never throws.
    let amount: UsageAmount | null = null;
    let failure: unknown = null;
    try {
      if (usage.prompt_tokens + usage.completion_tokens > 0) amount = measureUsage(reservation.specs, admission.request.model, usage, pending.prices ?? undefined);
    } catch (error) {
      failure = error;
    }
    const write = async () => {
      try {
        if (failure) throw failure;
        if (amount) await engine.settle(reservation, amount);
        else await engine.release(reservation);
      } catch (error) {
        runtime.logger.error({ err: error, kind: admission.request.kind }, 'could not settle a request’s usage; releasing its reservation');
        await engine.release(reservation).catch((releaseError: unknown) => runtime.logger.error({ err: releaseError }, 'could not release a reservation'));
      }
    };
    // Alone on the database, the answer does not wait for the bucket writes (see UsageEngine.defer);
    // instances sharing it settle at once, so each sees the others' usage as soon as it is known.
    if (runtime.instances.alone) engine.defer(write);
    else await write();
  }
  return { decision: pending.decision, inputGuardrails: pending.guardrails };
}

// ---------------------------------------------------------------------------------------------
// Output and run end

/** The provider's output guardrails on the run's answer: a deny fails the run `invalid_prompt`
 * (the OpenAI document's code for a refused prompt or answer), the guardrail named in the message and
 * its results in the output enforcement record. */
export async function checkRunOutput(runtime: Runtime, input: OutputCheckInput): Promise<OutputVerdict> {
  const refs = input.provider.provider.outputGuardrails;
  if (refs.length === 0) return { pass: true };
  const { run } = input;
  const evaluation = await evaluateForRequest(runtime, {
    organisationId: run.organisationId,
    workspaceId: run.workspaceId,
    guardrailRefs: refs,
    stage: 'output',
    context: { text: input.text, model: run.model, metadata: run.metadata, headers: {} },
    runId: run.id,
  });
  void evaluation.runAsync();
  try {
    await runtime.fork().insert(EnforcementRecordSchema, {
      id: timeOrderedUuid(),
      runId: run.id,
      organisationId: run.organisationId,
      workspaceId: run.workspaceId,
      ordinal: nextOrdinal(),
      stage: 'output',
      kind: 'output',
      requestId: null,
      admission: null,
      guardrails: guardrailDecision('output', evaluation),
      reservation: null,
      prices: null,
      usageAtStart: null,
      settlement: null,
      settledAt: null,
      createdAt: runtime.clock.now(),
    });
  } catch (error) {
    runtime.logger.error({ err: error, runId: run.id }, 'could not record an output guardrail decision');
  }
  if (!evaluation.deny) return { pass: true };
  runtime.metrics.refusals.inc({ reason: 'output_guardrail' });
  return { pass: false, code: REFUSED_ANSWER, message: guardrailDeniedError(evaluation, 'answer').message };
}

export async function runFinished(runtime: Runtime, run: RunSummary, usage: RunUsage): Promise<void> {
  const runs = admittedRuns(runtime);
  const known = runs.get(run.id);
  runs.delete(run.id);
  if (known?.complete && runtime.instances.alone) {
    if (!known.records.some((r) => r.reservation)) return;
    return settleAdmissions(runtime, run.id, known.records, usage, run.model);
  }
  await settleRun(runtime, run.id, usage, run.model);
}

/** Settles the run from its admission records as stored (see settleAdmissions). */
export async function settleRun(runtime: Runtime, runId: string, final: UsagePoint, model: string): Promise<void> {
  const records = await runtime.fork().find(EnforcementRecordSchema, { runId, stage: 'admission' }, { orderBy: { ordinal: 'asc' } });
  await settleAdmissions(runtime, runId, records, final, model);
}

/**
 * Counts the run's usage into every bucket its admissions (all of the run's, in order) reserved
 * on: each admission pays for its segment of the run (see segmentUsage); an admission whose
 * segment used nothing gives its reservation back. The record's settlement is written in the
 * transaction that settles or releases the reservation, by the call that claims it: exactly once,
 * and never a record that says settled beside buckets that are not.
 */
async function settleAdmissions(runtime: Runtime, runId: string, records: readonly AdmissionToSettle[], final: UsagePoint, model: string): Promise<void> {
  if (!records.some((r) => r.reservation && !r.settledAt)) return;
  const segments = segmentUsage(
    records.map((r) => r.usageAtStart ?? { prompt_tokens: 0, completion_tokens: 0 }),
    final,
  );
  const engine = usageEngine(runtime);
  for (const [i, record] of records.entries()) {
    const { reservation } = record;
    if (record.settledAt || !reservation) continue;
    const segment = segments[i];
    const now = runtime.clock.now();
    const settled = (action: Settlement['action'], cost: number): WithClaim => {
      const settlement: Settlement = {
        action,
        promptTokens: segment.prompt_tokens,
        completionTokens: segment.completion_tokens,
        totalTokens: segment.total_tokens,
        cost,
        at: now.toISOString(),
      };
      return (tx) => executeSql(tx, 'update run_enforcement_records set settled_at = ?, settlement = ? where id = ? and settled_at is null', [now, JSON.stringify(settlement), record.id], 'run');
    };
    try {
      if (segment.total_tokens > 0) {
        const amount = measureUsage(reservation.specs, model, segment, record.prices ?? undefined);
        await engine.settle(reservation, amount, settled('settled', amount.cost));
      } else {
        await engine.release(reservation, settled('released', 0));
      }
    } catch (error) {
      // A failed settle changed nothing (one transaction): give the estimate back now rather than
      // leave it held until the stale-reservation sweep.
      runtime.logger.error({ err: error, runId, recordId: record.id }, 'could not settle a run’s usage; releasing its reservation');
      await engine.release(reservation, settled('released', 0)).catch((releaseError: unknown) => runtime.logger.error({ err: releaseError, runId }, 'could not release a reservation'));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface RunEnforcementView {
  runId: string;
  admissions: Array<{
    kind: string;
    requestId: string | null;
    createdAt: Date;
    decision: AdmissionDecision;
    inputGuardrails: GuardrailDecision | null;
    settlement: Settlement | null;
  }>;
  outputGuardrails: Array<GuardrailDecision & { createdAt: Date }>;
}

/**
 * The enforcement decisions of many runs (same order as `runIds`): their records in one query, and
 * for runs whose create has no record (nothing applied to it, see recordAdmissionDecisions) that
 * first admission from the run row, in a second. A run written before the row held it (migration
 * 0008) has the record.
 */
export async function enforcementOfRuns(em: EntityManager, runIds: readonly string[]): Promise<RunEnforcementView[]> {
  const ids = [...new Set(runIds)];
  const records = ids.length ? await em.find(EnforcementRecordSchema, { runId: { $in: ids } }, { orderBy: { ordinal: 'asc' } }) : [];
  const byRun = new Map<string, EnforcementRecord[]>();
  for (const r of records) {
    const rows = byRun.get(r.runId);
    if (rows) rows.push(r);
    else byRun.set(r.runId, [r]);
  }
  const unrecorded = ids.filter((runId) => !byRun.get(runId)?.some((r) => r.stage === 'admission' && r.kind !== 'submit_tool_outputs'));
  const creates = await creatingAdmissions(em, unrecorded);
  return runIds.map((runId) => {
    const rows = byRun.get(runId) ?? [];
    const create = creates.get(runId);
    return {
      runId,
      admissions: [
        ...(create ? [{ ...create, decision: admittedWithNothing(), inputGuardrails: null, settlement: null }] : []),
        ...rows
          .filter((r) => r.stage === 'admission' && r.admission)
          .map((r) => ({
            kind: r.kind,
            requestId: r.requestId ?? null,
            createdAt: r.createdAt,
            decision: r.admission!,
            inputGuardrails: r.guardrails ?? null,
            settlement: r.settlement ?? null,
          })),
      ],
      outputGuardrails: rows.filter((r) => r.stage === 'output' && r.guardrails).map((r) => ({ ...r.guardrails!, createdAt: r.createdAt })),
    };
  });
}
