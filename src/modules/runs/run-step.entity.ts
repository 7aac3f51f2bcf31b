import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const STEP_STATUSES = ['in_progress', 'cancelled', 'failed', 'completed', 'expired'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface StepToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string; output: string | null };
}

export type StepDetails =
  | { type: 'message_creation'; message_creation: { message_id: string } }
  | { type: 'tool_calls'; tool_calls: StepToolCall[] };

/** One step of a run: writing a message, or calling tools (OpenAI `thread.run.step`). */
export const RunStepSchema = defineEntity({
  name: 'RunStep',
  tableName: 'run_steps',
  properties: (p) => ({
    id: p.string().primary(),
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    runId: p.string().index(),
    // Not indexed (migration 0011): a thread's steps are its runs' (deleted with them by run), and
    // the index was a page written per step.
    threadId: p.string(),
    assistantId: p.string(),
    /** Shares the thread's ordering with messages: tool rounds sit where they happened. */
    ordinal: p.bigint('number'),
    type: p.enum(['message_creation', 'tool_calls'] as const),
    status: p.enum(['in_progress', 'cancelled', 'failed', 'completed', 'expired'] as const),
    stepDetails: p.json<StepDetails>(),
    lastError: p.json<{ code: string; message: string }>().nullable(),
    usage: p.json<{ prompt_tokens: number; completion_tokens: number; total_tokens: number }>().nullable(),
    createdAt: p.datetime(),
    expiredAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  }),
});

export type RunStep = InferEntity<typeof RunStepSchema>;
