import type { EntityManager } from '@mikro-orm/core';
import { resolveWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { parseContract } from '../../lib/contract.js';
import { pageOf, type Page } from '../../lib/paging.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isUuid, uuid } from '../../lib/ids.js';
import type { Runtime } from '../../runtime.js';
import { validateName } from '../tenancy/tenancy.service.js';
import { validateLimits } from '../usage/alerts.js';
import { matches, valueKey, WILDCARD, type Condition, type GroupByKey, type UsageRequest, type ValidationIssue } from '../usage/conditions.js';
import { usageEngine, type BucketUsage, type LimitSpec } from '../usage/usage-engine.js';
import { nextReset, periodStart } from '../usage/usage-periods.js';
import { findMatchingPoliciesCached, indexPolicy, policiesChanged, unindexPolicy } from './policy-index.js';
import { policyPage, type PolicyListFilter } from './policy-list.js';
import { DEFAULT_POLICY_NAME, listPoliciesContract, type CreatePolicyInput, type PolicyStatus, type PolicyType, type UpdatePolicyInput } from './policies.contract.js';
import { UsageLimitsPolicySchema, type UsageLimitsPolicy } from './usage-limits-policy.entity.js';

export const POLICY_NOT_FOUND = 'Usage limits policy not found.';

const invalid = (param: string, message: string) => new BadRequestError(message, { param, code: 'invalid_value' });

function throwFirst(issues: ValidationIssue[]): void {
  if (issues.length) throw invalid(issues[0].param, issues[0].message);
}

export interface ListPoliciesInput {
  workspaceId?: string | null;
  /** Both front doors type these (a REST enum, a GraphQL enum). */
  status?: PolicyStatus | null;
  type?: PolicyType | null;
  pageSize?: number | null;
  currentPage?: number | null;
}

export type PolicyPage = Page<UsageLimitsPolicy>;

/**
 * A page of the caller's policies, newest first (ties by id), filtered, counted and paged in SQL
 * (policy-list.ts). An organisation key sees every workspace's policies unless `workspaceId`
 * narrows them; a workspace key sees its own workspace's.
 */
export async function listPolicies(ctx: ServiceContext, input: ListPoliciesInput): Promise<PolicyPage> {
  const filter = parseContract(listPoliciesContract, { workspace_id: input.workspaceId, status: input.status, type: input.type });
  const page = pageOf(input); // a paging problem is reported before the workspace is looked up
  const where: PolicyListFilter = { ...ctx.scope.rows(), status: filter.status ?? 'active' };
  if (filter.workspace_id != null) where.workspaceId = (await ctx.scope.workspace(ctx.em, filter.workspace_id, 'workspace_id')).id;
  if (filter.type) where.type = filter.type;
  return policyPage(ctx.runtime, ctx.em, where, page);
}

/** A policy the caller can see: another organisation's, or another workspace's for a workspace key, is a 404. */
export async function getPolicy(ctx: ServiceContext, id: string): Promise<UsageLimitsPolicy> {
  const policy = isUuid(id)
    ? await ctx.em.findOne(UsageLimitsPolicySchema, { id: id.toLowerCase(), organisationId: ctx.principal.organisationId })
    : null;
  if (!policy || !ctx.scope.owns(policy)) {
    throw new NotFoundError(POLICY_NOT_FOUND, { param: 'id', code: 'policy_not_found' });
  }
  return policy;
}

/**
 * A `workspace_id` condition names the policy's own workspace (by id or slug; stored as the id) or
 * is `*`: a policy only ever governs requests in its own workspace, so any other value would make
 * it silently inert.
 */
function normaliseConditions(list: Array<{ key: string; value: string }>, workspace: { id: string; slug: string }): Condition[] {
  return list.map((condition, i) => {
    if (condition.key !== 'workspace_id' || condition.value === WILDCARD) return { key: condition.key, value: condition.value };
    if (condition.value.toLowerCase() === workspace.id || condition.value === workspace.slug) return { key: condition.key, value: workspace.id };
    throw invalid(
      `conditions[${i}].value`,
      `conditions[${i}].value must be '${WILDCARD}' or the policy's own workspace ('${workspace.slug}'): a policy applies only to requests in its workspace.`,
    );
  });
}

export async function createPolicy(ctx: ServiceContext, input: CreatePolicyInput): Promise<UsageLimitsPolicy> {
  const { type, credit_limit: creditLimit } = input;
  const alertThreshold = input.alert_threshold ?? null;
  throwFirst(validateLimits({ creditLimit, alertThreshold }));
  const periodicReset = input.periodic_reset ?? null;
  const name = input.name == null ? DEFAULT_POLICY_NAME : validateName(input.name);
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, input.workspace_id, 'workspace_id');
  const conditions = normaliseConditions(input.conditions, workspace);
  const groupBy: GroupByKey[] = input.group_by.map(({ key }) => ({ key }));
  const now = ctx.runtime.clock.now();
  const policy = ctx.em.create(UsageLimitsPolicySchema, {
    id: uuid(),
    organisationId: ctx.principal.organisationId,
    workspaceId: workspace.id,
    name,
    type,
    status: 'active',
    conditions,
    groupBy,
    creditLimit,
    alertThreshold,
    periodicReset,
    lastResetAt: null,
    createdAt: now,
    updatedAt: now,
  });
  indexPolicy(ctx.em, policy);
  await ctx.em.flush();
  policiesChanged(ctx.runtime);
  return policy;
}

/**
 * Changes name, limits or reset rule (omitted fields keep their values; `alert_threshold` and
 * `periodic_reset` accept null), and zeroes the current period's usage of one value key when
 * `reset_usage_for_value` names it. Archived policies cannot be changed.
 */
export async function updatePolicy(ctx: ServiceContext, id: string, input: UpdatePolicyInput): Promise<UsageLimitsPolicy> {
  const policy = await getChangeablePolicy(ctx, id);
  const name = input.name === undefined ? policy.name : validateName(input.name);
  const creditLimit = input.credit_limit ?? policy.creditLimit;
  const alertThreshold = input.alert_threshold === undefined ? (policy.alertThreshold ?? null) : input.alert_threshold;
  throwFirst(validateLimits({ creditLimit, alertThreshold }));
  const periodicReset = input.periodic_reset === undefined ? (policy.periodicReset ?? null) : input.periodic_reset;
  const resetValue = input.reset_usage_for_value;
  const now = ctx.runtime.clock.now();
  const limitsChanged = creditLimit !== policy.creditLimit || alertThreshold !== (policy.alertThreshold ?? null);
  Object.assign(policy, { name, creditLimit, alertThreshold, periodicReset, updatedAt: now });
  await ctx.em.flush();
  if (limitsChanged) await usageEngine(ctx.runtime).updateLimits('policy', policy.id, { type: policy.type, creditLimit, alertThreshold });
  if (resetValue) await resetValueKey(ctx, policy, resetValue);
  policiesChanged(ctx.runtime);
  return policy;
}

/** A visible policy that may still change: an archived one is a 400. */
export async function getChangeablePolicy(ctx: ServiceContext, id: string): Promise<UsageLimitsPolicy> {
  const policy = await getPolicy(ctx, id);
  if (policy.status === 'archived') {
    throw new BadRequestError('Archived usage limits policies cannot be changed.', { code: 'policy_archived' });
  }
  return policy;
}

/**
 * Zeroes one value key's usage of the current period and clears its alert flags (so the limit
 * admits again and alerts can fire again); the policy's last reset becomes now.
 */
export async function resetValueKey(ctx: ServiceContext, policy: UsageLimitsPolicy, valueKey: string): Promise<void> {
  policy.lastResetAt = ctx.runtime.clock.now();
  await ctx.em.flush();
  await usageEngine(ctx.runtime).resetUsage('policy', policy.id, valueKey, { type: policy.type, periodicReset: policy.periodicReset ?? null });
}

/** DELETE: archives (idempotent). An archived policy no longer applies to requests. */
export async function archivePolicy(ctx: ServiceContext, id: string): Promise<UsageLimitsPolicy> {
  const policy = await getPolicy(ctx, id);
  if (policy.status !== 'archived') {
    policy.status = 'archived';
    policy.updatedAt = ctx.runtime.clock.now();
    // The status and the index leave together: no archived policy keeps its terms.
    await ctx.em.transactional(async (tx) => {
      await tx.flush();
      await unindexPolicy(tx, policy.id);
    });
    policiesChanged(ctx.runtime);
  }
  return policy;
}

/** When the current period ends (null: never resets). */
export function nextUsageResetAt(policy: Pick<UsageLimitsPolicy, 'periodicReset'>, now: Date): Date | null {
  return nextReset(policy.periodicReset ?? null, now);
}

/** The latest reset: a manual one, or the start of the current period if that came after creation. */
export function lastResetAt(policy: Pick<UsageLimitsPolicy, 'periodicReset' | 'lastResetAt' | 'createdAt'>, now: Date): Date | null {
  const candidates: Date[] = [];
  if (policy.lastResetAt) candidates.push(new Date(policy.lastResetAt));
  if (policy.periodicReset) {
    const start = periodStart(policy.periodicReset, now);
    if (start.getTime() > new Date(policy.createdAt).getTime()) candidates.push(start);
  }
  if (!candidates.length) return null;
  return new Date(Math.max(...candidates.map((d) => d.getTime())));
}

/** Current-period usage per value key for many policies at once (one query). */
export function valueKeyUsageOf(runtime: Runtime, policies: ReadonlyArray<Pick<UsageLimitsPolicy, 'id' | 'type' | 'periodicReset' | 'creditLimit'>>): Promise<BucketUsage[][]> {
  return usageEngine(runtime).currentBucketsOf(
    'policy',
    policies.map((p) => ({ ownerId: p.id, type: p.type, periodicReset: p.periodicReset ?? null, creditLimit: p.creditLimit })),
  );
}

export function policyLabel(policy: Pick<UsageLimitsPolicy, 'id' | 'name'>): string {
  return `usage-limit policy '${policy.name}' (${policy.id})`;
}

/** The limit a policy puts on one request. */
export function policySpec(policy: UsageLimitsPolicy, req: UsageRequest): LimitSpec {
  return {
    ownerType: 'policy',
    ownerId: policy.id,
    valueKey: valueKey(policy.groupBy, req),
    type: policy.type,
    creditLimit: policy.creditLimit,
    alertThreshold: policy.alertThreshold ?? null,
    periodicReset: policy.periodicReset ?? null,
    workspaceId: policy.workspaceId,
    label: policyLabel(policy),
  };
}

/**
 * The data plane's question: which limits apply to this request? The active policies of the
 * request's workspace whose conditions all match, oldest first (a stable order for reservations),
 * from the config cache.
 */
export async function matchingPolicySpecs(runtime: Runtime, em: EntityManager, organisationId: string, req: UsageRequest): Promise<LimitSpec[]> {
  // The index finds them; `matches` stays the rule's definition (and a guard on what the index returns).
  const policies = await findMatchingPoliciesCached(runtime, em, organisationId, req);
  return policies.filter((policy) => matches(policy.conditions, req)).map((policy) => policySpec(policy, req));
}
