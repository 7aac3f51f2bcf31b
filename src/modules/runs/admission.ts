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
 *   hooks.addOutputCheck(async (runtime, output) => ({ pass: false, code: 'guardrail_denied', message: '…' }));
 *   hooks.addRunFinishedListener(async (runtime, run, usage) => { … record usage … });
 *
 * Admission checks run in registration order and refuse by throwing an AppError (412, 429, 446…);
 * they may set `ctx.response` headers or status (rate-limit headers, 246) when the context is a
 * request's. Output checks run in order until one fails. Run-finished listeners run after the
 * terminal commit, each isolated: one that throws is logged and does not affect the run or the
 * other listeners.
 */
import type { RequestContext, ServiceContext } from '../../context.js';
import { BadRequestError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import { resolveProvider, type ResolvedProvider } from '../integrations/provider-resolution.js';
import type { RunUsage } from './run.entity.js';
import type { RunStatus } from './run-state.js';

export type { ResolvedProvider };

export type ModelWorkKind = 'create_run' | 'create_thread_and_run' | 'submit_tool_outputs';

/** A service context, plus the request's response shaping when it comes from an HTTP request. */
export type ModelWorkContext = ServiceContext & Partial<Pick<RequestContext, 'request' | 'response' | 'afterResponse' | 'requestId' | 'log'>>;

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
}

export interface Admission {
  request: ModelWorkRequest;
  provider: ResolvedProvider;
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

export type OutputVerdict = { pass: true } | { pass: false; code: string; message: string };

export type OutputCheck = (runtime: Runtime, input: OutputCheckInput) => Promise<OutputVerdict> | OutputVerdict;

export type RunFinishedListener = (runtime: Runtime, run: RunSummary, usage: RunUsage) => Promise<void> | void;

export class RunHooks {
  readonly admissionChecks: AdmissionCheck[] = [];
  readonly outputChecks: OutputCheck[] = [];
  readonly runFinishedListeners: RunFinishedListener[] = [];

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

/** The virtual key a request carries: `x-gateway-virtual-key`, else `x-portkey-virtual-key`. */
export function virtualKeyFromHeaders(headers: Headers | undefined): string | null {
  if (!headers) return null;
  return headers.get('x-gateway-virtual-key') ?? headers.get('x-portkey-virtual-key') ?? null;
}

/**
 * The gate before model work: resolves the provider the virtual key names in the workspace
 * (404 unknown, 403 disabled), then runs every admission check. Returns the provider the run
 * will use.
 */
export async function admitModelWork(ctx: ModelWorkContext, request: ModelWorkRequest): Promise<Admission> {
  if (!request.virtualKey) {
    throw new BadRequestError(
      'Missing virtual key: send the x-gateway-virtual-key header with the slug of a provider in your workspace (for example `local`).',
      { code: 'missing_virtual_key' },
    );
  }
  const provider = await resolveProvider(ctx.em, ctx.runtime, request.workspaceId, request.virtualKey);
  const admission: Admission = { request, provider };
  for (const check of [...runHooks(ctx.runtime).admissionChecks]) await check(ctx, admission);
  return admission;
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
