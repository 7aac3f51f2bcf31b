import { resolveWorkspace } from '../src/auth/tenancy.js';
import type { UsageLimitsPolicy } from '../src/modules/policies/usage-limits-policy.entity.js';
import * as policies from '../src/modules/policies/policies.service.js';
import * as entities from '../src/modules/policies/policy-entities.js';
import type { Page } from '../src/lib/paging.js';
import type { BucketUsage, UsageAlertEvent } from '../src/modules/usage/usage-engine.js';
import { usageAlertsTopic } from '../src/modules/usage/usage-engine.js';
import { KEYS_DESCRIPTION, type Condition, type GroupByKey } from '../src/modules/usage/conditions.js';
import * as contract from '../src/modules/policies/policies.contract.js';
import { builder } from './builder.js';
import { contractInputType, parseInput } from './contract-input.js';

export const UsageLimitsPolicyTypeEnum = builder.enumType('UsageLimitsPolicyType', {
  description: 'What a usage limit counts.',
  values: {
    cost: { description: "US dollars, from the model's price per million input and output tokens." },
    tokens: { description: 'Total tokens (prompt + completion).' },
  } as const,
});

export const UsageLimitsPolicyStatusEnum = builder.enumType('UsageLimitsPolicyStatus', {
  description: 'Archived policies no longer apply to requests.',
  values: { active: { description: 'Applies to matching requests.' }, archived: { description: 'Deleted: kept for the record, applies to nothing.' } } as const,
});

export const UsageLimitsPeriodicResetEnum = builder.enumType('UsageLimitsPeriodicReset', {
  description: 'When usage starts again from zero (null: never).',
  values: {
    monthly: { description: 'At 00:00 UTC on the 1st of each month.' },
    weekly: { description: 'At 00:00 UTC each Monday.' },
  } as const,
});

export const UsageBucketStatusEnum = builder.enumType('UsageBucketStatus', {
  description: 'Whether a value key still admits requests this period.',
  values: { active: { description: 'Below the limit.' }, exhausted: { description: 'The limit is reached: requests are refused with 412.' } } as const,
});

export const UsageAlertKindEnum = builder.enumType('UsageAlertKind', {
  description: 'Which line a bucket crossed.',
  values: { threshold: { description: 'Usage reached the alert threshold.' }, exhausted: { description: 'Usage reached the credit limit.' } } as const,
});

const ConditionRef = builder.objectRef<Condition>('UsageLimitsPolicyCondition').implement({
  description: 'One condition: the request value of `key` must equal `value` (`*`: any value).',
  fields: (t) => ({
    key: t.exposeString('key', { description: KEYS_DESCRIPTION }),
    value: t.exposeString('value', { description: 'The value to match exactly, or `*`.' }),
  }),
});

const GroupByRef = builder.objectRef<GroupByKey>('UsageLimitsPolicyGroupBy').implement({
  description: 'One key whose request value picks the bucket.',
  fields: (t) => ({
    key: t.exposeString('key', { description: KEYS_DESCRIPTION }),
  }),
});

const ValueKeyUsageRef = builder.objectRef<BucketUsage>('ValueKeyUsage').implement({
  description: "One value key's usage in the current period.",
  fields: (t) => ({
    valueKey: t.exposeString('valueKey', { description: 'The joined group_by values, e.g. `api_key:<id>`.' }),
    currentUsage: t.exposeFloat('currentUsage', { description: 'Settled usage: tokens, or US dollars for cost policies.' }),
    status: t.field({ type: UsageBucketStatusEnum, description: 'Exhausted once usage reaches the credit limit.', resolve: (b) => b.status }),
    isThresholdAlertsSent: t.exposeBoolean('isThresholdAlertsSent', { description: 'The threshold alert was raised this period.' }),
    isExhaustedAlertsSent: t.exposeBoolean('isExhaustedAlertsSent', { description: 'The limit-reached alert was raised this period.' }),
  }),
});

const UsageLimitsPolicyEntityRef = builder.objectRef<entities.PolicyEntity>('UsageLimitsPolicyEntity').implement({
  description: "One of a policy's value keys (a combination of group_by values seen in requests) with its usage in the current period.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The value key: what the reset mutation and `resetUsageForValue` name.' }),
    valueKey: t.exposeString('valueKey', { description: 'The joined group_by values, e.g. `api_key:<id>|metadata.user:alice`.' }),
    currentUsage: t.exposeFloat('currentUsage', { description: 'Settled usage this period: tokens, or US dollars for cost policies (0 when none yet).' }),
    creditLimit: t.exposeFloat('creditLimit', { description: "The policy's limit per value key and period." }),
    periodKey: t.exposeString('periodKey', { description: 'The current period: `2026-11`, `2026-W48` or `all` (never resets).' }),
    status: t.field({ type: UsageBucketStatusEnum, description: 'Exhausted once usage reaches the credit limit.', resolve: (e) => e.status }),
    isThresholdAlertsSent: t.exposeBoolean('isThresholdAlertsSent', { description: 'The threshold alert was raised this period.' }),
    isExhaustedAlertsSent: t.exposeBoolean('isExhaustedAlertsSent', { description: 'The limit-reached alert was raised this period.' }),
  }),
});

const UsageLimitsPolicyEntityListRef = builder.objectRef<Page<entities.PolicyEntity>>('UsageLimitsPolicyEntityList').implement({
  description: "One page of a policy's entities, ordered by value key.",
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'How many entities match the filters (all pages).' }),
    data: t.field({ type: [UsageLimitsPolicyEntityRef], description: 'This page.', resolve: (page) => page.data }),
  }),
});

export const UsageLimitsPolicyRef = builder.objectRef<UsageLimitsPolicy>('UsageLimitsPolicy').implement({
  description: 'A cost or token budget for the matching requests of a workspace, per group_by value and period.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    type: t.field({ type: UsageLimitsPolicyTypeEnum, description: 'What is counted.', resolve: (p) => p.type }),
    status: t.field({ type: UsageLimitsPolicyStatusEnum, description: 'Active or archived.', resolve: (p) => p.status }),
    workspaceId: t.exposeID('workspaceId', { description: 'The workspace whose requests the policy governs.' }),
    organisationId: t.exposeID('organisationId', { description: 'The owning organisation.' }),
    conditions: t.field({ type: [ConditionRef], description: 'All must match for the policy to apply.', resolve: (p) => p.conditions }),
    groupBy: t.field({ type: [GroupByRef], description: 'Keys whose values pick the bucket.', resolve: (p) => p.groupBy }),
    creditLimit: t.float({ description: 'The budget per value key and period.', resolve: (p) => Number(p.creditLimit) }),
    alertThreshold: t.float({
      nullable: true,
      description: 'Usage at which an alert is raised (below creditLimit).',
      resolve: (p) => (p.alertThreshold == null ? null : Number(p.alertThreshold)),
    }),
    periodicReset: t.field({
      type: UsageLimitsPeriodicResetEnum,
      nullable: true,
      description: 'When usage resets; null: never.',
      resolve: (p) => p.periodicReset ?? null,
    }),
    nextUsageResetAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the current period ends; null when usage never resets.',
      resolve: (p, _a, ctx) => policies.nextUsageResetAt(p, ctx.runtime.clock.now()),
    }),
    lastResetAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'The latest reset: the current period start, or a manual reset, whichever is later.',
      resolve: (p, _a, ctx) => policies.lastResetAt(p, ctx.runtime.clock.now()),
    }),
    valueKeyUsage: t.loadableList({
      type: ValueKeyUsageRef,
      description: 'Usage per value key seen in the current period, ordered by value key.',
      // The key carries what picks the current buckets, so one query serves every policy of a page.
      load: (keys: string[], ctx) => policies.valueKeyUsageOf(ctx.runtime, keys.map((key) => JSON.parse(key))),
      resolve: (p) => JSON.stringify({ id: p.id, type: p.type, periodicReset: p.periodicReset ?? null, creditLimit: Number(p.creditLimit) }),
    }),
    entities: t.field({
      type: UsageLimitsPolicyEntityListRef,
      description: 'Every value key the policy has counted usage for (in any period), with its usage in the current period, by value key.',
      args: {
        status: t.arg({ type: UsageBucketStatusEnum, description: 'Only active or only exhausted entities.' }),
        search: t.arg.string({ description: 'Only value keys containing this text (case-insensitive).' }),
        pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100; 0 returns only the total).' }),
        currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
      },
      resolve: (p, args, ctx) => entities.listPolicyEntities(ctx, p, args),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    lastUpdatedAt: t.field({ type: 'DateTime', description: 'When it last changed.', resolve: (p) => p.updatedAt }),
  }),
});

const UsageLimitsPolicyListRef = builder.objectRef<policies.PolicyPage>('UsageLimitsPolicyList').implement({
  description: 'One page of policies, newest first.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'How many policies match the filters (all pages).' }),
    data: t.field({ type: [UsageLimitsPolicyRef], description: 'This page.', resolve: (page) => page.data }),
  }),
});

const UsageAlertRef = builder.objectRef<UsageAlertEvent>('UsageAlert').implement({
  description: 'A usage bucket crossed its alert threshold or reached its limit (once per bucket and period).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID of the alert.' }),
    kind: t.field({ type: UsageAlertKindEnum, description: 'Threshold or limit reached.', resolve: (a) => a.kind }),
    ownerType: t.exposeString('ownerType', { description: '`policy` or `workspace_access`.' }),
    ownerId: t.exposeString('ownerId', { description: 'The policy or workspace-access id.' }),
    label: t.exposeString('label', { description: 'What set the limit, in words.' }),
    valueKey: t.exposeString('valueKey', { description: 'The bucket’s value key.' }),
    periodKey: t.exposeString('periodKey', { description: 'The period: `2026-11`, `2026-W48` or `all`.' }),
    type: t.field({ type: UsageLimitsPolicyTypeEnum, description: 'What is counted.', resolve: (a) => a.type }),
    currentUsage: t.exposeFloat('currentUsage', { description: 'Usage when the alert was raised.' }),
    creditLimit: t.exposeFloat('creditLimit', { description: 'The limit.' }),
    alertThreshold: t.exposeFloat('alertThreshold', { nullable: true, description: 'The alert threshold, if any.' }),
    workspaceId: t.exposeID('workspaceId', { nullable: true, description: 'The workspace the alert is published to.' }),
    message: t.exposeString('message', { description: 'A sentence for people.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was raised.' }),
  }),
});

builder.queryFields((t) => ({
  usageLimitsPolicies: t.field({
    type: UsageLimitsPolicyListRef,
    description: 'Usage-limits policies the caller can see, newest first (ties by id).',
    args: {
      workspaceId: t.arg.string({ description: 'Only this workspace (UUID or slug).' }),
      status: t.arg({ type: UsageLimitsPolicyStatusEnum, description: 'Default: active.' }),
      type: t.arg({ type: UsageLimitsPolicyTypeEnum, description: 'Only this type.' }),
      pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100; 0 returns only the total).' }),
      currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
    },
    resolve: (_root, args, ctx) => policies.listPolicies(ctx, args),
  }),
  usageLimitsPolicy: t.field({
    type: UsageLimitsPolicyRef,
    description: 'One policy by id.',
    args: { id: t.arg.id({ required: true, description: 'The policy id.' }) },
    resolve: (_root, args, ctx) => policies.getPolicy(ctx, String(args.id)),
  }),
}));

const CreateUsageLimitsPolicyInput = contractInputType('CreateUsageLimitsPolicyInput', 'A new usage-limits policy.', contract.createPolicyContract, {
  conditions: ['UsageLimitsPolicyConditionInput', 'A condition: key and value (`*` for any).'],
  group_by: ['UsageLimitsPolicyGroupByInput', 'A key whose request value picks the bucket.'],
});

const UpdateUsageLimitsPolicyInput = contractInputType(
  'UpdateUsageLimitsPolicyInput',
  'Changes to a policy; omitted fields keep their values.',
  contract.updatePolicyContract,
);

builder.mutationFields((t) => ({
  createUsageLimitsPolicy: t.field({
    type: UsageLimitsPolicyRef,
    description: 'Creates a usage-limits policy.',
    args: { input: t.arg({ type: CreateUsageLimitsPolicyInput, required: true, description: 'The policy.' }) },
    resolve: (_root, { input }, ctx) => policies.createPolicy(ctx, parseInput(contract.createPolicyContract, input)),
  }),
  updateUsageLimitsPolicy: t.field({
    type: UsageLimitsPolicyRef,
    description: 'Changes a policy, or resets the usage of one of its value keys.',
    args: {
      id: t.arg.id({ required: true, description: 'The policy id.' }),
      input: t.arg({ type: UpdateUsageLimitsPolicyInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, { id, input }, ctx) => policies.updatePolicy(ctx, String(id), parseInput(contract.updatePolicyContract, input)),
  }),
  resetUsageLimitsPolicyEntity: t.field({
    type: UsageLimitsPolicyEntityRef,
    description: "Zeroes one entity's usage of the current period and clears its alert flags (as `resetUsageForValue`).",
    args: {
      policyId: t.arg.id({ required: true, description: 'The policy id.' }),
      entityId: t.arg.id({ required: true, description: 'The entity id (its value key).' }),
    },
    resolve: (_root, args, ctx) => entities.resetPolicyEntity(ctx, String(args.policyId), String(args.entityId)),
  }),
  archiveUsageLimitsPolicy: t.field({
    type: UsageLimitsPolicyRef,
    description: 'Archives a policy (what DELETE does): it stops applying to requests.',
    args: { id: t.arg.id({ required: true, description: 'The policy id.' }) },
    resolve: (_root, { id }, ctx) => policies.archivePolicy(ctx, String(id)),
  }),
}));

builder.subscriptionFields((t) => ({
  usageAlerts: t.field({
    type: UsageAlertRef,
    description: "Usage alerts of a workspace's limits (policies and integration access), live.",
    args: { workspaceId: t.arg.string({ description: 'Workspace (UUID or slug); default: the caller’s.' }) },
    subscribe: async (_root, args, ctx) => {
      const workspace = await resolveWorkspace(ctx.em, ctx.principal, args.workspaceId, 'workspace_id');
      return ctx.runtime.pubsub.subscribe<UsageAlertEvent>(usageAlertsTopic(workspace.id), ctx.runtime.shutdown);
    },
    resolve: (alert) => alert,
  }),
}));
