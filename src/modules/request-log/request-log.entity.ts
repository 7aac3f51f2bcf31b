import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * One model call through the gateway (a chat completion, an embeddings request, or one model call
 * inside a run), refused ones included: who made it, what it used and cost, how long it took and
 * what enforcement decided. Written in batches off the request path (request-log.writer.ts).
 */
export const RequestLogSchema = defineEntity({
  name: 'RequestLog',
  tableName: 'request_logs',
  properties: (p) => ({
    id: p.uuid().primary(),
    createdAt: p.datetime(),
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    apiKeyId: p.string().nullable(),
    virtualKey: p.string().nullable(),
    /** The integration's `ai_provider_id` (`local`, `openai`); null when refused before it was known. */
    provider: p.string().nullable(),
    model: p.string().nullable(),
    /** `chat.completions`, `embeddings` or `runs`. */
    route: p.string(),
    status: p.integer(),
    stream: p.boolean(),
    promptTokens: p.integer(),
    completionTokens: p.integer(),
    totalTokens: p.integer(),
    /** US dollars from the model's price (0 when no price is known). */
    // A double (8 bytes on both databases) read as a JS number: MikroORM reads doubles as strings unless told.
    cost: p.double().$type<number>().runtimeType('number'),
    totalMs: p.float(),
    upstreamMs: p.float().nullable(),
    requestId: p.string().nullable(),
    runId: p.string().nullable(),
    metadata: p.json<Record<string, string>>(),
    /** Input and output guardrail verdicts: `[{stage, id, slug, verdict, deny}]`. */
    guardrails: p.json<RequestLogGuardrail[]>(),
    /** Why it was refused or failed (`rate_limit`, `usage_limit`, `guardrail`, an upstream code…); null on success. */
    refusal: p.string().nullable(),
  }),
  indexes: [
    { properties: ['organisationId', 'createdAt'] },
    { properties: ['workspaceId', 'createdAt'] },
  ],
});

export interface RequestLogGuardrail {
  stage: 'input' | 'output';
  id: string;
  slug: string;
  verdict: boolean;
  deny: boolean;
}

export type RequestLog = InferEntity<typeof RequestLogSchema>;
