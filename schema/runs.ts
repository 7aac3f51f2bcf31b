import type { RunEventRecord } from '../src/modules/runs/event-log.js';
import type { TextContent } from '../src/modules/runs/message.entity.js';
import type { RequiredToolCall, RunUsage } from '../src/modules/runs/run.entity.js';
import { RUN_STATUSES, isTerminal } from '../src/modules/runs/run-state.js';
import * as runs from '../src/modules/runs/runs.service.js';
import type { DeletedObject, RunView } from '../src/modules/runs/runs.service.js';
import * as contract from '../src/modules/runs/runs.contract.js';
import type { TruncationStrategy } from '../src/modules/runs/runs.contract.js';
import type {
  AssistantObject,
  ListObject,
  MessageObject,
  RequiredAction,
  RunStepObject,
  ThreadObject,
} from '../src/modules/runs/wire.js';
import { builder } from './builder.js';
import { contractInputType, parseInput } from './contract-input.js';
import { dataPlane } from './data-plane.js';
import { sharedResults } from './shared-subscription.js';

/*
 * Runs on threads (OpenAI Assistants v2). Objects are the wire shapes the service returns, so
 * REST aliases every field back to its OpenAI name; polymorphic OpenAI fields (tools, tool_choice,
 * response_format, step_details) are JSON. Times of this domain are Unix seconds, as on the wire.
 */

/** How long SDK pollers (`createAndPoll`) wait between reads of an unfinished run. */
const POLL_AFTER_MS = '250';

export const RunStatusEnum = builder.enumType('RunStatus', {
  description: 'Where a run is in its lifecycle.',
  values: Object.fromEntries(RUN_STATUSES.map((status) => [status, { description: `The run is ${status.replace('_', ' ')}.` }])) as Record<
    (typeof RUN_STATUSES)[number],
    { description: string }
  >,
});

const pageArgs = builder.args((t) => ({
  limit: t.int({ description: 'Items per page, 1–100 (default 20).' }),
  order: t.string({ description: '`asc` or `desc` (default) by creation.' }),
  after: t.string({ description: 'Cursor: an id of this list; the page starts after it.' }),
  before: t.string({ description: 'Cursor: an id of this list; the page ends before it.' }),
}));

function listRef<T extends { id: string }>(name: string, item: any, what: string) {
  return builder.objectRef<ListObject<T>>(name).implement({
    description: `A page of ${what}, OpenAI list-shaped.`,
    fields: (t) => ({
      object: t.exposeString('object', { description: 'Always `list`.' }),
      data: t.field({ type: [item], description: `The ${what}.`, resolve: (list) => list.data as any }),
      firstId: t.exposeString('first_id', { nullable: true, description: 'Id of the first item; null on an empty page.' }),
      lastId: t.exposeString('last_id', { nullable: true, description: 'Id of the last item; null on an empty page.' }),
      hasMore: t.exposeBoolean('has_more', { description: 'True when more items follow in this order.' }),
    }),
  });
}

const UsageRef = builder.objectRef<RunUsage>('RunUsage').implement({
  description: 'Tokens used.',
  fields: (t) => ({
    promptTokens: t.exposeInt('prompt_tokens', { description: 'Prompt tokens.' }),
    completionTokens: t.exposeInt('completion_tokens', { description: 'Completion tokens.' }),
    totalTokens: t.exposeInt('total_tokens', { description: 'Both together.' }),
  }),
});

const RunErrorRef = builder.objectRef<{ code: string; message: string }>('RunError').implement({
  description: 'Why a run (or step) failed.',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'A run: `server_error`, `rate_limit_exceeded`, `invalid_prompt` (an output guardrail denied the answer). A step: `server_error`, `rate_limit_exceeded`.' }),
    message: t.exposeString('message', { description: 'What happened, safe to show.' }),
  }),
});

const IncompleteDetailsRef = builder.objectRef<{ reason: string }>('IncompleteDetails').implement({
  description: 'Why a run or message ended incomplete.',
  fields: (t) => ({
    reason: t.exposeString('reason', { description: 'E.g. `max_completion_tokens`, `max_prompt_tokens`, `run_cancelled`.' }),
  }),
});

const TruncationStrategyRef = builder.objectRef<TruncationStrategy>('TruncationStrategy').implement({
  description: 'How the thread is cut before the run’s model calls.',
  fields: (t) => ({
    type: t.exposeString('type', { description: '`auto` or `last_messages`.' }),
    lastMessages: t.exposeInt('last_messages', { nullable: true, description: 'Messages kept with `last_messages`.' }),
  }),
});

const FunctionCallRef = builder.objectRef<RequiredToolCall['function']>('FunctionCall').implement({
  description: 'A function the model wants called.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Function name.' }),
    arguments: t.exposeString('arguments', { description: 'Arguments as the model wrote them (JSON text).' }),
  }),
});

const RequiredToolCallRef = builder.objectRef<RequiredToolCall>('RequiredToolCall').implement({
  description: 'A tool call waiting for its output.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The `tool_call_id` to submit the output for.' }),
    type: t.exposeString('type', { description: 'Always `function`.' }),
    function: t.field({ type: FunctionCallRef, description: 'The call.', resolve: (call) => call.function }),
  }),
});

const SubmitToolOutputsActionRef = builder.objectRef<RequiredAction['submit_tool_outputs']>('SubmitToolOutputsAction').implement({
  description: 'The calls whose outputs the run waits for.',
  fields: (t) => ({
    toolCalls: t.field({ type: [RequiredToolCallRef], description: 'Pending calls.', resolve: (a) => a.tool_calls }),
  }),
});

const RequiredActionRef = builder.objectRef<RequiredAction>('RequiredAction').implement({
  description: 'What a `requires_action` run waits for.',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'Always `submit_tool_outputs`.' }),
    submitToolOutputs: t.field({ type: SubmitToolOutputsActionRef, description: 'The pending tool calls.', resolve: (a) => a.submit_tool_outputs }),
  }),
});

export const AssistantRef = builder.objectRef<AssistantObject>('Assistant').implement({
  description: 'The model, instructions and tools a run starts from.',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`asst_` + 24 alphanumerics.' }),
    object: t.exposeString('object', { description: 'Always `assistant`.' }),
    createdAt: t.exposeInt('created_at', { description: 'Unix seconds.' }),
    name: t.exposeString('name', { nullable: true, description: 'Display name.' }),
    description: t.exposeString('description', { nullable: true, description: 'Free text.' }),
    model: t.exposeString('model', { description: 'Model runs use unless they override it.' }),
    instructions: t.exposeString('instructions', { nullable: true, description: 'System instructions.' }),
    tools: t.expose('tools', { type: 'JSON', description: 'Tool objects (function, code_interpreter, file_search).' }),
    toolResources: t.expose('tool_resources', { type: 'JSON', description: 'Tool resources, as given.' }),
    metadata: t.expose('metadata', { type: 'JSON', description: 'Up to 16 string pairs.' }),
    temperature: t.exposeFloat('temperature', { nullable: true, description: 'Sampling temperature (1 when unset).' }),
    topP: t.exposeFloat('top_p', { nullable: true, description: 'Nucleus sampling (1 when unset).' }),
    responseFormat: t.expose('response_format', { type: 'JSON', description: '`auto`, or an object such as `{type: "json_object"}`.' }),
  }),
});

const MessageTextRef = builder.objectRef<TextContent['text']>('MessageText').implement({
  description: 'Text of a message part.',
  fields: (t) => ({
    value: t.exposeString('value', { description: 'The text.' }),
    annotations: t.expose('annotations', { type: 'JSON', description: 'Annotations (always empty here).' }),
  }),
});

const MessageContentRef = builder.objectRef<TextContent>('MessageContent').implement({
  description: 'One part of a message.',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'Always `text`.' }),
    text: t.field({ type: MessageTextRef, description: 'The text.', resolve: (part) => part.text }),
  }),
});

export const MessageRef = builder.objectRef<MessageObject>('Message').implement({
  description: 'A message of a thread (`thread.message`).',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`msg_` + 24 alphanumerics.' }),
    object: t.exposeString('object', { description: 'Always `thread.message`.' }),
    createdAt: t.exposeInt('created_at', { description: 'Unix seconds.' }),
    threadId: t.exposeString('thread_id', { description: 'The thread.' }),
    status: t.exposeString('status', { description: '`in_progress`, `incomplete` or `completed`.' }),
    incompleteDetails: t.field({ type: IncompleteDetailsRef, nullable: true, description: 'Why it is incomplete.', resolve: (m) => m.incomplete_details }),
    completedAt: t.exposeInt('completed_at', { nullable: true, description: 'Unix seconds.' }),
    incompleteAt: t.exposeInt('incomplete_at', { nullable: true, description: 'Unix seconds.' }),
    role: t.exposeString('role', { description: '`user` or `assistant`.' }),
    content: t.field({ type: [MessageContentRef], description: 'The parts.', resolve: (m) => m.content }),
    assistantId: t.exposeString('assistant_id', { nullable: true, description: 'The assistant that wrote it (run messages).' }),
    runId: t.exposeString('run_id', { nullable: true, description: 'The run that wrote it.' }),
    attachments: t.expose('attachments', { type: 'JSON', description: 'Attachments, as given.' }),
    metadata: t.expose('metadata', { type: 'JSON', description: 'Up to 16 string pairs.' }),
  }),
});

export const RunStepRef = builder.objectRef<RunStepObject>('RunStep').implement({
  description: 'One step of a run: writing a message, or calling tools (`thread.run.step`).',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`step_` + 24 alphanumerics.' }),
    object: t.exposeString('object', { description: 'Always `thread.run.step`.' }),
    createdAt: t.exposeInt('created_at', { description: 'Unix seconds.' }),
    runId: t.exposeString('run_id', { description: 'The run.' }),
    assistantId: t.exposeString('assistant_id', { description: 'The run’s assistant.' }),
    threadId: t.exposeString('thread_id', { description: 'The thread.' }),
    type: t.exposeString('type', { description: '`message_creation` or `tool_calls`.' }),
    status: t.exposeString('status', { description: '`in_progress`, `cancelled`, `failed`, `completed` or `expired`.' }),
    stepDetails: t.expose('step_details', { type: 'JSON', description: 'OpenAI `step_details`: the message id, or the tool calls with their outputs.' }),
    lastError: t.field({ type: RunErrorRef, nullable: true, description: 'Why it failed.', resolve: (s) => s.last_error }),
    expiredAt: t.exposeInt('expired_at', { nullable: true, description: 'Unix seconds.' }),
    cancelledAt: t.exposeInt('cancelled_at', { nullable: true, description: 'Unix seconds.' }),
    failedAt: t.exposeInt('failed_at', { nullable: true, description: 'Unix seconds.' }),
    completedAt: t.exposeInt('completed_at', { nullable: true, description: 'Unix seconds.' }),
    metadata: t.expose('metadata', { type: 'JSON', description: 'Always empty.' }),
    usage: t.field({ type: UsageRef, nullable: true, description: 'Tokens of the step’s model call, once done.', resolve: (s) => s.usage }),
  }),
});

export const RunEventRef = builder.objectRef<RunEventRecord>('RunEvent').implement({
  description: 'One entry of a run’s event log: exactly what a REST stream sends as one SSE event.',
  fields: (t) => ({
    sequence: t.exposeInt('sequence', { description: 'Position in the run’s log, from 1 (the SSE `id`).' }),
    event: t.exposeString('event', { description: 'Event name, e.g. `thread.message.delta`.' }),
    data: t.expose('data', { type: 'JSON', description: 'The payload (a run, step, message or delta object).' }),
  }),
});

const RunStepListRef = listRef<RunStepObject>('RunStepList', RunStepRef, 'run steps');
const MessageListRef = listRef<MessageObject>('MessageList', MessageRef, 'messages');

export const RunRef = builder.objectRef<RunView>('Run').implement({
  description: 'A run of an assistant on a thread (`thread.run`). Every field is always present, nullable ones as null.',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`run_` + 24 alphanumerics.' }),
    object: t.exposeString('object', { description: 'Always `thread.run`.' }),
    createdAt: t.exposeInt('created_at', { description: 'Unix seconds.' }),
    threadId: t.exposeString('thread_id', { description: 'The thread it runs on.' }),
    assistantId: t.exposeString('assistant_id', { description: 'The assistant.' }),
    status: t.expose('status', { type: RunStatusEnum, description: 'Lifecycle status.' }),
    requiredAction: t.field({ type: RequiredActionRef, nullable: true, description: 'Pending tool calls; null unless `requires_action`.', resolve: (r) => r.required_action }),
    lastError: t.field({ type: RunErrorRef, nullable: true, description: 'Why it failed; null otherwise.', resolve: (r) => r.last_error }),
    expiresAt: t.exposeInt('expires_at', { nullable: true, description: 'Unix seconds (creation + 600); null once terminal.' }),
    startedAt: t.exposeInt('started_at', { nullable: true, description: 'Unix seconds.' }),
    cancelledAt: t.exposeInt('cancelled_at', { nullable: true, description: 'Unix seconds.' }),
    failedAt: t.exposeInt('failed_at', { nullable: true, description: 'Unix seconds.' }),
    completedAt: t.exposeInt('completed_at', { nullable: true, description: 'Unix seconds.' }),
    incompleteDetails: t.field({ type: IncompleteDetailsRef, nullable: true, description: 'Why it is incomplete.', resolve: (r) => r.incomplete_details }),
    model: t.exposeString('model', { description: 'Model used.' }),
    instructions: t.exposeString('instructions', { description: 'Instructions used.' }),
    tools: t.expose('tools', { type: 'JSON', description: 'Tools (at most 20).' }),
    metadata: t.expose('metadata', { type: 'JSON', description: 'Up to 16 string pairs.' }),
    usage: t.field({ type: UsageRef, nullable: true, description: 'Tokens of all the run’s model calls; null until terminal.', resolve: (r) => r.usage }),
    maxPromptTokens: t.exposeInt('max_prompt_tokens', { nullable: true, description: 'Prompt budget of each model call (≥ 256).' }),
    maxCompletionTokens: t.exposeInt('max_completion_tokens', { nullable: true, description: 'Completion budget of the whole run (≥ 256).' }),
    truncationStrategy: t.field({ type: TruncationStrategyRef, description: 'How the thread is cut.', resolve: (r) => r.truncation_strategy }),
    toolChoice: t.expose('tool_choice', { type: 'JSON', description: '`none`, `auto`, `required`, or an object forcing a tool.' }),
    parallelToolCalls: t.exposeBoolean('parallel_tool_calls', { description: 'Whether several tools may be called at once.' }),
    responseFormat: t.expose('response_format', { type: 'JSON', description: '`auto`, `none`, or an object such as `{type: "json_object"}`.' }),
    temperature: t.exposeFloat('temperature', { nullable: true, description: 'Sampling temperature (1 when unset).' }),
    topP: t.exposeFloat('top_p', { nullable: true, description: 'Nucleus sampling (1 when unset).' }),
    streamAfter: t.exposeInt('stream_after', {
      nullable: true,
      description:
        'On the run a mutation returns (createRun, createThreadAndRun, submitToolOutputs): the last event sequence before the events it caused. Subscribe to runEvents(after: streamAfter) to follow them with no gap. Null elsewhere.',
    }),
    steps: t.loadable({
      type: RunStepListRef,
      byPath: true,
      description: 'The run’s steps.',
      args: pageArgs,
      load: (ids: string[], ctx, args) => runs.listStepsOfRuns(ctx, ids, args),
      resolve: (run) => run.id,
    }),
    events: t.field({
      type: [RunEventRef],
      description: 'The run’s event log after a sequence number.',
      args: {
        after: t.arg.int({ description: 'Only events with a larger sequence (default 0).' }),
        limit: t.arg.int({ description: 'At most this many.' }),
      },
      resolve: (run, args, ctx) => runs.listRunEvents(ctx, run.thread_id, run.id, args.after ?? 0, args.limit),
    }),
  }),
});

const RunListRef = listRef<RunView>('RunList', RunRef, 'runs');

export const ThreadRef = builder.objectRef<ThreadObject>('Thread').implement({
  description: 'A conversation: messages, and the runs executed on it.',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`thread_` + 24 alphanumerics.' }),
    object: t.exposeString('object', { description: 'Always `thread`.' }),
    createdAt: t.exposeInt('created_at', { description: 'Unix seconds.' }),
    metadata: t.expose('metadata', { type: 'JSON', description: 'Up to 16 string pairs.' }),
    toolResources: t.expose('tool_resources', { type: 'JSON', description: 'Tool resources, as given.' }),
    messages: t.loadable({
      type: MessageListRef,
      byPath: true,
      description: 'The thread’s messages.',
      args: pageArgs,
      load: (ids: string[], ctx, args) => runs.listMessagesOfThreads(ctx, ids, args),
      resolve: (thread) => thread.id,
    }),
    runs: t.loadable({
      type: RunListRef,
      byPath: true,
      description: 'The thread’s runs.',
      args: pageArgs,
      load: (ids: string[], ctx, args) => runs.listRunsOfThreads(ctx, ids, args),
      resolve: (thread) => thread.id,
    }),
  }),
});

const DeletedRef = builder.objectRef<DeletedObject>('DeletedObject').implement({
  description: 'What a delete answers.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Id of the deleted object.' }),
    object: t.exposeString('object', { description: '`assistant.deleted`, `thread.deleted` or `thread.message.deleted`.' }),
    deleted: t.exposeBoolean('deleted', { description: 'Always true.' }),
  }),
});

const AssistantListRef = listRef<AssistantObject>('AssistantList', AssistantRef, 'assistants');
const ThreadListRef = listRef<ThreadObject>('ThreadList', ThreadRef, 'threads');

builder.queryFields((t) => ({
  assistants: t.field({
    type: AssistantListRef,
    description: 'Assistants of the caller’s workspace.',
    args: pageArgs,
    resolve: (_root, args, ctx) => runs.listAssistants(ctx, args),
  }),
  assistant: t.field({
    type: AssistantRef,
    description: 'One assistant.',
    args: { id: t.arg.string({ required: true, description: 'Assistant id.' }) },
    resolve: (_root, args, ctx) => runs.getAssistant(ctx, args.id),
  }),
  threads: t.field({
    type: ThreadListRef,
    description: 'Threads of the caller’s workspace.',
    args: pageArgs,
    resolve: (_root, args, ctx) => runs.listThreads(ctx, args),
  }),
  thread: t.field({
    type: ThreadRef,
    description: 'One thread.',
    args: { id: t.arg.string({ required: true, description: 'Thread id.' }) },
    resolve: (_root, args, ctx) => runs.getThread(ctx, args.id),
  }),
  messages: t.field({
    type: MessageListRef,
    description: 'Messages of a thread.',
    args: { threadId: t.arg.string({ required: true, description: 'Thread id.' }), runId: t.arg.string({ description: 'Only messages this run wrote.' }), ...pageArgs },
    resolve: (_root, args, ctx) => runs.listMessages(ctx, args.threadId, args),
  }),
  message: t.field({
    type: MessageRef,
    description: 'One message of a thread.',
    args: { threadId: t.arg.string({ required: true, description: 'Thread id.' }), id: t.arg.string({ required: true, description: 'Message id.' }) },
    resolve: (_root, args, ctx) => runs.getMessage(ctx, args.threadId, args.id),
  }),
  runs: t.field({
    type: RunListRef,
    description: 'Runs of a thread.',
    args: { threadId: t.arg.string({ required: true, description: 'Thread id.' }), ...pageArgs },
    resolve: (_root, args, ctx) => runs.listRuns(ctx, args.threadId, args),
  }),
  run: t.field({
    type: RunRef,
    description: 'One run (a run waiting past `expires_at` is expired first).',
    args: { threadId: t.arg.string({ required: true, description: 'Thread id.' }), id: t.arg.string({ required: true, description: 'Run id.' }) },
    resolve: async (_root, args, ctx) => {
      const run = await runs.getRun(ctx, args.threadId, args.id);
      // SDK pollers (createAndPoll…) honour this hint instead of their 5 s default.
      if (!isTerminal(run.status)) ctx.response.headers['openai-poll-after-ms'] = POLL_AFTER_MS;
      return run;
    },
  }),
  runStep: t.field({
    type: RunStepRef,
    description: 'One step of a run.',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      runId: t.arg.string({ required: true, description: 'Run id.' }),
      id: t.arg.string({ required: true, description: 'Step id.' }),
    },
    resolve: (_root, args, ctx) => runs.getRunStep(ctx, args.threadId, args.runId, args.id),
  }),
}));

const CreateAssistantInput = contractInputType(
  'CreateAssistantInput',
  'A new assistant (OpenAI create-assistant fields; polymorphic ones as JSON in wire shape).',
  contract.createAssistantContract,
);
const CreateThreadInput = contractInputType('CreateThreadInput', 'A new thread.', contract.createThreadContract);
const CreateMessageInput = contractInputType('CreateMessageInput', 'A new message.', contract.createMessageContract);
const CreateRunInput = contractInputType('CreateRunInput', 'A new run on an existing thread.', contract.createRunContract);
const CreateThreadAndRunInput = contractInputType('CreateThreadAndRunInput', 'A new thread and a run on it, in one step.', contract.createThreadAndRunContract);
const SubmitToolOutputsInput = contractInputType(
  'SubmitToolOutputsInput',
  'Outputs for every pending tool call of a run, exactly once each.',
  contract.submitToolOutputsContract,
  { tool_outputs: ['ToolOutputInput', 'The output of one tool call.'] },
);

const ModifyAssistantInput = contractInputType(
  'ModifyAssistantInput',
  'Changes to an assistant: a field left out keeps its value, null resets it.',
  contract.modifyAssistantContract,
);
const ModifyThreadInput = contractInputType('ModifyThreadInput', 'Changes to a thread: a field left out keeps its value.', contract.modifyThreadContract);
const ModifyMetadataInput = contractInputType('ModifyMetadataInput', 'New metadata of a message or a run.', contract.modifyMetadataContract);

const virtualKeyArgs = builder.args((t) => ({
  virtualKey: t.string({ description: 'The provider slug to run on; default: the request’s x-gateway-virtual-key (or x-portkey-virtual-key) header.' }),
}));

builder.mutationFields((t) => ({
  createAssistant: t.field({
    type: AssistantRef,
    description: 'Creates an assistant in the caller’s workspace.',
    args: { input: t.arg({ type: CreateAssistantInput, required: true, description: 'The assistant.' }) },
    resolve: (_root, { input }, ctx) => runs.createAssistant(ctx, parseInput(contract.createAssistantContract, input, ctx)),
  }),
  modifyAssistant: t.field({
    type: AssistantRef,
    description: 'Changes an assistant; runs already created keep what they copied from it.',
    args: {
      id: t.arg.string({ required: true, description: 'Assistant id.' }),
      input: t.arg({ type: ModifyAssistantInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, { id, input }, ctx) => runs.modifyAssistant(ctx, id, parseInput(contract.modifyAssistantContract, input, ctx)),
  }),
  deleteAssistant: t.field({
    type: DeletedRef,
    description: 'Deletes an assistant; its runs stay.',
    args: { id: t.arg.string({ required: true, description: 'Assistant id.' }) },
    resolve: (_root, { id }, ctx) => runs.deleteAssistant(ctx, id),
  }),
  modifyThread: t.field({
    type: ThreadRef,
    description: 'Changes a thread’s metadata or tool resources.',
    args: {
      id: t.arg.string({ required: true, description: 'Thread id.' }),
      input: t.arg({ type: ModifyThreadInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, { id, input }, ctx) => runs.modifyThread(ctx, id, parseInput(contract.modifyThreadContract, input, ctx)),
  }),
  deleteThread: t.field({
    type: DeletedRef,
    description: 'Deletes a thread with its messages, runs, steps and run events (not while a run is active on it).',
    args: { id: t.arg.string({ required: true, description: 'Thread id.' }) },
    resolve: (_root, { id }, ctx) => runs.deleteThread(ctx, id),
  }),
  modifyMessage: t.field({
    type: MessageRef,
    description: 'Changes a message’s metadata.',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      id: t.arg.string({ required: true, description: 'Message id.' }),
      input: t.arg({ type: ModifyMetadataInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, { threadId, id, input }, ctx) => runs.modifyMessage(ctx, threadId, id, parseInput(contract.modifyMetadataContract, input, ctx)),
  }),
  deleteMessage: t.field({
    type: DeletedRef,
    description: 'Deletes a message (not while a run is active on its thread).',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      id: t.arg.string({ required: true, description: 'Message id.' }),
    },
    resolve: (_root, { threadId, id }, ctx) => runs.deleteMessage(ctx, threadId, id),
  }),
  modifyRun: t.field({
    type: RunRef,
    description: 'Changes a run’s metadata (in any status).',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      runId: t.arg.string({ required: true, description: 'Run id.' }),
      input: t.arg({ type: ModifyMetadataInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, { threadId, runId, input }, ctx) => runs.modifyRun(ctx, threadId, runId, parseInput(contract.modifyMetadataContract, input, ctx)),
  }),
  createThread: t.field({
    type: ThreadRef,
    description: 'Creates a thread (optionally with messages) in the caller’s workspace.',
    args: { input: t.arg({ type: CreateThreadInput, description: 'The thread.' }) },
    resolve: (_root, { input }, ctx) => runs.createThread(ctx, parseInput(contract.createThreadContract, input, ctx)),
  }),
  createMessage: t.field({
    type: MessageRef,
    description: 'Adds a message to a thread (not while a run is active on it).',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      input: t.arg({ type: CreateMessageInput, required: true, description: 'The message.' }),
    },
    resolve: (_root, { threadId, input }, ctx) => runs.createMessage(ctx, threadId, parseInput(contract.createMessageContract, input, ctx)),
  }),
  createRun: t.field({
    type: RunRef,
    description: 'Queues a run on a thread; it executes in the background. Needs a virtual key.',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      input: t.arg({ type: CreateRunInput, required: true, description: 'The run.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, { threadId, input, virtualKey }, ctx) => dataPlane(ctx, () => runs.createRun(ctx, threadId, parseInput(contract.createRunContract, input, ctx), virtualKey)),
  }),
  createThreadAndRun: t.field({
    type: RunRef,
    description: 'Creates a thread and queues a run on it. Needs a virtual key.',
    args: {
      input: t.arg({ type: CreateThreadAndRunInput, required: true, description: 'The thread and the run.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, { input, virtualKey }, ctx) => dataPlane(ctx, () => runs.createThreadAndRun(ctx, parseInput(contract.createThreadAndRunContract, input, ctx), virtualKey)),
  }),
  submitToolOutputs: t.field({
    type: RunRef,
    description: 'Submits the outputs of a `requires_action` run’s tool calls and queues it again. Needs a virtual key.',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      runId: t.arg.string({ required: true, description: 'Run id.' }),
      input: t.arg({ type: SubmitToolOutputsInput, required: true, description: 'The outputs.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, { threadId, runId, input, virtualKey }, ctx) =>
      dataPlane(ctx, () => runs.submitToolOutputs(ctx, threadId, runId, parseInput(contract.submitToolOutputsContract, input, ctx), virtualKey)),
  }),
  cancelRun: t.field({
    type: RunRef,
    description: 'Cancels a queued, in-progress or waiting run: it answers `cancelling`, then settles `cancelled`.',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      runId: t.arg.string({ required: true, description: 'Run id.' }),
    },
    resolve: (_root, { threadId, runId }, ctx) => runs.cancelRun(ctx, threadId, runId),
  }),
}));

builder.subscriptionFields((t) => ({
  runEvents: t.field({
    type: RunEventRef,
    description:
      'A run’s events: the log after `after`, then live ones, with no gap and no duplicate, ending after a terminal run event (or, with `endAtRequiresAction`, when the run waits for tool outputs).',
    args: {
      threadId: t.arg.string({ required: true, description: 'Thread id.' }),
      runId: t.arg.string({ required: true, description: 'Run id.' }),
      after: t.arg.int({ description: 'Last sequence already seen (default 0: from the start).' }),
      endAtRequiresAction: t.arg.boolean({ description: 'Also end at `thread.run.requires_action`, as REST streams do (default false).' }),
    },
    // RunEvent's fields are the published record's own, read from the payload alone: each event
    // is executed once for all subscribers of the same selection (see shared-subscription.ts).
    subscribe: async (_root, args, ctx) =>
      sharedResults(
        await runs.followRunEvents(ctx, {
          threadId: args.threadId,
          runId: args.runId,
          after: args.after ?? 0,
          endAtRequiresAction: args.endAtRequiresAction ?? false,
        }),
      ),
    resolve: (event) => event,
  }),
}));
