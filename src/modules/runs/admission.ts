/**
 * The enforcement seam of the runs engine. Every request that makes a model work (create run,
 * create thread and run, submit tool outputs) passes through `admitModelWork` before anything
 * is written; the executor asks `checkOutput` about an answer before completing a run, and tells
 * `onRunFinished` about every run that reaches a terminal status, with its usage.
 *
 * Other domains plug in by registering listeners, typically from their module's `start`:
 *
 *   const hooks = runHooks(runtime);
 *   hooks.addAdmissionCheck(async (ctx, admission) => { … throw new RateLimitError(…) … });
 *   hooks.addOutputCheck(async (runtime, output) => ({ pass: false, code: REFUSED_ANSWER, message: '…' }));
 *   hooks.addRunFinishedListener(async (runtime, run, usage) => { … record usage … });
 *
 * Admission checks run in registration order and refuse by throwing an AppError (412, 429, 446…);
 * what they decide about the answer (rate-limit headers, status 246) they write on
 * `admission.answer`, which the service returns beside its result for the resolver to apply (and
 * which a refusal's error carries too). Services take the request's headers as plain facts
 * (`ctx.caller`) and never see the HTTP request or response. Output checks run in order until one fails. Run-finished listeners run after the
 * terminal commit, each isolated: one that throws is logged and does not affect the run or the
 * other listeners.
 */
import type { EntityManager, EntitySchema } from '@mikro-orm/core';
import type { CallerFacts, RequestContext, ServiceContext } from '../../context.js';
import { AppError, BadRequestError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import { resolveProvider, type ResolvedProvider } from '../integrations/provider-resolution.js';
import type { RunErrorCode } from './models/model.js';
import { RunSchema, type RunUsage } from './run.entity.js';
import type { RunStatus } from './run-state.js';

export type { ResolvedProvider };

/** Run routes, and the requests answered without a run (chat completions, embeddings). */
export type ModelWorkKind = 'create_run' | 'create_thread_and_run' | 'submit_tool_outputs' | 'chat_completion' | 'embeddings';

/** A service context, plus what the edge read of the request when the work comes from one. */
export type ModelWorkContext = ServiceContext & Partial<Pick<RequestContext, 'caller' | 'afterResponse' | 'requestId' | 'log'>>;

export type { CallerFacts };

export interface ModelWorkRequest {
  kind: ModelWorkKind;
  organisationId: string;
  workspaceId: string;
  /** The provider slug the caller sent (`x-gateway-virtual-key`). */
  virtualKey: string;
  /** The model the run will call. */
  model: string;
  /** What the model will newly read because of this request: new messages, or the tool outputs. */
  inputText: string;
  metadata: Record<string, string>;
  /** The API key making the request. */
  apiKeyId: string;
  /** Set when the thread / run already exist (create run on a thread; submit). */
  threadId: string | null;
  runId: string | null;
  /** The instructions the model will read (for usage estimates). */
  instructions?: string;
  /** The run's `max_completion_tokens` (null: unbounded), for usage estimates. */
  maxCompletionTokens?: number | null;
}

/** What the admission decided about the answer, beyond its body. */
export interface AdmissionAnswer {
  /** 200, or 246 when a non-deny input guardrail failed. */
  status: number;
  /** Headers the answer carries (x-ratelimit-*). */
  headers: Record<string, string>;
  /** Milliseconds of the gateway's own time, when the service measured it (model traffic answered in the request). */
  ownTimeMs?: number;
}

/** A data-plane service's result and what its admission decided about the answer. */
export interface Admitted<T> {
  value: T;
  answer: AdmissionAnswer;
}

export interface Admission {
  request: ModelWorkRequest;
  provider: ResolvedProvider;
  answer: AdmissionAnswer;
}

export type AdmissionCheck = (ctx: ModelWorkContext, admission: Admission) => Promise<void> | void;

/** What listeners learn about a run (a plain snapshot). */
export interface RunSummary {
  id: string;
  organisationId: string;
  workspaceId: string;
  threadId: string;
  assistantId: string;
  status: RunStatus;
  model: string;
  virtualKey: string;
  providerId: string | null;
  apiKeyId: string | null;
  metadata: Record<string, string>;
}

export interface OutputCheckInput {
  run: RunSummary;
  provider: ResolvedProvider;
  /** The complete answer text the run is about to deliver. */
  text: string;
}

/** A refusal is recorded as the run's `last_error`, so its code is one the document allows there. */
export type OutputVerdict = { pass: true } | { pass: false; code: RunErrorCode; message: string };

export type OutputCheck = (runtime: Runtime, input: OutputCheckInput) => Promise<OutputVerdict> | OutputVerdict;

export type RunFinishedListener = (runtime: Runtime, run: RunSummary, usage: RunUsage) => Promise<void> | void;

/** One model call of a run finished (the request log records each). */
export interface ModelCallDone {
  run: RunSummary;
  provider: ResolvedProvider;
  usage: RunUsage;
  /** Milliseconds the provider took. */
  upstreamMs: number;
  /** Set when the call failed: the upstream's HTTP status (502 when there was none) and the error code. */
  failure?: { status: number; code: string };
}

export type ModelCallListener = (runtime: Runtime, call: ModelCallDone) => void;

/**
 * What happens to an admission after the checks. Exactly one of `refused` (a check or the provider
 * resolution threw), `committed` (the request's writes committed: the run exists and will execute)
 * or `abandoned` (admitted, then something failed before the commit, or the commit did not take)
 * happens to each admission that began. Checks that hold resources (usage reservations) release them on `abandoned`
 * and link them to the run on `committed`.
 */
export interface AdmissionListener {
  refused?(ctx: ModelWorkContext, request: ModelWorkRequest, error: unknown): Promise<void> | void;
  /**
   * Inside the transaction of the admitted request's writes, once the run row is written: what
   * must commit with them (the enforcement record), added with `rtx.insert` so that it is written
   * in the transaction's batched INSERTs rather than as one more statement through the unit of
   * work. A throw rolls the writes back (then `abandoned`).
   */
  recording?(rtx: RowInserts, ctx: ModelWorkContext, admission: Admission, runId: string, usageAtStart: AdmissionUsage): Promise<void> | void;
  committed?(ctx: ModelWorkContext, admission: Admission, runId: string): Promise<void> | void;
  abandoned?(ctx: ModelWorkContext, admission: Admission, reason: unknown): Promise<void> | void;
}

export class RunHooks {
  readonly admissionChecks: AdmissionCheck[] = [];
  readonly outputChecks: OutputCheck[] = [];
  readonly runFinishedListeners: RunFinishedListener[] = [];
  readonly modelCallListeners: ModelCallListener[] = [];
  readonly admissionListeners: AdmissionListener[] = [];

  /** Returns a function that removes the check again. */
  addAdmissionCheck(check: AdmissionCheck): () => void {
    return add(this.admissionChecks, check);
  }

  addOutputCheck(check: OutputCheck): () => void {
    return add(this.outputChecks, check);
  }

  addRunFinishedListener(listener: RunFinishedListener): () => void {
    return add(this.runFinishedListeners, listener);
  }

  addModelCallListener(listener: ModelCallListener): () => void {
    return add(this.modelCallListeners, listener);
  }

  addAdmissionListener(listener: AdmissionListener): () => void {
    return add(this.admissionListeners, listener);
  }
}

function add<T>(list: T[], item: T): () => void {
  list.push(item);
  return () => {
    const i = list.indexOf(item);
    if (i >= 0) list.splice(i, 1);
  };
}

/** This app's hooks (one set per runtime, so two apps in one process do not share listeners). */
export function runHooks(runtime: Runtime): RunHooks {
  return runtime.singleton('runs.hooks', () => new RunHooks());
}

/**
 * The gate before model work: resolves the provider the virtual key names in the workspace
 * (404 unknown, 403 disabled), then runs every admission check. Returns the provider the run
 * will use.
 */
export async function admitModelWork(ctx: ModelWorkContext, request: ModelWorkRequest): Promise<Admission> {
  const hooks = runHooks(ctx.runtime);
  if (!request.virtualKey) {
    throw new BadRequestError(
      'Missing virtual key: send the x-gateway-virtual-key header with the slug of a provider in your workspace (for example `local`).',
      { code: 'missing_virtual_key' },
    );
  }
  let provider: ResolvedProvider;
  try {
    provider = await resolveProvider(ctx.em, ctx.runtime, request.workspaceId, request.virtualKey);
  } catch (error) {
    await notify(ctx, hooks, (l) => l.refused?.(ctx, request, error));
    throw error;
  }
  const admission: Admission = { request, provider, answer: { status: 200, headers: {} } };
  try {
    for (const check of [...hooks.admissionChecks]) await check(ctx, admission);
  } catch (error) {
    // A refusal after an earlier check decided headers (x-ratelimit-* before a 412) carries them too.
    if (error instanceof AppError) for (const [name, value] of Object.entries(admission.answer.headers)) error.headers[name] ??= value;
    // An earlier check may hold something (a usage reservation) that must be given back.
    await notify(ctx, hooks, (l) => l.abandoned?.(ctx, admission, error));
    await notify(ctx, hooks, (l) => l.refused?.(ctx, request, error));
    throw error;
  }
  return admission;
}

/**
 * What a listener may add to the admitted request's transaction: rows written with its batched
 * INSERTs (the run store's RunTx is one; named here so that this file need not import the store,
 * which imports it).
 */
export interface RowInserts {
  insert<T extends object>(schema: EntitySchema<T>, row: T): T;
}

/** The run's usage when an admission's writes commit (zero for a new run). */
export interface AdmissionUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** The request that created a run (its first admission), as its row holds it. */
export interface CreatingAdmission {
  kind: ModelWorkKind;
  requestId: string | null;
  /** When the run was created. */
  createdAt: Date;
}

/**
 * The requests that created these runs (one query), by run id. A run created before its row held
 * them (migration 0008) is absent: its first enforcement record holds them.
 */
export async function creatingAdmissions(em: EntityManager, runIds: readonly string[]): Promise<Map<string, CreatingAdmission>> {
  const runs = runIds.length
    ? await em.find(RunSchema, { id: { $in: [...runIds] }, admissionKind: { $ne: null } }, { fields: ['admissionKind', 'admissionRequestId', 'createdAt'], disableIdentityMap: true })
    : [];
  return new Map(runs.map((run) => [run.id, { kind: run.admissionKind as ModelWorkKind, requestId: run.admissionRequestId ?? null, createdAt: run.createdAt }]));
}

/** Call inside the admitted request's transaction, after the run row: see `AdmissionListener.recording`. */
export async function recordAdmission(rtx: RowInserts, ctx: ModelWorkContext, admission: Admission, runId: string, usageAtStart: AdmissionUsage): Promise<void> {
  for (const listener of [...runHooks(ctx.runtime).admissionListeners]) await listener.recording?.(rtx, ctx, admission, runId, usageAtStart);
}

/** The admitted request's writes committed: `runId` will execute. Call before queueing the run. */
export async function admissionCommitted(ctx: ModelWorkContext, admission: Admission, runId: string): Promise<void> {
  await notify(ctx, runHooks(ctx.runtime), (l) => l.committed?.(ctx, admission, runId));
}

/** The admitted request will not run (a write failed, a race was lost): give back what it holds. */
export async function abandonAdmission(ctx: ModelWorkContext, admission: Admission, reason: unknown): Promise<void> {
  await notify(ctx, runHooks(ctx.runtime), (l) => l.abandoned?.(ctx, admission, reason));
}

/** Listener failures are logged, never turned into the request's failure. */
async function notify(ctx: ModelWorkContext, hooks: RunHooks, call: (listener: AdmissionListener) => Promise<void> | void): Promise<void> {
  for (const listener of [...hooks.admissionListeners]) {
    try {
      await call(listener);
    } catch (error) {
      ctx.runtime.logger.error({ err: error }, 'admission listener failed');
    }
  }
}

/** The first failing verdict of the registered output checks, or a pass. */
export async function checkOutput(runtime: Runtime, input: OutputCheckInput): Promise<OutputVerdict> {
  for (const check of [...runHooks(runtime).outputChecks]) {
    const verdict = await check(runtime, input);
    if (!verdict.pass) return verdict;
  }
  return { pass: true };
}

/** Tells every listener that a run ended; never throws. */
export async function onRunFinished(runtime: Runtime, run: RunSummary, usage: RunUsage): Promise<void> {
  for (const listener of [...runHooks(runtime).runFinishedListeners]) {
    try {
      await listener(runtime, run, usage);
    } catch (error) {
      runtime.logger.error({ err: error, runId: run.id }, 'run-finished listener failed');
    }
  }
}

/** Tells every listener that one model call of a run finished; never throws, never waits. */
export function onModelCall(runtime: Runtime, call: ModelCallDone): void {
  for (const listener of [...runHooks(runtime).modelCallListeners]) {
    try {
      listener(runtime, call);
    } catch (error) {
      runtime.logger.error({ err: error, runId: call.run.id }, 'model-call listener failed');
    }
  }
}
