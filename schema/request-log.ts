import type { RequestLog } from '../src/modules/request-log/request-log.entity.js';
import * as requestLog from '../src/modules/request-log/request-log.service.js';
import { builder } from './builder.js';

const RequestLogRef = builder.objectRef<RequestLog>('RequestLog').implement({
  description: 'One model call through the gateway (chat completion, embeddings, or a model call inside a run), refused ones included.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Record id (UUID).' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the request arrived.', resolve: (r) => r.createdAt }),
    organisationId: t.exposeString('organisationId', { description: 'Organisation.' }),
    workspaceId: t.exposeString('workspaceId', { description: 'Workspace.' }),
    apiKeyId: t.exposeString('apiKeyId', { nullable: true, description: 'The API key that made it.' }),
    virtualKey: t.exposeString('virtualKey', { nullable: true, description: 'The provider slug it named.' }),
    provider: t.exposeString('provider', { nullable: true, description: '`local` or `openai`; null when refused before the provider was known.' }),
    model: t.exposeString('model', { nullable: true, description: 'The model asked for.' }),
    route: t.exposeString('route', { description: '`chat.completions`, `prompts.completions`, `embeddings` or `runs`.' }),
    status: t.exposeInt('status', { description: 'HTTP status of the answer (246 for a failed non-deny guardrail).' }),
    stream: t.exposeBoolean('stream', { description: 'Streamed or not.' }),
    promptTokens: t.exposeInt('promptTokens', { description: 'Prompt tokens (the upstream’s count when it gave one).' }),
    completionTokens: t.exposeInt('completionTokens', { description: 'Completion tokens.' }),
    totalTokens: t.exposeInt('totalTokens', { description: 'Prompt + completion tokens.' }),
    cost: t.exposeFloat('cost', { description: 'US dollars from the model’s price (0 when none is known).' }),
    totalMs: t.exposeFloat('totalMs', { description: 'Milliseconds from arrival to the end of the call.' }),
    upstreamMs: t.exposeFloat('upstreamMs', { nullable: true, description: 'Milliseconds the provider took; null when it was not called.' }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'The request id (x-gateway-request-id).' }),
    runId: t.exposeString('runId', { nullable: true, description: 'The run, for model calls inside a run.' }),
    metadata: t.field({ type: 'JSON', description: 'The request’s metadata (header and body).', resolve: (r) => r.metadata }),
    guardrails: t.field({ type: 'JSON', description: 'Guardrail verdicts: `[{stage, id, slug, verdict, deny}]`.', resolve: (r) => r.guardrails }),
    refusal: t.exposeString('refusal', { nullable: true, description: 'Why it was refused or failed (`rate_limit`, `usage_limit`, `guardrail`, `output_guardrail`, an upstream code…); null on success.' }),
  }),
});

const RequestLogPageRef = builder.objectRef<requestLog.RequestLogPage>('RequestLogPage').implement({
  description: 'A page of request-log records, newest first.',
  fields: (t) => ({
    data: t.field({ type: [RequestLogRef], description: 'The records.', resolve: (p) => p.data }),
    firstId: t.exposeString('firstId', { nullable: true, description: 'Id of the first record.' }),
    lastId: t.exposeString('lastId', { nullable: true, description: 'Id of the last record: pass it as `after` for the next page.' }),
    hasMore: t.exposeBoolean('hasMore', { description: 'More records follow.' }),
  }),
});

const UsageSummaryRowRef = builder.objectRef<requestLog.UsageSummaryRow>('UsageSummaryRow').implement({
  description: 'Usage of one group of model calls; group fields not asked for are null.',
  fields: (t) => ({
    day: t.exposeString('day', { nullable: true, description: 'UTC day (`YYYY-MM-DD`).' }),
    hour: t.exposeString('hour', { nullable: true, description: 'UTC hour (`YYYY-MM-DDTHH:00:00Z`).' }),
    workspaceId: t.exposeString('workspaceId', { nullable: true, description: 'Workspace.' }),
    apiKeyId: t.exposeString('apiKeyId', { nullable: true, description: 'API key.' }),
    virtualKey: t.exposeString('virtualKey', { nullable: true, description: 'Virtual key.' }),
    model: t.exposeString('model', { nullable: true, description: 'Model.' }),
    // Sums over a whole log pass 2^31 (GraphQL's Int) long before they lose precision as a Float
    // (exact to 2^53), so the totals are Floats that always hold whole numbers.
    requests: t.exposeFloat('requests', { description: 'Model calls, refused ones included (a whole number).' }),
    errors: t.exposeFloat('errors', { description: 'Calls answered with a status of 400 or more (a whole number).' }),
    promptTokens: t.exposeFloat('promptTokens', { description: 'Prompt tokens (a whole number; a Float because sums pass 2^31).' }),
    completionTokens: t.exposeFloat('completionTokens', { description: 'Completion tokens (a whole number; a Float because sums pass 2^31).' }),
    totalTokens: t.exposeFloat('totalTokens', { description: 'Total tokens (a whole number; a Float because sums pass 2^31).' }),
    cost: t.exposeFloat('cost', { description: 'US dollars.' }),
  }),
});

const UsageSummaryGroup = builder.enumType('UsageSummaryGroup', {
  description: 'What usage is grouped by.',
  values: Object.fromEntries(requestLog.SUMMARY_GROUPS.map((g) => [g, { value: g, description: `By ${g.replace('_', ' ')}.` }])) as Record<requestLog.SummaryGroup, { value: requestLog.SummaryGroup; description: string }>,
});

const filterArgs = builder.args((t) => ({
  workspaceId: t.string({ description: 'Only this workspace (id or slug).' }),
  apiKeyId: t.string({ description: 'Only this API key.' }),
  virtualKey: t.string({ description: 'Only this virtual key.' }),
  model: t.string({ description: 'Only this model.' }),
  status: t.int({ description: 'Only this HTTP status.' }),
  from: t.string({ description: 'From this time on (ISO 8601 or Unix seconds).' }),
  to: t.string({ description: 'Before this time (ISO 8601 or Unix seconds).' }),
}));

builder.queryFields((t) => ({
  requestLogs: t.field({
    type: RequestLogPageRef,
    description: 'The request log, newest first.',
    args: {
      ...filterArgs,
      limit: t.arg.int({ description: '1–100 (default 20).' }),
      after: t.arg.string({ description: 'The `lastId` of the previous page.' }),
    },
    resolve: (_root, args, ctx) => requestLog.listRequestLogs(ctx, args, { limit: args.limit, after: args.after }),
  }),
  usageSummary: t.field({
    type: [UsageSummaryRowRef],
    description: 'Requests, errors, tokens and cost of the request log, grouped.',
    args: {
      ...filterArgs,
      groupBy: t.arg({ type: [UsageSummaryGroup], description: 'Groups, in order (none: one total row).' }),
    },
    resolve: (_root, args, ctx) => requestLog.usageSummary(ctx, args.groupBy ?? [], args),
  }),
}));
