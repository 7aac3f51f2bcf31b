/**
 * Assistants, threads, messages and runs: the rules behind both front doors. Every object belongs
 * to a workspace; new ones go to the caller's (a workspace key's own, or the organisation's
 * default), and objects outside what the caller may see do not exist for it (404).
 */
import type { EntityManager, EntitySchema, RequiredEntityData } from '@mikro-orm/core';
import { cachedHomeWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { unixSeconds } from '../../lib/clock.js';
import { configCache } from '../../lib/config-cache.js';
import { prefixedId } from '../../lib/ids.js';
import type { Workspace } from '../tenancy/workspace.entity.js';
import { abandonAdmission, admissionCommitted, admitModelWork, recordAdmission, type Admission, type Admitted, type ModelWorkContext, type ModelWorkKind } from './admission.js';
import { AssistantSchema, type Assistant } from './assistant.entity.js';
import { execute, readEvents, type EventDraft, type RunEventRecord } from './event-log.js';
import { runExecutor, type QueuedRun } from './executor.js';
import { MessageSchema, type Message, type TextContent } from './message.entity.js';
import { nextOrdinal } from './ordinal.js';
import { pageOf, pagesOf, type PageArgs } from './pagination.js';
import { RunFollower, type FollowOptions } from './run-follower.js';
import { RunStepSchema } from './run-step.entity.js';
import { commitRun, expireRun, runEvent, settleCancelled, type RunTx } from './run-store.js';
import { RunSchema, type Run } from './run.entity.js';
import { canCancel, expiresAtFor, isExpired, isTerminal } from './run-state.js';
import { ThreadSchema, type Thread } from './thread.entity.js';
import {
  runOptionsOf,
  type CreateAssistantInput,
  type CreateMessageInput,
  type CreateRunInput,
  type CreateThreadAndRunInput,
  type CreateThreadInput,
  type ModifyAssistantInput,
  type ModifyMetadataInput,
  type ModifyThreadInput,
  type RunOptions,
  type SubmitToolOutputsInput,
} from './runs.contract.js';
import {
  assistantObject,
  messageObject,
  runObject,
  runStepObject,
  textOf,
  threadObject,
  type AssistantObject,
  type ListObject,
  type MessageObject,
  type RunObject,
  type RunStepObject,
  type ThreadObject,
} from './wire.js';

/** A run as a mutation returns it: `stream_after` is the last event before the mutation's own. */
export type RunView = RunObject & { stream_after?: number };

/** What a delete answers (OpenAI's `assistant.deleted`, `thread.deleted`, `thread.message.deleted`). */
export interface DeletedObject {
  id: string;
  object: 'assistant.deleted' | 'thread.deleted' | 'thread.message.deleted';
  deleted: true;
}

// ---------------------------------------------------------------------------------------------
// Visibility

/** The workspace new objects go to (from the config cache). */
function homeWorkspace(ctx: ServiceContext): Promise<Workspace> {
  return cachedHomeWorkspace(ctx.em, ctx.runtime, ctx.principal);
}

/**
 * The runs a request has just queued (run creation, tool outputs), by its context. Following one
 * of them in the same request (REST `stream: true`) needs no lookup: the mutation has just checked
 * the thread and the run for this caller and written them, and a queued run cannot have expired.
 * Keyed by the context object, so the entry goes with the request.
 */
const queuedByRequest = new WeakMap<ServiceContext, Set<string>>();

/** Queues the run for execution and notes that this request queued it. */
function queue(ctx: ServiceContext, threadId: string, runId: string, known?: QueuedRun): void {
  runExecutor(ctx.runtime).enqueue(runId, known);
  const queued = queuedByRequest.get(ctx) ?? new Set<string>();
  queued.add(`${threadId}/${runId}`);
  queuedByRequest.set(ctx, queued);
}

function notFound(kind: string, id: string): NotFoundError {
  return new NotFoundError(`No ${kind} found with id '${id}'.`);
}

async function loadAssistant(ctx: ServiceContext, id: string): Promise<Assistant> {
  const assistant = await ctx.em.findOne(AssistantSchema, { id });
  if (!assistant || !ctx.scope.sees(assistant)) throw notFound('assistant', id);
  return assistant;
}

async function loadThread(ctx: ServiceContext, id: string): Promise<Thread> {
  const thread = await ctx.em.findOne(ThreadSchema, { id });
  if (!thread || !ctx.scope.sees(thread)) throw notFound('thread', id);
  return thread;
}

/** The run of the thread, with expiry applied (a run past `expires_at` is expired before it is read). */
async function loadRun(ctx: ServiceContext, threadId: string, runId: string): Promise<Run> {
  await loadThread(ctx, threadId);
  const run = await ctx.em.findOne(RunSchema, { id: runId, threadId });
  if (!run || !ctx.scope.sees(run)) throw notFound('run', runId);
  return applyExpiry(ctx, run);
}

async function applyExpiry(ctx: ServiceContext, run: Run): Promise<Run> {
  if (!isExpired({ status: run.status, expires_at: run.expiresAt ? unixSeconds(run.expiresAt) : null }, unixSeconds(ctx.runtime.clock.now()))) return run;
  await expireRun(ctx.runtime, run.id);
  return ctx.em.findOneOrFail(RunSchema, { id: run.id }, { refresh: true });
}

// ---------------------------------------------------------------------------------------------
// Assistants

/** Every create below takes its operation's parsed contract (runs.contract.ts): input is already checked. */
export async function createAssistant(ctx: ServiceContext, input: CreateAssistantInput): Promise<AssistantObject> {
  const fields = {
    model: input.model,
    name: input.name ?? null,
    description: input.description ?? null,
    instructions: input.instructions ?? null,
    tools: input.tools ?? [],
    toolResources: input.tool_resources ?? {},
    metadata: input.metadata ?? {},
    temperature: input.temperature ?? null,
    topP: input.top_p ?? null,
    responseFormat: input.response_format ?? 'auto',
  };
  const workspace = await homeWorkspace(ctx);
  const assistant = ctx.em.create(AssistantSchema, {
    id: prefixedId('asst'),
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    ordinal: nextOrdinal(),
    ...fields,
    createdAt: ctx.runtime.clock.now(),
  });
  await ctx.em.flush();
  return assistantObject(assistant);
}

export async function getAssistant(ctx: ServiceContext, id: string): Promise<AssistantObject> {
  return assistantObject(await loadAssistant(ctx, id));
}

/** Keys left out keep their value; `null` resets to what create stores for an absent key. */
export async function modifyAssistant(ctx: ServiceContext, id: string, input: ModifyAssistantInput): Promise<AssistantObject> {
  const assistant = await loadAssistant(ctx, id);
  if (input.model !== undefined) assistant.model = input.model;
  if (input.name !== undefined) assistant.name = input.name;
  if (input.description !== undefined) assistant.description = input.description;
  if (input.instructions !== undefined) assistant.instructions = input.instructions;
  if (input.tools !== undefined) assistant.tools = input.tools ?? [];
  if (input.tool_resources !== undefined) assistant.toolResources = input.tool_resources ?? {};
  if (input.metadata !== undefined) assistant.metadata = input.metadata ?? {};
  if (input.temperature !== undefined) assistant.temperature = input.temperature;
  if (input.top_p !== undefined) assistant.topP = input.top_p;
  if (input.response_format !== undefined) assistant.responseFormat = input.response_format ?? 'auto';
  await ctx.em.flush();
  configCache(ctx.runtime).invalidate('assistants');
  return assistantObject(assistant);
}

/** Runs copy what they use from their assistant when created, so existing runs are unaffected. */
export async function deleteAssistant(ctx: ServiceContext, id: string): Promise<DeletedObject> {
  const assistant = await loadAssistant(ctx, id);
  await ctx.em.nativeDelete(AssistantSchema, { id: assistant.id });
  ctx.em.getUnitOfWork().unsetIdentity(assistant);
  configCache(ctx.runtime).invalidate('assistants');
  return { id: assistant.id, object: 'assistant.deleted', deleted: true };
}

export async function listAssistants(ctx: ServiceContext, page: PageArgs): Promise<ListObject<AssistantObject>> {
  const workspace = await homeWorkspace(ctx);
  return pageOf(ctx.em, AssistantSchema, { workspaceId: workspace.id }, page, assistantObject);
}

// ---------------------------------------------------------------------------------------------
// Threads and messages

function threadFields(input: CreateThreadInput) {
  return {
    messages: (input.messages ?? []).map(messageFields),
    metadata: input.metadata ?? {},
    toolResources: input.tool_resources ?? {},
  };
}

function messageFields(input: CreateMessageInput) {
  return { role: input.role, content: input.content, attachments: input.attachments ?? [], metadata: input.metadata ?? {} };
}

type ValidMessage = ReturnType<typeof messageFields>;

/** How a new row is added: as an entity of the unit of work, or (the run path) as a row its RunTx inserts at its end. */
type AddRow = <T extends object>(schema: EntitySchema<T>, row: T) => T;
const entityOf =
  (em: EntityManager): AddRow =>
  (schema, row) =>
    em.create(schema, row as RequiredEntityData<typeof row>);
const rowOf =
  (rtx: RunTx): AddRow =>
  (schema, row) =>
    rtx.insert(schema, row);

function insertThread(add: AddRow, workspace: Workspace, fields: ReturnType<typeof threadFields>, now: Date, activeRunId: string | null): Thread {
  const thread = add(ThreadSchema, {
    id: prefixedId('thread'),
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    ordinal: nextOrdinal(),
    metadata: fields.metadata,
    toolResources: fields.toolResources,
    activeRunId,
    createdAt: now,
  });
  for (const message of fields.messages) insertMessage(add, thread, message, now);
  return thread;
}

function insertMessage(add: AddRow, thread: Thread, message: ValidMessage, now: Date): Message {
  return add(MessageSchema, {
    id: prefixedId('msg'),
    organisationId: thread.organisationId,
    workspaceId: thread.workspaceId,
    threadId: thread.id,
    ordinal: nextOrdinal(),
    role: message.role,
    content: message.content,
    assistantId: null,
    runId: null,
    attachments: message.attachments,
    metadata: message.metadata,
    status: 'completed',
    incompleteDetails: null,
    createdAt: now,
    completedAt: now,
    incompleteAt: null,
  });
}

export async function createThread(ctx: ServiceContext, input: CreateThreadInput): Promise<ThreadObject> {
  const fields = threadFields(input);
  const workspace = await homeWorkspace(ctx);
  const thread = await ctx.em.transactional(async (tx) => {
    const created = insertThread(entityOf(tx), workspace, fields, ctx.runtime.clock.now(), null);
    await tx.flush();
    return created;
  });
  return threadObject(thread);
}

export async function getThread(ctx: ServiceContext, id: string): Promise<ThreadObject> {
  return threadObject(await loadThread(ctx, id));
}

export async function listThreads(ctx: ServiceContext, page: PageArgs): Promise<ListObject<ThreadObject>> {
  const workspace = await homeWorkspace(ctx);
  return pageOf(ctx.em, ThreadSchema, { workspaceId: workspace.id }, page, threadObject);
}

/** The thread's run that is not terminal yet, if any (a stale pointer to a finished run is ignored). */
async function activeRunOf(em: EntityManager, thread: Thread): Promise<Run | null> {
  if (!thread.activeRunId) return null;
  const run = await em.findOne(RunSchema, { id: thread.activeRunId });
  return run && !isTerminal(run.status) ? run : null;
}

/** The refusal of a change a running thread cannot take (its run reads the messages). */
function busyThread(what: string, thread: Thread, run: Run): BadRequestError {
  return new BadRequestError(`Can't ${what} ${thread.id} while a run ${run.id} is active.`);
}

export async function modifyThread(ctx: ServiceContext, id: string, input: ModifyThreadInput): Promise<ThreadObject> {
  const thread = await loadThread(ctx, id);
  if (input.metadata !== undefined) thread.metadata = input.metadata ?? {};
  if (input.tool_resources !== undefined) thread.toolResources = input.tool_resources ?? {};
  await ctx.em.flush();
  return threadObject(thread);
}

/**
 * Deletes the thread with everything only it holds: messages, runs, steps and run events. The
 * request log, enforcement records and guardrail evaluations keep their rows (the audit trail
 * outlives the thread). A thread with an active run is refused; the decisive check is the
 * conditional delete itself, so a run claimed meanwhile makes it refuse rather than orphan the run.
 */
export async function deleteThread(ctx: ServiceContext, id: string): Promise<DeletedObject> {
  const thread = await loadThread(ctx, id);
  const active = await activeRunOf(ctx.em, thread);
  if (active) throw busyThread('delete', thread, active);
  const pointer = thread.activeRunId ?? null;
  await ctx.em.transactional(async (tx) => {
    const sql = pointer === null ? 'delete from threads where id = ? and active_run_id is null' : 'delete from threads where id = ? and active_run_id = ?';
    if ((await execute(tx, sql, pointer === null ? [thread.id] : [thread.id, pointer])) !== 1) {
      const now = await tx.findOne(ThreadSchema, { id: thread.id }, { refresh: true });
      const run = now && (await activeRunOf(tx, now));
      if (run) throw busyThread('delete', thread, run);
      throw notFound('thread', id);
    }
    // A thread's events and steps are its runs' (the executor writes each step with its run's
    // thread), found through the runs before those go: one short statement each however many runs,
    // with no list of their ids read first and written into the statement.
    await execute(tx, 'delete from run_events where run_id in (select id from runs where thread_id = ?)', [thread.id]);
    await execute(tx, 'delete from run_steps where run_id in (select id from runs where thread_id = ?)', [thread.id]);
    await tx.nativeDelete(RunSchema, { threadId: thread.id });
    await tx.nativeDelete(MessageSchema, { threadId: thread.id });
  });
  ctx.em.getUnitOfWork().unsetIdentity(thread);
  return { id: thread.id, object: 'thread.deleted', deleted: true };
}

export async function createMessage(ctx: ServiceContext, threadId: string, input: CreateMessageInput): Promise<MessageObject> {
  const thread = await loadThread(ctx, threadId);
  const fields = messageFields(input);
  const active = await activeRunOf(ctx.em, thread);
  if (active) throw busyThread('add messages to', thread, active);
  const message = insertMessage(entityOf(ctx.em), thread, fields, ctx.runtime.clock.now());
  await ctx.em.flush();
  return messageObject(message);
}

async function loadMessage(ctx: ServiceContext, threadId: string, messageId: string): Promise<{ thread: Thread; message: Message }> {
  const thread = await loadThread(ctx, threadId);
  const message = await ctx.em.findOne(MessageSchema, { id: messageId, threadId });
  if (!message) throw notFound('message', messageId);
  return { thread, message };
}

export async function getMessage(ctx: ServiceContext, threadId: string, messageId: string): Promise<MessageObject> {
  return messageObject((await loadMessage(ctx, threadId, messageId)).message);
}

/** Metadata only, so it is allowed while a run is active (the run never reads it). */
export async function modifyMessage(ctx: ServiceContext, threadId: string, messageId: string, input: ModifyMetadataInput): Promise<MessageObject> {
  const { message } = await loadMessage(ctx, threadId, messageId);
  if (input.metadata !== undefined) message.metadata = input.metadata ?? {};
  await ctx.em.flush();
  return messageObject(message);
}

/**
 * Refused while a run is active on the thread (the run reads the messages and may be writing
 * one). Steps that wrote the message keep naming its id, as OpenAI's do.
 */
export async function deleteMessage(ctx: ServiceContext, threadId: string, messageId: string): Promise<DeletedObject> {
  const { thread, message } = await loadMessage(ctx, threadId, messageId);
  const active = await activeRunOf(ctx.em, thread);
  if (active) throw busyThread('delete messages of', thread, active);
  await ctx.em.nativeDelete(MessageSchema, { id: message.id });
  ctx.em.getUnitOfWork().unsetIdentity(message);
  return { id: message.id, object: 'thread.message.deleted', deleted: true };
}

export async function listMessages(ctx: ServiceContext, threadId: string, page: PageArgs & { runId?: string | null }): Promise<ListObject<MessageObject>> {
  await loadThread(ctx, threadId);
  return pageOf(ctx.em, MessageSchema, page.runId ? { threadId, runId: page.runId } : { threadId }, page, messageObject);
}

/** Nested lists (GraphQL `Thread.messages`) for many threads in one query. */
export function listMessagesOfThreads(ctx: ServiceContext, threadIds: readonly string[], page: PageArgs): Promise<ListObject<MessageObject>[]> {
  return pagesOf(ctx.em, MessageSchema, 'threadId', threadIds, {}, page, messageObject);
}

// ---------------------------------------------------------------------------------------------
// Runs

/**
 * The assistant a new run copies its defaults from: a copy from the config cache (scope
 * `assistants`, dropped when an assistant is modified or deleted), checked against the caller.
 */
async function assistantForRun(ctx: ServiceContext, assistantId: string, workspaceId: string): Promise<Assistant> {
  const cache = configCache(ctx.runtime);
  await cache.syncWith(ctx.em);
  const assistant = await cache.get('assistants', assistantId, async () => {
    const found = await ctx.em.findOne(AssistantSchema, { id: assistantId });
    if (!found) throw notFound('assistant', assistantId); // a failed load is not kept
    return { ...found };
  });
  if (!ctx.scope.sees(assistant) || assistant.workspaceId !== workspaceId) throw notFound('assistant', assistantId);
  return assistant;
}

function assistantDefaults(a: Assistant) {
  return {
    model: a.model,
    instructions: a.instructions ?? null,
    tools: a.tools,
    temperature: a.temperature ?? null,
    topP: a.topP ?? null,
    responseFormat: a.responseFormat,
  };
}

function resolveVirtualKey(ctx: ModelWorkContext, virtualKey: string | null | undefined): string {
  return virtualKey ?? ctx.caller?.virtualKey ?? '';
}

function activeRunError(threadId: string, runId: string): BadRequestError {
  return new BadRequestError(`Thread ${threadId} already has an active run ${runId}.`);
}

/**
 * Makes `runId` the thread's active run with one conditional update; a thread whose active run is
 * still going refuses (400). A pointer to a run that has already ended is replaced.
 */
async function claimThread(rtx: RunTx, threadId: string, runId: string): Promise<void> {
  if ((await execute(rtx.tx, 'update threads set active_run_id = ? where id = ? and active_run_id is null', [runId, threadId])) === 1) return;
  const thread = await rtx.tx.findOne(ThreadSchema, { id: threadId }, { refresh: true });
  if (!thread) throw notFound('thread', threadId); // deleted since it was loaded
  const current = thread.activeRunId!;
  const run = await rtx.tx.findOne(RunSchema, { id: current });
  if (run && !isTerminal(run.status)) throw activeRunError(threadId, current);
  if ((await execute(rtx.tx, 'update threads set active_run_id = ? where id = ? and active_run_id = ?', [runId, threadId, current])) !== 1) {
    throw activeRunError(threadId, current);
  }
}

function insertRun(
  rtx: RunTx,
  ctx: ModelWorkContext,
  thread: Thread,
  assistant: Assistant,
  options: RunOptions,
  provider: { virtualKey: string; providerId: string; admission: Admission },
  now: Date,
  id: string,
): Run {
  return rtx.insert(RunSchema, {
    id,
    organisationId: thread.organisationId,
    workspaceId: thread.workspaceId,
    threadId: thread.id,
    assistantId: assistant.id,
    ordinal: nextOrdinal(),
    status: 'queued',
    requiredToolCalls: null,
    lastError: null,
    incompleteDetails: null,
    createdAt: now,
    expiresAt: new Date(expiresAtFor(unixSeconds(now)) * 1000),
    startedAt: null,
    cancelledAt: null,
    failedAt: null,
    completedAt: null,
    ...options,
    promptTokens: 0,
    completionTokens: 0,
    virtualKey: provider.virtualKey,
    providerId: provider.providerId,
    apiKeyId: ctx.principal.apiKeyId,
    admissionKind: provider.admission.request.kind,
    admissionRequestId: ctx.requestId ?? null,
    eventSeq: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    updatedAt: now,
  });
}

/** The user text since the thread's last assistant message: what a new run newly shows the model. */
async function pendingUserText(em: EntityManager, threadId: string): Promise<string[]> {
  const messages = await em.find(MessageSchema, { threadId }, { orderBy: { ordinal: 'desc' }, limit: 50 });
  const texts: string[] = [];
  for (const m of messages) {
    if (m.role !== 'user') break;
    texts.unshift(textOf(m.content));
  }
  return texts;
}

const contentText = (content: TextContent[]) => textOf(content);

async function admit(
  ctx: ModelWorkContext,
  kind: ModelWorkKind,
  workspace: { id: string; organisationId: string },
  virtualKey: string | null | undefined,
  model: string,
  inputText: string[],
  metadata: Record<string, string>,
  ids: { threadId: string | null; runId: string | null },
  estimates: { instructions: string; maxCompletionTokens: number | null },
) {
  const key = resolveVirtualKey(ctx, virtualKey);
  const admission = await admitModelWork(ctx, {
    kind,
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    virtualKey: key,
    model,
    inputText: inputText.join('\n'),
    metadata,
    apiKeyId: ctx.principal.apiKeyId,
    ...ids,
    ...estimates,
  });
  return { virtualKey: key, providerId: admission.provider.provider.id, admission };
}

/**
 * The admitted request's writes: on success the admission is linked to the run (before it is
 * queued); on failure, or when `write` yields null (a lost race), the admission is abandoned so
 * whatever it holds (usage reservations) is given back.
 */
async function underAdmission<T>(ctx: ModelWorkContext, admission: Admission, write: () => Promise<T | null>, runIdOf: (value: T) => string): Promise<T | null> {
  let result: T | null;
  try {
    result = await write();
  } catch (error) {
    await abandonAdmission(ctx, admission, error);
    throw error;
  }
  if (result === null) await abandonAdmission(ctx, admission, 'not_accepted');
  else await admissionCommitted(ctx, admission, runIdOf(result));
  return result;
}

export async function createRun(ctx: ModelWorkContext, threadId: string, input: CreateRunInput, virtualKey?: string | null): Promise<Admitted<RunView>> {
  const thread = await loadThread(ctx, threadId);
  const assistant = await assistantForRun(ctx, input.assistant_id, thread.workspaceId);
  const options = runOptionsOf(input, assistantDefaults(assistant));
  const extra = (input.additional_messages ?? []).map(messageFields);
  const active = await activeRunOf(ctx.em, thread);
  if (active) throw activeRunError(thread.id, active.id);
  const provider = await admit(
    ctx,
    'create_run',
    { id: thread.workspaceId, organisationId: thread.organisationId },
    virtualKey,
    options.model,
    [...(await pendingUserText(ctx.em, thread.id)), ...extra.map((m) => contentText(m.content))],
    options.metadata,
    { threadId: thread.id, runId: null },
    { instructions: options.instructions ?? '', maxCompletionTokens: options.maxCompletionTokens ?? null },
  );
  const run = (await underAdmission(ctx, provider.admission, () => commitRun(ctx.runtime, ctx.em, async (rtx) => {
    const now = rtx.now();
    const runId = prefixedId('run');
    await claimThread(rtx, thread.id, runId);
    for (const message of extra) insertMessage(rowOf(rtx), thread, message, now);
    const created = insertRun(rtx, ctx, thread, assistant, options, provider, now, runId);
    rtx.firstEvents(created, [{ event: 'thread.run.created', data: runObject(created) }, runEvent(created)]);
    await recordAdmission(rtx, ctx, provider.admission, runId, { prompt_tokens: 0, completion_tokens: 0 });
    return created;
  }), (r) => r.id))!;
  queue(ctx, thread.id, run.id, { run, provider: provider.admission.provider });
  return { value: { ...runObject(run), stream_after: 0 }, answer: provider.admission.answer };
}

export async function createThreadAndRun(ctx: ModelWorkContext, input: CreateThreadAndRunInput, virtualKey?: string | null): Promise<Admitted<RunView>> {
  const workspace = await homeWorkspace(ctx);
  const assistant = await assistantForRun(ctx, input.assistant_id, workspace.id);
  const newThread = threadFields(input.thread ?? {});
  const options = runOptionsOf(input, assistantDefaults(assistant));
  const provider = await admit(
    ctx,
    'create_thread_and_run',
    workspace,
    virtualKey,
    options.model,
    newThread.messages.map((m) => contentText(m.content)),
    options.metadata,
    { threadId: null, runId: null },
    { instructions: options.instructions ?? '', maxCompletionTokens: options.maxCompletionTokens ?? null },
  );
  const run = (await underAdmission(ctx, provider.admission, () => commitRun(ctx.runtime, ctx.em, async (rtx) => {
    const now = rtx.now();
    const runId = prefixedId('run');
    const thread = insertThread(rowOf(rtx), workspace, newThread, now, runId);
    const created = insertRun(rtx, ctx, thread, assistant, options, provider, now, runId);
    rtx.firstEvents(created, [
      { event: 'thread.created', data: threadObject(thread) },
      { event: 'thread.run.created', data: runObject(created) },
      runEvent(created),
    ]);
    await recordAdmission(rtx, ctx, provider.admission, runId, { prompt_tokens: 0, completion_tokens: 0 });
    return created;
  }), (r) => r.id))!;
  const messages = newThread.messages.map((m, i) => ({ ordinal: i, role: m.role, text: contentText(m.content) }));
  queue(ctx, run.threadId, run.id, { run, provider: provider.admission.provider, messages });
  return { value: { ...runObject(run), stream_after: 0 }, answer: provider.admission.answer };
}

export async function getRun(ctx: ServiceContext, threadId: string, runId: string): Promise<RunObject> {
  return runObject(await loadRun(ctx, threadId, runId));
}

/** Metadata only; any status (OpenAI allows it on finished runs too). */
export async function modifyRun(ctx: ServiceContext, threadId: string, runId: string, input: ModifyMetadataInput): Promise<RunObject> {
  const run = await loadRun(ctx, threadId, runId);
  if (input.metadata === undefined) return runObject(run);
  await ctx.em.nativeUpdate(RunSchema, { id: run.id }, { metadata: input.metadata ?? {} });
  return runObject(await ctx.em.findOneOrFail(RunSchema, { id: run.id }, { refresh: true }));
}

export async function getRunStep(ctx: ServiceContext, threadId: string, runId: string, stepId: string): Promise<RunStepObject> {
  await loadRun(ctx, threadId, runId);
  const step = await ctx.em.findOne(RunStepSchema, { id: stepId, runId });
  if (!step) throw notFound('run step', stepId);
  return runStepObject(step);
}

export async function listRuns(ctx: ServiceContext, threadId: string, page: PageArgs): Promise<ListObject<RunObject>> {
  await loadThread(ctx, threadId);
  const list = await pageOf(ctx.em, RunSchema, { threadId }, page, (run) => run);
  const data = await Promise.all(list.data.map(async (run) => runObject(await applyExpiry(ctx, run))));
  return { ...list, data };
}

export async function listRunsOfThreads(ctx: ServiceContext, threadIds: readonly string[], page: PageArgs): Promise<ListObject<RunObject>[]> {
  const lists = await pagesOf(ctx.em, RunSchema, 'threadId', threadIds, {}, page, (run) => run);
  return Promise.all(lists.map(async (list) => ({ ...list, data: await Promise.all(list.data.map(async (run) => runObject(await applyExpiry(ctx, run)))) })));
}

export function listStepsOfRuns(ctx: ServiceContext, runIds: readonly string[], page: PageArgs): Promise<ListObject<RunStepObject>[]> {
  return pagesOf(ctx.em, RunStepSchema, 'runId', runIds, {}, page, runStepObject);
}

export async function cancelRun(ctx: ServiceContext, threadId: string, runId: string): Promise<RunObject> {
  let run = await loadRun(ctx, threadId, runId);
  for (;;) {
    if (!canCancel(run.status)) throw new BadRequestError(`Cannot cancel run with status '${run.status}'.`);
    const from = run.status;
    const moved = await commitRun(ctx.runtime, ctx.em, async (rtx) => {
      const next = await rtx.move(runId, from, 'cancelling');
      if (next) await rtx.events(runId, [runEvent(next)]);
      return next;
    });
    if (moved) {
      // A run this process is executing settles when its model call stops; any other at once.
      if (!runExecutor(ctx.runtime).cancel(runId)) await settleCancelled(ctx.runtime, runId);
      return runObject(moved);
    }
    // Another writer moved it first (the executor started it, outputs were submitted…): look again.
    run = await ctx.em.findOneOrFail(RunSchema, { id: runId }, { refresh: true });
  }
}

const quoted = (ids: readonly string[]) => `[${ids.map((id) => `'${id}'`).join(', ')}]`;

function notAccepting(status: string): BadRequestError {
  return new BadRequestError(`Runs in status "${status}" do not accept tool outputs.`);
}

/**
 * Accepts the outputs of every pending tool call and queues the run again. The decisive check is
 * one conditional update (`requires_action → queued`), so of two racing submits exactly one wins.
 */
export async function submitToolOutputs(
  ctx: ModelWorkContext,
  threadId: string,
  runId: string,
  input: SubmitToolOutputsInput,
  virtualKey?: string | null,
): Promise<Admitted<RunView>> {
  const run = await loadRun(ctx, threadId, runId);
  if (run.status !== 'requires_action') throw notAccepting(run.status);
  const pending = (run.requiredToolCalls ?? []).map((call) => call.id);
  const submitted = input.tool_outputs.map((o) => o.tool_call_id);
  const same = submitted.length === pending.length && new Set(submitted).size === submitted.length && submitted.every((id) => pending.includes(id));
  if (!same) throw new BadRequestError(`Expected tool outputs for call_ids ${quoted(pending)}, got ${quoted(submitted)}`);
  const key = resolveVirtualKey(ctx, virtualKey);
  if (key && key !== run.virtualKey) {
    throw new BadRequestError(`Run ${run.id} was created with virtual key '${run.virtualKey}': submit its tool outputs with the same virtual key.`, { code: 'virtual_key_mismatch' });
  }
  const { admission } = await admit(
    ctx,
    'submit_tool_outputs',
    { id: run.workspaceId, organisationId: run.organisationId },
    key,
    run.model,
    input.tool_outputs.map((o) => o.output),
    run.metadata,
    { threadId, runId },
    { instructions: run.instructions, maxCompletionTokens: run.maxCompletionTokens ?? null },
  );

  const outputs = new Map(input.tool_outputs.map((o) => [o.tool_call_id, o.output]));
  const result = await underAdmission(ctx, admission, () => commitRun(ctx.runtime, ctx.em, async (rtx) => {
    if (isExpired({ status: 'requires_action', expires_at: run.expiresAt ? unixSeconds(run.expiresAt) : null }, unixSeconds(rtx.now()))) return null;
    const queued = await rtx.move(runId, 'requires_action', 'queued');
    if (!queued) return null;
    await recordAdmission(rtx, ctx, admission, runId, { prompt_tokens: queued.promptTokens, completion_tokens: queued.completionTokens });
    const step = await rtx.tx.findOne(RunStepSchema, { runId, type: 'tool_calls', status: 'in_progress' }, { orderBy: { ordinal: 'desc' } });
    const drafts: EventDraft[] = [];
    if (step && step.stepDetails.type === 'tool_calls') {
      step.stepDetails = {
        type: 'tool_calls',
        tool_calls: step.stepDetails.tool_calls.map((call) => ({ ...call, function: { ...call.function, output: outputs.get(call.id) ?? null } })),
      };
      step.status = 'completed';
      step.completedAt = rtx.now();
      await rtx.tx.flush();
      drafts.push({ event: 'thread.run.step.completed', data: runStepObject(step) });
    }
    drafts.push(runEvent(queued));
    const records = await rtx.events(runId, drafts);
    return { run: queued, after: records[0].sequence - 1 };
  }), () => runId);
  if (!result) {
    const now = await applyExpiry(ctx, await ctx.em.findOneOrFail(RunSchema, { id: runId }, { refresh: true }));
    throw notAccepting(now.status);
  }
  queue(ctx, threadId, runId);
  return { value: { ...runObject(result.run), stream_after: result.after }, answer: admission.answer };
}

// ---------------------------------------------------------------------------------------------
// Events

export async function listRunEvents(ctx: ServiceContext, threadId: string, runId: string, after: number, limit?: number | null): Promise<RunEventRecord[]> {
  await loadRun(ctx, threadId, runId);
  return readEvents(ctx.em, runId, Math.max(0, after), limit ?? undefined);
}

/**
 * The run's events after `after`, then live ones, until the run is terminal (or waiting for tool
 * outputs, with `endAtRequiresAction`): see RunFollower. Validation (404) happens here, before
 * the follower is used (a run this request has just queued is known to exist).
 */
export async function followRunEvents(ctx: ServiceContext, options: FollowOptions): Promise<RunFollower> {
  if (!queuedByRequest.get(ctx)?.has(`${options.threadId}/${options.runId}`)) await loadRun(ctx, options.threadId, options.runId);
  return new RunFollower(ctx.runtime, options);
}
