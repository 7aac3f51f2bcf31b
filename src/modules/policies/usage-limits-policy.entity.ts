import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { Condition, GroupByKey } from '../usage/conditions.js';

/**
 * A usage-limits policy (docs/contract.md#usage-limit-policies): a cost or token budget for the requests of its workspace
 * that match `conditions`, counted per `group_by` value key and period. Usage lives in
 * `usage_buckets` (owner type `policy`), not here. Deleting archives. Triggers on the table keep
 * `usage_policy_counts` (policy-count.entity.ts): a migration that rebuilds the table (SQLite's
 * way of changing a column) must create them again.
 */
export const UsageLimitsPolicySchema = defineEntity({
  name: 'UsageLimitsPolicy',
  tableName: 'usage_limits_policies',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid(),
    /** The workspace whose requests the policy governs. */
    workspaceId: p.uuid(),
    name: p.string(),
    type: p.enum(['cost', 'tokens'] as const),
    status: p.enum(['active', 'archived'] as const),
    conditions: p.json<Condition[]>(),
    groupBy: p.json<GroupByKey[]>(),
    /** Tokens, or US dollars for `cost`. */
    creditLimit: p.double().$type<number>(),
    alertThreshold: p.double().$type<number>().nullable(),
    periodicReset: p.enum(['monthly', 'weekly'] as const).nullable(),
    /** When usage was last reset by hand (`reset_usage_for_value`); periodic resets are derived from the clock. */
    lastResetAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  // The list's (policy-list.ts): equal on organisation (and workspace) and status, in its order
  // (newest first, ties by id), then `type`, so a page's offset is walked in the index alone, a
  // type filter included, and only the page's rows are read from the table.
  indexes: [
    { properties: ['organisationId', 'status', 'createdAt', 'id', 'type'] },
    { properties: ['organisationId', 'workspaceId', 'status', 'createdAt', 'id', 'type'] },
  ],
});

export type UsageLimitsPolicy = InferEntity<typeof UsageLimitsPolicySchema>;
