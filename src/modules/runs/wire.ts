/**
 * The OpenAI Assistants v2 object shapes (`assistant`, `thread`, `thread.message`, `thread.run`,
 * `thread.run.step`, `thread.message.delta`). They are the domain's read model: services return
 * them, the event log stores them as event payloads, GraphQL exposes their fields and REST aliases
 * them back to these very keys. Pure: entities in, plain JSON out.
 */
import { unixSeconds } from '../../lib/clock.js';
import type { Assistant } from './assistant.entity.js';
import type { Message, MessageStatus, TextContent } from './message.entity.js';
import type { RunStep, StepDetails, StepStatus } from './run-step.entity.js';
import type { RequiredToolCall, Run, RunUsage } from './run.entity.js';
import { isTerminal, type RunStatus } from './run-state.js';
import type { Thread } from './thread.entity.js';
import type { ResponseFormat, Tool, ToolChoice, TruncationStrategy } from './runs.contract.js';

const seconds = (date: Date | null | undefined): number | null => (date ? unixSeconds(date) : null);

export interface AssistantObject {
  id: string;
  object: 'assistant';
  created_at: number;
  name: string | null;
  description: string | null;
  model: string;
  instructions: string | null;
  tools: Tool[];
  tool_resources: Record<string, unknown>;
  metadata: Record<string, string>;
  temperature: number | null;
  top_p: number | null;
  response_format: ResponseFormat;
}

export function assistantObject(a: Assistant): AssistantObject {
  return {
    id: a.id,
    object: 'assistant',
    created_at: unixSeconds(a.createdAt),
    name: a.name ?? null,
    description: a.description ?? null,
    model: a.model,
    instructions: a.instructions ?? null,
    tools: a.tools,
    tool_resources: a.toolResources,
    metadata: a.metadata,
    temperature: a.temperature ?? 1,
    top_p: a.topP ?? 1,
    response_format: a.responseFormat,
  };
}

export interface ThreadObject {
  id: string;
  object: 'thread';
  created_at: number;
  metadata: Record<string, string>;
  tool_resources: Record<string, unknown>;
}

export function threadObject(t: Thread): ThreadObject {
  return { id: t.id, object: 'thread', created_at: unixSeconds(t.createdAt), metadata: t.metadata, tool_resources: t.toolResources };
}

export interface MessageObject {
  id: string;
  object: 'thread.message';
  created_at: number;
  thread_id: string;
  status: MessageStatus;
  incomplete_details: { reason: string } | null;
  completed_at: number | null;
  incomplete_at: number | null;
  role: 'user' | 'assistant';
  content: TextContent[];
  assistant_id: string | null;
  run_id: string | null;
  attachments: unknown[];
  metadata: Record<string, string>;
}

export function messageObject(m: Message): MessageObject {
  return {
    id: m.id,
    object: 'thread.message',
    created_at: unixSeconds(m.createdAt),
    thread_id: m.threadId,
    status: m.status,
    incomplete_details: m.incompleteDetails ?? null,
    completed_at: seconds(m.completedAt),
    incomplete_at: seconds(m.incompleteAt),
    role: m.role,
    content: m.content,
    assistant_id: m.assistantId ?? null,
    run_id: m.runId ?? null,
    attachments: m.attachments,
    metadata: m.metadata,
  };
}

export interface RequiredAction {
  type: 'submit_tool_outputs';
  submit_tool_outputs: { tool_calls: RequiredToolCall[] };
}

export interface RunObject {
  id: string;
  object: 'thread.run';
  created_at: number;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  required_action: RequiredAction | null;
  last_error: { code: string; message: string } | null;
  expires_at: number | null;
  started_at: number | null;
  cancelled_at: number | null;
  failed_at: number | null;
  completed_at: number | null;
  incomplete_details: { reason: string } | null;
  model: string;
  instructions: string;
  tools: Tool[];
  metadata: Record<string, string>;
  usage: RunUsage | null;
  max_prompt_tokens: number | null;
  max_completion_tokens: number | null;
  truncation_strategy: TruncationStrategy;
  tool_choice: ToolChoice;
  parallel_tool_calls: boolean;
  response_format: ResponseFormat;
  temperature: number | null;
  top_p: number | null;
}

export function runUsage(run: Pick<Run, 'promptTokens' | 'completionTokens'>): RunUsage {
  return {
    prompt_tokens: run.promptTokens,
    completion_tokens: run.completionTokens,
    total_tokens: run.promptTokens + run.completionTokens,
  };
}

export function runObject(r: Run): RunObject {
  const terminal = isTerminal(r.status);
  return {
    id: r.id,
    object: 'thread.run',
    created_at: unixSeconds(r.createdAt),
    thread_id: r.threadId,
    assistant_id: r.assistantId,
    status: r.status,
    required_action:
      r.status === 'requires_action' && r.requiredToolCalls
        ? { type: 'submit_tool_outputs', submit_tool_outputs: { tool_calls: r.requiredToolCalls } }
        : null,
    last_error: r.lastError ?? null,
    expires_at: terminal ? null : seconds(r.expiresAt),
    started_at: seconds(r.startedAt),
    cancelled_at: seconds(r.cancelledAt),
    failed_at: seconds(r.failedAt),
    completed_at: seconds(r.completedAt),
    incomplete_details: r.incompleteDetails ?? null,
    model: r.model,
    instructions: r.instructions,
    tools: r.tools,
    metadata: r.metadata,
    usage: terminal ? runUsage(r) : null,
    max_prompt_tokens: r.maxPromptTokens ?? null,
    max_completion_tokens: r.maxCompletionTokens ?? null,
    truncation_strategy: r.truncationStrategy,
    tool_choice: r.toolChoice,
    parallel_tool_calls: r.parallelToolCalls,
    response_format: r.responseFormat,
    temperature: r.temperature ?? 1,
    top_p: r.topP ?? 1,
  };
}

export interface RunStepObject {
  id: string;
  object: 'thread.run.step';
  created_at: number;
  run_id: string;
  assistant_id: string;
  thread_id: string;
  type: 'message_creation' | 'tool_calls';
  status: StepStatus;
  step_details: StepDetails;
  last_error: { code: string; message: string } | null;
  expired_at: number | null;
  cancelled_at: number | null;
  failed_at: number | null;
  completed_at: number | null;
  metadata: Record<string, string>;
  usage: RunUsage | null;
}

export function runStepObject(s: RunStep): RunStepObject {
  return {
    id: s.id,
    object: 'thread.run.step',
    created_at: unixSeconds(s.createdAt),
    run_id: s.runId,
    assistant_id: s.assistantId,
    thread_id: s.threadId,
    type: s.type,
    status: s.status,
    step_details: s.stepDetails,
    last_error: s.lastError ?? null,
    expired_at: seconds(s.expiredAt),
    cancelled_at: seconds(s.cancelledAt),
    failed_at: seconds(s.failedAt),
    completed_at: seconds(s.completedAt),
    metadata: {},
    usage: s.usage ?? null,
  };
}

/**
 * One piece of streamed text. Every delta entry carries a numeric `index` and `type: "text"`:
 * the openai SDK's stream helper accumulates content by index and rejects entries without one.
 */
export function messageDelta(messageId: string, text: string) {
  return {
    id: messageId,
    object: 'thread.message.delta' as const,
    delta: { content: [{ index: 0, type: 'text' as const, text: { value: text, annotations: [] as unknown[] } }] },
  };
}

/** Plain text of a message's content parts. */
export function textOf(content: readonly TextContent[]): string {
  return content.map((part) => part.text.value).join('\n');
}

export interface ListObject<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
