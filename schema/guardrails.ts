import type { GuardrailEvaluation } from '../src/modules/guardrails/guardrail-evaluation.entity.js';
import type { GuardrailVersion } from '../src/modules/guardrails/guardrail-version.entity.js';
import type { Guardrail } from '../src/modules/guardrails/guardrail.entity.js';
import type { CheckOutcome } from '../src/modules/guardrails/evaluate.js';
import type { Feedback, GuardrailActions, NormalizedCheck } from '../src/modules/guardrails/validate.js';
import * as guardrails from '../src/modules/guardrails/guardrails.service.js';
import type { Page } from '../src/modules/guardrails/guardrails.service.js';
import * as contract from '../src/modules/guardrails/guardrails.contract.js';
import { builder } from './builder.js';
import { contractInputType, parseInput } from './contract-input.js';

export const GuardrailStatusEnum = builder.enumType('GuardrailStatus', {
  description: 'Archived guardrails (DELETE) keep their versions and evaluations but are no longer evaluated or listed by default.',
  values: { active: { description: 'In use.' }, archived: { description: 'Deleted through the API; kept for history.' } } as const,
});

export const GuardrailStageEnum = builder.enumType('GuardrailStage', {
  description: "Which side of a request a guardrail judged: the caller's input or the model's output.",
  values: { input: { description: 'Input guardrails (before model work).' }, output: { description: "Output guardrails (the model's answer)." } } as const,
});

const GuardrailFeedbackRef = builder.objectRef<Feedback>('GuardrailFeedback').implement({
  description: 'A feedback record an evaluation produces (on_success or on_fail).',
  fields: (t) => ({
    value: t.exposeFloat('value', { description: 'Score (default 5 on success, -5 on failure).' }),
    weight: t.exposeFloat('weight', { description: 'Weight (default 1).' }),
    metadata: t.exposeString('metadata', { description: 'Free text (default empty).' }),
  }),
});

const GuardrailActionFeedbackRef = builder.objectRef<{ feedback: Feedback }>('GuardrailActionFeedback').implement({
  description: 'What an outcome records.',
  fields: (t) => ({
    feedback: t.field({ type: GuardrailFeedbackRef, description: 'The feedback record.', resolve: (a) => a.feedback }),
  }),
});

const GuardrailActionsRef = builder.objectRef<GuardrailActions>('GuardrailActions').implement({
  description: 'What happens when a guardrail is evaluated.',
  fields: (t) => ({
    deny: t.exposeBoolean('deny', { description: 'A failure refuses the request (446) or fails the run.' }),
    async: t.exposeBoolean('async', { description: 'Evaluated after the response; never blocks, only records.' }),
    onSuccess: t.field({ type: GuardrailActionFeedbackRef, description: 'Recorded when every check passes.', resolve: (a) => a.on_success }),
    onFail: t.field({ type: GuardrailActionFeedbackRef, description: 'Recorded when a check fails.', resolve: (a) => a.on_fail }),
  }),
});

const GuardrailCheckRef = builder.objectRef<NormalizedCheck>('GuardrailCheck').implement({
  description: 'One check entry, with the check’s parameter defaults applied.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Check id, e.g. default.jwt, default.regexMatch.' }),
    name: t.string({ nullable: true, description: 'Display name, if one was given.', resolve: (c) => c.name ?? null }),
    isEnabled: t.exposeBoolean('is_enabled', { description: 'Disabled checks are not evaluated.' }),
    parameters: t.field({ type: 'JSON', description: 'The check’s parameters (their shape depends on the check).', resolve: (c) => c.parameters }),
  }),
});

export const GuardrailRef = builder.objectRef<Guardrail>('Guardrail').implement({
  description: 'A named, versioned set of checks and actions; fields show the latest version.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    slug: t.exposeString('slug', { description: 'guard_ + 24 alphanumerics; usable wherever the id is.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    organisationId: t.exposeID('organisationId', { description: 'The owning organisation.' }),
    workspaceId: t.exposeID('workspaceId', { nullable: true, description: 'Its workspace; null for an organisation-wide guardrail.' }),
    status: t.expose('status', { type: GuardrailStatusEnum, description: 'Active or archived.' }),
    ownerId: t.exposeID('ownerId', { description: 'The API key that created it.' }),
    updatedBy: t.exposeID('updatedBy', { description: 'The API key that last changed it.' }),
    versionId: t.exposeID('versionId', { description: 'The latest version.' }),
    version: t.exposeInt('version', { description: 'The latest version’s number (1 when created).' }),
    checks: t.field({ type: [GuardrailCheckRef], description: 'The checks of the latest version.', resolve: (g) => g.checks }),
    actions: t.field({ type: GuardrailActionsRef, description: 'The actions of the latest version.', resolve: (g) => g.actions }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed (a new version, or archived).' }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true, description: 'When it was archived.' }),
  }),
});

const GuardrailVersionRef = builder.objectRef<GuardrailVersion>('GuardrailVersion').implement({
  description: 'One immutable version of a guardrail.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The version id (version_id on the wire).' }),
    guardrailId: t.exposeID('guardrailId', { description: 'The guardrail.' }),
    version: t.exposeInt('version', { description: 'Number, from 1.' }),
    name: t.exposeString('name', { description: 'The guardrail’s name in this version.' }),
    checks: t.field({ type: [GuardrailCheckRef], description: 'Checks.', resolve: (v) => v.checks }),
    actions: t.field({ type: GuardrailActionsRef, description: 'Actions.', resolve: (v) => v.actions }),
    createdBy: t.exposeID('createdBy', { description: 'The API key that wrote it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was written.' }),
  }),
});

const GuardrailCheckResultRef = builder.objectRef<CheckOutcome>('GuardrailCheckResult').implement({
  description: 'One check’s result in an evaluation.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Check id.' }),
    name: t.exposeString('name', { description: 'Its name (the id when unnamed).' }),
    verdict: t.exposeBoolean('verdict', { description: 'Passed.' }),
    explanation: t.exposeString('explanation', { description: 'Why, in words.' }),
    durationMs: t.exposeFloat('duration_ms', { description: 'How long it took.' }),
    data: t.field({ type: 'JSON', nullable: true, description: 'Details the check reported.', resolve: (c) => c.data ?? null }),
    error: t.string({ nullable: true, description: 'Set when no real verdict was reached: timeout, jwks_unavailable, budget_exceeded, exception, …', resolve: (c) => c.error ?? null }),
  }),
});

const GuardrailEvaluationRef = builder.objectRef<GuardrailEvaluation>('GuardrailEvaluation').implement({
  description: 'One guardrail evaluated once for one request, as recorded by the evaluation engine.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    guardrailId: t.exposeID('guardrailId', { description: 'The guardrail.' }),
    versionId: t.exposeID('versionId', { description: 'The version that was evaluated.' }),
    workspaceId: t.exposeID('workspaceId', { nullable: true, description: 'The workspace of the request.' }),
    stage: t.expose('stage', { type: GuardrailStageEnum, description: 'Input or output.' }),
    verdict: t.exposeBoolean('verdict', { description: 'Every enabled check passed.' }),
    deny: t.exposeBoolean('deny', { description: 'Failed with actions.deny (an async guardrail never blocks).' }),
    async: t.exposeBoolean('async', { description: 'Evaluated after the response.' }),
    checks: t.field({ type: [GuardrailCheckResultRef], description: 'Per-check results.', resolve: (e) => e.checks }),
    feedback: t.field({ type: GuardrailFeedbackRef, description: 'The on_success or on_fail feedback, by the verdict.', resolve: (e) => e.feedback }),
    durationMs: t.exposeFloat('durationMs', { description: 'How long the guardrail took.' }),
    runId: t.exposeString('runId', { nullable: true, description: 'The run, when the request belonged to one.' }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'The x-gateway-request-id of the request.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was recorded.' }),
  }),
});

const GuardrailPageRef = builder.objectRef<Page<Guardrail>>('GuardrailPage').implement({
  description: 'A page of guardrails.',
  fields: (t) => ({
    data: t.field({ type: [GuardrailRef], description: 'This page.', resolve: (p) => p.data }),
    total: t.exposeInt('total', { description: 'Every match, not just this page.' }),
  }),
});

const GuardrailEvaluationPageRef = builder.objectRef<Page<GuardrailEvaluation>>('GuardrailEvaluationPage').implement({
  description: 'A page of guardrail evaluations.',
  fields: (t) => ({
    data: t.field({ type: [GuardrailEvaluationRef], description: 'This page.', resolve: (p) => p.data }),
    total: t.exposeInt('total', { description: 'Every match, not just this page.' }),
  }),
});

builder.queryFields((t) => ({
  guardrail: t.field({
    type: GuardrailRef,
    description: 'One guardrail by id or slug (archived ones too).',
    args: { idOrSlug: t.arg.string({ required: true, description: 'UUID or guard_… slug.' }) },
    resolve: (_root, args, ctx) => guardrails.getGuardrail(ctx, args.idOrSlug),
  }),
  guardrails: t.field({
    type: GuardrailPageRef,
    description: 'Guardrails the caller can see, newest first.',
    args: {
      workspaceId: t.arg.string({ description: 'Only this workspace’s (id or slug); default: every visible guardrail.' }),
      status: t.arg({ type: GuardrailStatusEnum, description: 'Default: active.' }),
      pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100; 0 returns only the total).' }),
      currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
    },
    resolve: (_root, args, ctx) => guardrails.listGuardrails(ctx, args),
  }),
  guardrailVersions: t.field({
    type: [GuardrailVersionRef],
    description: 'Every version of a guardrail, oldest first.',
    args: { guardrailId: t.arg.string({ required: true, description: 'UUID or slug.' }) },
    resolve: (_root, args, ctx) => guardrails.listGuardrailVersions(ctx, args.guardrailId),
  }),
  guardrailEvaluations: t.field({
    type: GuardrailEvaluationPageRef,
    description: 'Recorded guardrail evaluations the caller can see, newest first.',
    args: {
      guardrailId: t.arg.string({ description: 'Only this guardrail’s (UUID or slug).' }),
      runId: t.arg.string({ description: 'Only this run’s.' }),
      requestId: t.arg.string({ description: 'Only this request’s.' }),
      stage: t.arg({ type: GuardrailStageEnum, description: 'Only input or only output evaluations.' }),
      pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100).' }),
      currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
    },
    resolve: (_root, args, ctx) => guardrails.listGuardrailEvaluations(ctx, args),
  }),
}));

const CreateGuardrailInput = contractInputType('CreateGuardrailInput', 'A new guardrail.', contract.createGuardrailContract, contract.GRAPHQL_NESTED);
const UpdateGuardrailInput = contractInputType(
  'UpdateGuardrailInput',
  'Any of name, checks, actions; omitted ones stay as they are. Writes a new version.',
  contract.updateGuardrailContract,
  contract.GRAPHQL_NESTED,
);

builder.mutationFields((t) => ({
  createGuardrail: t.field({
    type: GuardrailRef,
    description: 'Creates a guardrail and its first version.',
    args: { input: t.arg({ type: CreateGuardrailInput, required: true, description: 'The guardrail.' }) },
    resolve: (_root, { input }, ctx) => guardrails.createGuardrail(ctx, parseInput(contract.createGuardrailContract, input)),
  }),
  updateGuardrail: t.field({
    type: GuardrailRef,
    description: 'Changes a guardrail by writing a new version; what is omitted stays as it is.',
    args: {
      idOrSlug: t.arg.string({ required: true, description: 'UUID or slug.' }),
      input: t.arg({ type: UpdateGuardrailInput, required: true, description: 'What changes.' }),
    },
    resolve: (_root, { idOrSlug, input }, ctx) => guardrails.updateGuardrail(ctx, idOrSlug, parseInput(contract.updateGuardrailContract, input)),
  }),
  deleteGuardrail: t.field({
    type: GuardrailRef,
    description: 'Archives a guardrail: it is no longer evaluated; its versions and evaluations stay.',
    args: { idOrSlug: t.arg.string({ required: true, description: 'UUID or slug.' }) },
    resolve: (_root, args, ctx) => guardrails.archiveGuardrail(ctx, args.idOrSlug),
  }),
}));
