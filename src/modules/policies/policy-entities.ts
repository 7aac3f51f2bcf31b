/**
 * A policy's entities: its value keys (one per combination of `group_by` values seen in requests),
 * each with its usage in the current period, the limit and its status. An entity's id is its value
 * key (`api_key:<id>|metadata.user:alice`): stable across periods, and what
 * `reset_usage_for_value` already names.
 */
import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { parseContract } from '../../lib/contract.js';
import { pageOf, type Page, type PageInput } from '../../lib/paging.js';
import type { BucketStatus } from '../usage/alerts.js';
import { usageEngine, type BucketUsage, type ValueKeyQuery } from '../usage/usage-engine.js';
import { listPolicyEntitiesContract } from './policies.contract.js';
import { getChangeablePolicy, resetValueKey } from './policies.service.js';
import type { UsageLimitsPolicy } from './usage-limits-policy.entity.js';

export const POLICY_ENTITY_NOT_FOUND = 'Usage limits policy entity not found.';

export interface PolicyEntity extends BucketUsage {
  /** The value key. */
  id: string;
  /** The policy's limit per value key and period. */
  creditLimit: number;
}

export interface ListEntitiesInput extends PageInput {
  status?: BucketStatus | null;
  /** Only value keys containing this text (case-insensitive); empty: all. */
  search?: string | null;
}

const entityOf = (policy: UsageLimitsPolicy, usage: BucketUsage): PolicyEntity => ({ ...usage, id: usage.valueKey, creditLimit: Number(policy.creditLimit) });

/** A page of the (visible) policy's entities, ordered by value key, with the total. */
export async function listPolicyEntities(ctx: ServiceContext, policy: UsageLimitsPolicy, input: ListEntitiesInput): Promise<Page<PolicyEntity>> {
  const filter = parseContract(listPolicyEntitiesContract, { status: input.status, search: input.search });
  return entityPage(ctx, policy, { status: filter.status ?? null, search: filter.search || null, ...pageOf(input) });
}

async function entityPage(ctx: ServiceContext, policy: UsageLimitsPolicy, query: Pick<ValueKeyQuery, 'status' | 'search' | 'valueKey' | 'offset' | 'limit'>): Promise<Page<PolicyEntity>> {
  const page = await usageEngine(ctx.runtime).valueKeyPage('policy', policy.id, {
    type: policy.type,
    periodicReset: policy.periodicReset ?? null,
    creditLimit: Number(policy.creditLimit),
    ...query,
  });
  return { total: page.total, data: page.data.map((usage) => entityOf(policy, usage)) };
}

/**
 * Zeroes one entity's usage of the current period (as `reset_usage_for_value` does) and answers the
 * entity. A value key the policy has never counted is a 404; an archived policy cannot be reset.
 */
export async function resetPolicyEntity(ctx: ServiceContext, policyId: string, entityId: string): Promise<PolicyEntity> {
  const policy = await getChangeablePolicy(ctx, policyId);
  // A page of size 0 is only the count: the existence check reads no usage it would then discard.
  if ((await entityPage(ctx, policy, { valueKey: entityId, offset: 0, limit: 0 })).total === 0) {
    throw new NotFoundError(POLICY_ENTITY_NOT_FOUND, { param: 'entity_id', code: 'policy_entity_not_found' });
  }
  await resetValueKey(ctx, policy, entityId);
  return (await entityPage(ctx, policy, { valueKey: entityId, offset: 0, limit: 1 })).data[0];
}
