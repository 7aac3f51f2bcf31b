/**
 * The run executor: runs queued runs in the background of the server, at most RUN_CONCURRENCY at
 * a time, independently of any client connection. A run's model call never happens inside a
 * database transaction. Its progress (the start, text deltas, tool calls, the end) is written in
 * short transactions that also append the run's events; what arrives while one is pending joins
 * it, so a model that answers at once costs one transaction and a slow stream one per pause.
 * Every status move is conditional, so a cancel or a shutdown racing the executor is settled
 * cleanly.
 */
import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '../../errors.js';
import { prefixedId } from '../../lib/ids.js';
import type { Runtime } from '../../runtime.js';
import { resolveProvider } from '../integrations/provider-resolution.js';
import { checkOutput, onModelCall, type ResolvedProvider } from './admission.js';
import { buildConversation, functionTools, modelToolChoice, type ConversationMessage } from './conversation.js';
import { execute, RunMovedError, type EventDraft } from './event-log.js';
import { MessageSchema, type Message } from './message.entity.js';
import { ModelError, stepErrorOf, type ModelRequest, type ToolCall, type Usage } from './models/model.js';
import { modelRegistry } from './models/registry.js';
import { nextOrdinal } from './ordinal.js';
import { claimRun, releaseRun, renewLeases } from './run-lease.js';
import { RunStepSchema, type RunStep } from './run-step.entity.js';
import { commitRun, failRun, runEvent, runSummary, settleCancelled, type RunTx } from './run-store.js';
import { RunSchema, type Run } from './run.entity.js';
import { textOf, messageDelta, messageObject, runStepObject } from './wire.js';

/** Why a running job was aborted. */
class StopReason extends Error {
  constructor(readonly kind: 'cancel' | 'shutdown') {
    super(kind === 'cancel' ? 'The run was cancelled.' : 'The gateway is shutting down.');
  }
}

/** Cancels travel between instances on this topic (the run id). */
const RUN_CANCEL_TOPIC = 'runs.cancel';

export const SHUTDOWN_ERROR = { code: 'server_error', message: 'The gateway shut down while the run was in progress.' };
export const INTERNAL_ERROR = { code: 'server_error', message: 'The run failed because of an internal error in the gateway.' };

/**
 * What the request that queued a run already holds: the run as its transaction committed it, the
 * provider its admission resolved a moment ago, and for a new thread its messages (a thread's
 * messages cannot change while it has an active run). A job that starts at once takes them
 * instead of reading them again; a run that waits for a free slot (or comes from recovery) reads
 * them afresh. Either way the job's first write moves the run only if it is still queued.
 */
export interface QueuedRun {
  run: Run;
  provider: ResolvedProvider;
  /** The thread's messages in order, when the request wrote them all (thread and run at once). */
  messages?: ConversationMessage[];
}

export class RunExecutor {
  private readonly waiting: string[] = [];
  /** Handed over by `enqueue` to the job `pump` starts in the same call, never kept beyond it. */
  private readonly handedOver = new Map<string, QueuedRun>();
  private readonly jobs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private renewing: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly runtime: Runtime) {
    // A cancel received by another instance reaches the job wherever it runs.
    runtime.pubsub.on(RUN_CANCEL_TOPIC, (runId) => this.abortJob(runId as string));
  }

  /** Queues a run for execution (after the commit that made it `queued`). Idempotent. */
  enqueue(runId: string, known?: QueuedRun): void {
    if (this.stopped || this.jobs.has(runId) || this.waiting.includes(runId)) return;
    this.waiting.push(runId);
    if (known) this.handedOver.set(runId, known);
    this.pump();
    this.handedOver.delete(runId);
  }

  /**
   * Aborts the run's model call wherever it executes (this process at once, another instance
   * through the pub/sub); the job then settles the cancel. True when this process executes it.
   */
  cancel(runId: string): boolean {
    if (this.abortJob(runId)) return true;
    this.runtime.pubsub.publish(RUN_CANCEL_TOPIC, runId);
    return false;
  }

  private abortJob(runId: string): boolean {
    const job = this.jobs.get(runId);
    if (!job) return false;
    job.controller.abort(new StopReason('cancel'));
    return true;
  }

  /** Renews this instance's leases while it executes anything (a third of the lease apart). */
  private startRenewing(): ReturnType<typeof setInterval> {
    const timer = setInterval(() => {
      if (this.jobs.size === 0) return;
      renewLeases(this.runtime).catch((error: unknown) => this.runtime.logger.error({ err: error }, 'run lease renewal failed'));
    }, Math.floor(this.runtime.config.RUN_LEASE_MS / 3));
    timer.unref();
    return timer;
  }

  isRunning(runId: string): boolean {
    return this.jobs.has(runId);
  }

  /** Executing or queued in this process. */
  has(runId: string): boolean {
    return this.jobs.has(runId) || this.waiting.includes(runId);
  }

  /** Resolves when nothing is queued or executing (tests; shutdown). */
  whenIdle(): Promise<void> {
    if (this.jobs.size === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work and ends executing runs (they fail with SHUTDOWN_ERROR); queued runs stay queued. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.length = 0;
    for (const job of this.jobs.values()) job.controller.abort(new StopReason('shutdown'));
    await Promise.allSettled([...this.jobs.values()].map((job) => job.done));
    if (this.renewing) clearInterval(this.renewing);
    this.notifyIdle();
  }

  private pump(): void {
    while (!this.stopped && this.jobs.size < this.runtime.config.RUN_CONCURRENCY && this.waiting.length > 0) {
      const runId = this.waiting.shift()!;
      const controller = new AbortController();
      const done = this.execute(runId, controller.signal, this.handedOver.get(runId))
        .catch((error: unknown) => this.runtime.logger.error({ err: error, runId }, 'run job crashed'))
        .finally(() => {
          this.jobs.delete(runId);
          this.pump();
          this.notifyIdle();
        });
      this.jobs.set(runId, { controller, done });
    }
  }

  private notifyIdle(): void {
    if (this.jobs.size > 0 || this.waiting.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async execute(runId: string, signal: AbortSignal, known: QueuedRun | undefined): Promise<void> {
    const { runtime } = this;
    // Exactly one instance executes a run: the one whose lease claim wins (run-lease.ts).
    if (!(await claimRun(runtime, runId, 'queued'))) {
      const row = await runtime.fork().findOne(RunSchema, { id: runId }, { fields: ['status'] });
      // Still queued: another instance holds it. Otherwise it moved on (a cancel, say) before it started.
      if (row?.status !== 'queued') await this.settleIfCancelling(runId);
      return;
    }
    this.renewing ??= this.startRenewing();
    // The move to in_progress is written with the job's first progress (RunJob.write).
    const run = known?.run ?? (await runtime.fork().findOne(RunSchema, { id: runId }));
    if (run?.status !== 'queued') {
      await this.settleIfCancelling(runId);
      return;
    }
    if (signal.aborted) return releaseRun(runtime, runId);
    const job = new RunJob(runtime, run, signal, known);
    try {
      await job.execute();
    } catch (error) {
      await this.handleFailure(job, error, signal);
    }
  }

  private async handleFailure(job: RunJob, error: unknown, signal: AbortSignal): Promise<void> {
    const runId = job.runId;
    const reason = signal.aborted ? signal.reason : null;
    const log = this.runtime.logger.child({ runId });
    await job.settled();
    if (reason instanceof StopReason && reason.kind === 'shutdown') {
      // Never started as far as the database knows: it stays queued for the next start (or instance).
      if (job.started) await failRun(this.runtime, runId, 'in_progress', SHUTDOWN_ERROR);
      else await releaseRun(this.runtime, runId);
      return;
    }
    if (reason instanceof StopReason || error instanceof RunMovedError || !(await job.start())) {
      await this.settleIfCancelling(runId);
      return;
    }
    if (error instanceof ModelError) {
      log.warn({ code: error.code, status: error.status }, 'model call failed');
      const failed = await failRun(this.runtime, runId, 'in_progress', { code: error.code, message: error.message });
      if (!failed) await this.settleIfCancelling(runId);
      return;
    }
    log.error({ err: error }, 'run failed unexpectedly');
    const failed = await failRun(this.runtime, runId, 'in_progress', INTERNAL_ERROR);
    if (!failed) await this.settleIfCancelling(runId);
  }

  private async settleIfCancelling(runId: string): Promise<void> {
    const row = await this.runtime.fork().findOne(RunSchema, { id: runId }, { fields: ['status'] });
    if (row?.status === 'cancelling') await settleCancelled(this.runtime, runId);
  }
}

export function runExecutor(runtime: Runtime): RunExecutor {
  return runtime.singleton('runs.executor', () => new RunExecutor(runtime));
}

/**
 * How long a model may stay silent before the run's move to in_progress is written on its own. A
 * model that sends its first output sooner has the move written with that output, in the same
 * transaction: a separate one (with its event published to every follower) took 3-5 ms of the
 * event loop while the model's answer waited behind it, `npm run bench`'s streamed run.
 */
const START_WRITE_DELAY_MS = 20;

/**
 * One model call of one run, from `queued` to its next resting status. What the model sends is
 * kept in memory and written by `write`: a pending write is queued with `setImmediate`, so output
 * that arrives before the event loop turns (a fast model) joins the same transaction, and the
 * run's end takes whatever is still pending into its own. The move to in_progress waits for the
 * model's first output or START_WRITE_DELAY_MS, whichever comes first.
 */
class RunJob {
  /**
   * The open message and its step, as this job last wrote them (or is about to: `written` is set
   * once the transaction that inserts them has committed). Nobody else changes them while the
   * run is in progress, so the job keeps them rather than reading them back to close them.
   */
  private message: { message: Message; step: RunStep; written: boolean } | null = null;
  private text = '';
  /** Text deltas not yet written. */
  private pending: string[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  /** Writes the move to in_progress if the model is still silent after START_WRITE_DELAY_MS. */
  private startTimer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  /** The move to `in_progress` has been committed. */
  started = false;
  private forked: EntityManager | null = null;

  constructor(
    private readonly runtime: Runtime,
    private run: Run,
    private readonly signal: AbortSignal,
    private readonly known?: QueuedRun,
  ) {}

  get runId(): string {
    return this.run.id;
  }

  /**
   * The EntityManager of the job's writes, forked at the first and kept: each write is a
   * transaction on a fork of it (commitRun), and the job writes plain rows and statements, never
   * entities of a unit of work, so nothing accumulates here between writes. A fork per write
   * cost about as much as one of its statements.
   */
  private get em(): EntityManager {
    return (this.forked ??= this.runtime.fork());
  }

  async execute(): Promise<void> {
    const provider = await this.provider();
    const request = await this.request();
    if (!request) return;
    const adapter = modelRegistry(this.runtime).adapterFor(provider, this.runtime);

    let calls: ToolCall[] = [];
    let done: { finishReason: 'stop' | 'length' | 'tool_calls'; usage: Usage } | null = null;
    const startedAt = performance.now();
    try {
      // The call starts at once (a remote model's request goes out), then the request that queued
      // the run answers before its output is taken: the upstream's time overlaps the answer's.
      const events = adapter.stream(request)[Symbol.asyncIterator]();
      const first = events.next();
      first.catch(() => undefined); // awaited below; not "unhandled" while the request answers
      await new Promise((resolve) => setImmediate(resolve));
      // A model slow to answer shows the run in_progress meanwhile; a fast one writes it all at
      // once. The wait counts from here, once the queueing request has had its turn: counted from
      // the call's start, a busy gateway's own work (other requests' answers) made a model that
      // answered at once look silent, and its run paid a separate transaction for the start.
      this.startTimer = setTimeout(() => this.schedule(), START_WRITE_DELAY_MS);
      try {
        for (let next = await first; !next.done; next = await events.next()) {
          const event = next.value;
          if (this.signal.aborted) throw this.signal.reason;
          if (this.failure) throw this.failure;
          if (event.type === 'text_delta') this.delta(event.text);
          else if (event.type === 'tool_calls') calls = event.calls;
          else done = event;
        }
      } finally {
        // What for-await does when left early: the adapter ends its call (closes its connection).
        await events.return?.(undefined);
      }
      if (this.signal.aborted) throw this.signal.reason;
      if (!done) throw new ModelError('server_error', 'The model stream ended without finishing its answer.');
    } catch (error) {
      // A call the provider failed is a model call too: the request log records it with its status.
      if (error instanceof ModelError) {
        const failure = { status: error.status ?? 502, code: error.code };
        onModelCall(this.runtime, { run: runSummary(this.run), provider, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, upstreamMs: performance.now() - startedAt, failure });
      }
      throw error;
    }
    onModelCall(this.runtime, { run: runSummary(this.run), provider, usage: done.usage, upstreamMs: performance.now() - startedAt });

    if (calls.length > 0 && done.finishReason !== 'length') return this.requireAction(calls, done.usage);
    if (done.finishReason === 'length') return this.end('incomplete', done.usage);
    const verdict = await checkOutput(this.runtime, { run: runSummary(this.run), provider, text: this.text });
    if (!verdict.pass) return this.end('failed', done.usage, { code: verdict.code, message: verdict.message });
    return this.end('completed', done.usage);
  }

  /**
   * The provider the run's virtual key names now (decrypted key), or the one its admission has
   * just resolved (QueuedRun); gone or disabled → the run fails.
   */
  private async provider(): Promise<ResolvedProvider> {
    if (this.known) return this.known.provider;
    try {
      return await resolveProvider(this.runtime.fork(), this.runtime, this.run.workspaceId, this.run.virtualKey);
    } catch (error) {
      if (error instanceof AppError) {
        throw new ModelError('server_error', `The provider of virtual key '${this.run.virtualKey}' cannot be used: ${error.message}`);
      }
      throw error;
    }
  }

  /** The model request, or null when the prompt cannot fit (the run has then ended incomplete). */
  private async request(): Promise<ModelRequest | null> {
    const run = this.run;
    // Forked only for a read (a run handed over at its creation needs none).
    let reads: EntityManager | undefined;
    const em = () => (reads ??= this.runtime.fork());
    const [messages, steps] = await Promise.all([
      this.known?.messages ??
        em().find(MessageSchema, { threadId: run.threadId }, { orderBy: { ordinal: 'asc' } }).then((rows) => rows.map((m) => ({ ordinal: m.ordinal, role: m.role, text: textOf(m.content) }))),
      // A run that never started has had no tool round yet (started_at is kept across rounds).
      run.startedAt ? em().find(RunStepSchema, { runId: run.id, type: 'tool_calls', status: 'completed' }, { orderBy: { ordinal: 'asc' } }) : [],
    ]);
    const conversation = await buildConversation({
      instructions: run.instructions,
      messages,
      toolRounds: steps.flatMap((s) =>
        s.stepDetails.type === 'tool_calls'
          ? [{ ordinal: s.ordinal, calls: s.stepDetails.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments, output: c.function.output ?? '' })) }]
          : [],
      ),
      truncation: run.truncationStrategy,
      maxPromptTokens: run.maxPromptTokens ?? null,
    });
    // max_completion_tokens bounds the whole run: later rounds get what earlier ones left.
    const completionBudget = run.maxCompletionTokens == null ? null : run.maxCompletionTokens - run.completionTokens;
    if (!conversation.ok || (completionBudget !== null && completionBudget <= 0)) {
      const reason = conversation.ok ? 'max_completion_tokens' : 'max_prompt_tokens';
      await this.finish('incomplete', { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, null, reason);
      return null;
    }
    return {
      model: run.model,
      messages: conversation.messages,
      tools: functionTools(run.tools),
      toolChoice: modelToolChoice(run.toolChoice),
      parallelToolCalls: run.parallelToolCalls,
      maxCompletionTokens: completionBudget,
      maxPromptTokens: run.maxPromptTokens ?? null,
      temperature: run.temperature ?? null,
      topP: run.topP ?? null,
      responseFormat: run.responseFormat,
      signal: this.signal,
    };
  }

  /** Every delta is one event; they are written with the next write. */
  private delta(text: string): void {
    if (text === '') return;
    this.text += text;
    this.pending.push(text);
    this.schedule();
  }

  private schedule(): void {
    this.stopStartTimer();
    if (this.scheduled || this.failure) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = null;
      this.writing = this.writing.then(() => this.write()).catch((error: unknown) => {
        this.failure ??= error;
      });
    });
  }

  /** Waits for the writes under way; a write not yet begun is left to the caller's own. */
  async settled(): Promise<void> {
    this.stopStartTimer();
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    await this.writing;
  }

  private stopStartTimer(): void {
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = null;
  }

  /** Writes the start if it is not written yet; false when the run was moved by someone else first. */
  async start(): Promise<boolean> {
    try {
      await this.write();
      return true;
    } catch (error) {
      if (error instanceof RunMovedError) return false;
      throw error;
    }
  }

  /**
   * One transaction with what is pending — the move to in_progress if not yet written, the text
   * received since the last write (opening the message on the first) — and then `end`'s writes.
   * Its events are appended in that order.
   */
  private async write(end?: (rtx: RunTx) => Promise<EventDraft[]>): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.started && this.pending.length === 0 && !end) return;
    const deltas = this.pending;
    this.pending = [];
    await commitRun(this.runtime, this.em, async (rtx) => {
      const drafts: EventDraft[] = [];
      if (!this.started) {
        const run = await rtx.move(this.run.id, 'queued', 'in_progress');
        if (!run) throw new RunMovedError(this.run.id);
        this.run = run;
        drafts.push(runEvent(run));
      }
      if (deltas.length > 0) {
        // A message opened here is inserted with its text so far; an open one gets it (the end writes it whole).
        if (!this.message) drafts.push(...this.openMessage(rtx));
        else if (!end) await execute(rtx.tx, 'update thread_messages set content = ? where id = ?', [JSON.stringify(this.content()), this.message.message.id]);
        const id = this.message!.message.id;
        drafts.push(...deltas.map((text) => ({ event: 'thread.message.delta', data: messageDelta(id, text) })));
      }
      if (end) drafts.push(...(await end(rtx)));
      await rtx.events(this.run.id, drafts, end || !this.started ? undefined : 'in_progress');
    });
    this.started = true;
    if (this.message) this.message.written = true;
  }

  private content(): Message['content'] {
    return [{ type: 'text', text: { value: this.text, annotations: [] } }];
  }

  /** Creates the message step and the (empty, in-progress) message inside `rtx`. */
  private openMessage(rtx: RunTx): EventDraft[] {
    const now = rtx.now();
    const run = this.run;
    const messageId = prefixedId('msg');
    const stepOrdinal = nextOrdinal();
    const message = rtx.insert(MessageSchema, {
      id: messageId,
      organisationId: run.organisationId,
      workspaceId: run.workspaceId,
      threadId: run.threadId,
      ordinal: nextOrdinal(),
      role: 'assistant',
      content: [],
      assistantId: run.assistantId,
      runId: run.id,
      attachments: [],
      metadata: {},
      status: 'in_progress',
      incompleteDetails: null,
      createdAt: now,
      completedAt: null,
      incompleteAt: null,
    });
    const step = rtx.insert(RunStepSchema, {
      id: prefixedId('step'),
      organisationId: run.organisationId,
      workspaceId: run.workspaceId,
      runId: run.id,
      threadId: run.threadId,
      assistantId: run.assistantId,
      ordinal: stepOrdinal,
      type: 'message_creation',
      status: 'in_progress',
      stepDetails: { type: 'message_creation', message_creation: { message_id: messageId } },
      lastError: null,
      usage: null,
      createdAt: now,
      expiredAt: null,
      cancelledAt: null,
      failedAt: null,
      completedAt: null,
    });
    this.message = { message, step, written: false };
    const drafts = [
      { event: 'thread.run.step.created', data: runStepObject(step) },
      { event: 'thread.run.step.in_progress', data: runStepObject(step) },
      { event: 'thread.message.created', data: messageObject(message) },
      { event: 'thread.message.in_progress', data: messageObject(message) },
    ];
    // The events show the message as created (empty); the row is inserted with the text so far.
    if (this.text !== '') message.content = this.content();
    return drafts;
  }

  /** Closes the open message and its step: completed, or incomplete (`max_tokens`, `run_failed`). */
  private async closeMessage(rtx: RunTx, usage: Usage, incompleteReason: string | null, lastError: { code: string; message: string } | null = null) {
    const drafts: EventDraft[] = this.message ? [] : this.openMessage(rtx);
    const now = rtx.now();
    const { message, step, written } = this.message!;
    message.content = this.text === '' ? [] : this.content();
    if (incompleteReason) {
      message.status = 'incomplete';
      message.incompleteDetails = { reason: incompleteReason };
      message.incompleteAt = now;
    } else {
      message.status = 'completed';
      message.completedAt = now;
    }
    const failed = incompleteReason === 'run_failed';
    step.status = failed ? 'failed' : 'completed';
    if (failed) {
      step.failedAt = now;
      step.lastError = stepErrorOf(lastError);
    } else {
      step.completedAt = now;
    }
    step.usage = usage;
    // Opened by this transaction: inserted as they are now at its end. Else written by an earlier one.
    if (written) {
      await rtx.update(MessageSchema, message);
      await rtx.update(RunStepSchema, step);
    }
    this.message = null;
    this.text = '';
    drafts.push(
      { event: incompleteReason ? 'thread.message.incomplete' : 'thread.message.completed', data: messageObject(message) },
      { event: failed ? 'thread.run.step.failed' : 'thread.run.step.completed', data: runStepObject(step) },
    );
    return { drafts, step };
  }

  private async requireAction(calls: ToolCall[], usage: Usage): Promise<void> {
    await this.settled();
    await this.write(async (rtx) => {
      const run = await rtx.move(this.run.id, 'in_progress', 'requires_action');
      if (!run) throw new RunMovedError(this.run.id);
      const drafts: EventDraft[] = this.message ? (await this.closeMessage(rtx, usage, null)).drafts : [];
      const now = rtx.now();
      const step = rtx.insert(RunStepSchema, {
        id: prefixedId('step'),
        organisationId: run.organisationId,
        workspaceId: run.workspaceId,
        runId: run.id,
        threadId: run.threadId,
        assistantId: run.assistantId,
        ordinal: nextOrdinal(),
        type: 'tool_calls',
        status: 'in_progress',
        stepDetails: {
          type: 'tool_calls',
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments, output: null } })),
        },
        lastError: null,
        usage: drafts.length ? null : usage,
        createdAt: now,
        expiredAt: null,
        cancelledAt: null,
        failedAt: null,
        completedAt: null,
      });
      run.requiredToolCalls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
      addUsage(run, usage);
      drafts.push(
        { event: 'thread.run.step.created', data: runStepObject(step) },
        { event: 'thread.run.step.in_progress', data: runStepObject(step) },
        runEvent(run),
      );
      return drafts;
    });
  }

  private end(status: 'completed' | 'incomplete' | 'failed', usage: Usage, lastError: { code: string; message: string } | null = null): Promise<void> {
    return this.finish(status, usage, lastError, status === 'incomplete' ? 'max_completion_tokens' : null);
  }

  /** The run's terminal transaction: message and step closed, usage added, run moved and announced. */
  private async finish(
    status: 'completed' | 'incomplete' | 'failed',
    usage: Usage,
    lastError: { code: string; message: string } | null,
    incompleteReason: string | null,
  ): Promise<void> {
    await this.settled();
    await this.write(async (rtx) => {
      const run = await rtx.move(this.run.id, 'in_progress', status);
      if (!run) throw new RunMovedError(this.run.id);
      // A completed run always leaves a message (possibly empty); otherwise only an opened one is closed.
      const hasAnswer = this.message !== null || status === 'completed';
      const messageReason = status === 'completed' ? null : status === 'failed' ? 'run_failed' : 'max_tokens';
      const drafts: EventDraft[] = hasAnswer ? (await this.closeMessage(rtx, usage, messageReason, lastError)).drafts : [];
      if (status === 'failed') run.lastError = lastError;
      if (status === 'incomplete') run.incompleteDetails = { reason: incompleteReason ?? 'max_completion_tokens' };
      addUsage(run, usage);
      drafts.push(runEvent(run));
      return drafts;
    });
  }
}

function addUsage(run: Run, usage: Usage): void {
  run.promptTokens += usage.prompt_tokens;
  run.completionTokens += usage.completion_tokens;
}
