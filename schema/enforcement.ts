import type { AdmissionDecision, GuardrailDecision, LimitDecision, RateLimitDecision, Settlement } from '../src/modules/enforcement/decisions.js';
import { enforcementOfRuns, type RunEnforcementView } from '../src/modules/enforcement/enforcement.service.js';
import { builder } from './builder.js';
import { RunRef } from './runs.js';

/*
 * What data-plane enforcement decided for a run (`Run.enforcement`): each admission (create,
 * and each accepted tool-output submission) with its rate-limit result, the usage limits it was
 * checked against, its input-guardrail evaluations and how its usage settled; and the output
 * guardrail evaluations of its answers.
 */

const RateLimitDecisionRef = builder.objectRef<RateLimitDecision>('RateLimitDecision').implement({
  description: 'The rate limit of the workspace access, as counted for this request.',
  fields: (t) => ({
    limit: t.exposeInt('limit', { description: 'Requests admitted per window.' }),
    remaining: t.exposeInt('remaining', { description: 'Requests still admitted in the window after this one.' }),
    resetAt: t.exposeInt('resetAt', { description: 'Unix seconds when the window ends.' }),
  }),
});

const LimitDecisionRef = builder.objectRef<LimitDecision>('LimitDecision').implement({
  description: 'A usage limit the request was checked against, and its bucket right after the reservation.',
  fields: (t) => ({
    ownerType: t.exposeString('ownerType', { description: '`policy` or `workspace_access`.' }),
    ownerId: t.exposeString('ownerId', { description: 'Policy id or workspace-access id.' }),
    label: t.exposeString('label', { description: 'What the limit is, in words.' }),
    valueKey: t.exposeString('valueKey', { description: 'The bucket (e.g. `api_key:<id>`).' }),
    type: t.exposeString('type', { description: '`tokens` or `cost`.' }),
    creditLimit: t.exposeFloat('creditLimit', { description: 'The limit (tokens or US dollars).' }),
    currentUsage: t.exposeFloat('currentUsage', { description: 'Settled usage of the bucket.' }),
    reserved: t.exposeFloat('reserved', { description: 'Estimates held by requests in progress, this one included.' }),
  }),
});

const GuardrailDecisionRef = builder.objectRef<GuardrailDecision & { createdAt?: Date }>('GuardrailDecision').implement({
  description: 'The evaluation of a provider’s input or output guardrails.',
  fields: (t) => ({
    stage: t.exposeString('stage', { description: '`input` or `output`.' }),
    verdict: t.exposeBoolean('verdict', { description: 'Every synchronous guardrail passed.' }),
    deny: t.exposeBoolean('deny', { description: 'Refused (446 on input; a failed run on output).' }),
    results: t.expose('results', {
      type: 'JSON',
      description: 'Per guardrail: id, slug, name, version_id, verdict, deny, async, checks, feedback, duration_ms, evaluation_id.',
    }),
    missing: t.exposeStringList('missing', { description: 'Refs that named no guardrail (fail closed).' }),
    skipped: t.exposeStringList('skipped', { description: 'Archived guardrails skipped.' }),
    pendingAsync: t.exposeStringList('pendingAsync', { description: 'Async guardrails evaluated after the response (see guardrailEvaluations).' }),
  }),
});

const SettlementRef = builder.objectRef<Settlement>('UsageSettlement').implement({
  description: 'How an admission’s share of the run’s usage was counted when the run ended.',
  fields: (t) => ({
    action: t.exposeString('action', { description: '`settled` (usage counted in every bucket) or `released` (nothing used).' }),
    promptTokens: t.exposeInt('promptTokens', { description: 'Prompt tokens of this admission’s segment of the run.' }),
    completionTokens: t.exposeInt('completionTokens', { description: 'Completion tokens of the segment.' }),
    totalTokens: t.exposeInt('totalTokens', { description: 'Total tokens of the segment.' }),
    cost: t.exposeFloat('cost', { description: 'US dollars (counted only when a cost limit applied; else 0).' }),
    at: t.exposeString('at', { description: 'ISO 8601 time of the settlement.' }),
  }),
});

type AdmissionView = RunEnforcementView['admissions'][number];

const AdmissionDecisionRef = builder.objectRef<AdmissionView>('AdmissionDecision').implement({
  description: 'One admission of the run: create run, create thread and run, or submit tool outputs.',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '`create_run`, `create_thread_and_run` or `submit_tool_outputs`.' }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'The request’s x-gateway-request-id.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was admitted.', resolve: (a) => a.createdAt }),
    status: t.int({ description: '200, or 246 when a non-deny input guardrail failed.', resolve: (a) => a.decision.status }),
    rateLimit: t.field({ type: RateLimitDecisionRef, nullable: true, description: 'Null without a rate limit.', resolve: (a) => a.decision.rateLimit }),
    limits: t.field({ type: [LimitDecisionRef], description: 'Usage limits checked (empty: none applied).', resolve: (a) => a.decision.limits }),
    estimate: t.field({
      type: 'JSON',
      nullable: true,
      description: 'What was reserved: `{tokens, cost}`; null when no limit applied.',
      resolve: (a: AdmissionView) => a.decision.estimate as AdmissionDecision['estimate'],
    }),
    inputGuardrails: t.field({ type: GuardrailDecisionRef, nullable: true, description: 'Null when the provider has none.', resolve: (a) => a.inputGuardrails }),
    settlement: t.field({ type: SettlementRef, nullable: true, description: 'Null until the run ends.', resolve: (a) => a.settlement }),
  }),
});

const RunEnforcementRef = builder.objectRef<RunEnforcementView>('RunEnforcement').implement({
  description: 'The data-plane enforcement decisions that applied to a run.',
  fields: (t) => ({
    admissions: t.field({ type: [AdmissionDecisionRef], description: 'In order.', resolve: (e) => e.admissions }),
    outputGuardrails: t.field({ type: [GuardrailDecisionRef], description: 'Output guardrail evaluations of the run’s answers, in order.', resolve: (e) => e.outputGuardrails }),
  }),
});

builder.objectField(RunRef, 'enforcement', (t) =>
  t.loadable({
    type: RunEnforcementRef,
    description: 'What data-plane enforcement decided for this run (rate limit, usage limits, guardrails, usage settlement).',
    load: (ids: string[], ctx) => enforcementOfRuns(ctx.em, ids),
    resolve: (run) => run.id,
  }),
);
