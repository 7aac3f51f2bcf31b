import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { RunStatus } from './run-state.js';
import type { ResponseFormat, Tool, ToolChoice, TruncationStrategy } from './runs.contract.js';

export interface RequiredToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface RunUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * A run of an assistant on a thread (OpenAI `thread.run`). Status moves go through conditional
 * updates (`… where status = ?`), so concurrent writers (executor, cancel, submit, expiry) never
 * both win; `eventSeq` numbers the run's event log.
 */
export const RunSchema = defineEntity({
  name: 'Run',
  tableName: 'runs',
  properties: (p) => ({
    id: p.string().primary(),
    // Not indexed (migration 0009): runs are read by id, by thread or by status, never by tenancy
    // (their thread is listed by workspace), and each index was a page written per run.
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    threadId: p.string(),
    assistantId: p.string(),
    ordinal: p.bigint('number'),
    status: p.enum(['queued', 'in_progress', 'requires_action', 'cancelling', 'cancelled', 'failed', 'completed', 'incomplete', 'expired'] as const).index(),
    requiredToolCalls: p.json<RequiredToolCall[]>().nullable(),
    lastError: p.json<{ code: string; message: string }>().nullable(),
    incompleteDetails: p.json<{ reason: string }>().nullable(),
    createdAt: p.datetime(),
    expiresAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    model: p.string(),
    instructions: p.text(),
    tools: p.json<Tool[]>(),
    metadata: p.json<Record<string, string>>(),
    /** Token counts of every model call so far; shown as `usage` once the run is terminal. */
    promptTokens: p.integer(),
    completionTokens: p.integer(),
    maxPromptTokens: p.integer().nullable(),
    maxCompletionTokens: p.integer().nullable(),
    truncationStrategy: p.json<TruncationStrategy>(),
    toolChoice: p.json<ToolChoice>(),
    parallelToolCalls: p.boolean(),
    responseFormat: p.json<ResponseFormat>(),
    temperature: p.double().$type<number>().nullable(),
    topP: p.double().$type<number>().nullable(),
    /** The virtual key the run was created with, and the provider it named then. */
    virtualKey: p.string(),
    providerId: p.string().nullable(),
    /** The API key that created the run (usage is attributed to it). */
    apiKeyId: p.uuid().nullable(),
    /**
     * The request that created the run (its first admission): `create_run` or
     * `create_thread_and_run`, and its x-gateway-request-id. `Run.enforcement` lists that admission
     * from here when enforcement wrote no record of it (nothing applied). Null on runs created
     * before migration 0008: their first enforcement record holds both.
     */
    admissionKind: p.string().nullable(),
    admissionRequestId: p.string().nullable(),
    /** The last sequence number of the run's event log. */
    eventSeq: p.integer(),
    /**
     * The instance executing the run and until when (Unix ms) its claim holds unless renewed
     * (run-lease.ts): another instance takes the run over only once the lease has expired.
     */
    leaseOwner: p.string().nullable(),
    leaseExpiresAt: p.bigint('number').nullable(),
    updatedAt: p.datetime(),
  }),
  // A thread's runs in order, as every read of them asks (migration 0010): one index where a
  // thread index and an ordinal index were two pages written per run.
  indexes: [{ properties: ['threadId', 'ordinal'] }],
});

export type Run = InferEntity<typeof RunSchema>;
export type { RunStatus };
