import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * How many usage-limit policies each workspace has, per status and type: the policy list's total
 * (`policy-list.ts`) is a sum of a few of these rows instead of a count of every matching policy.
 * Kept by database triggers on `usage_limits_policies` (migration 0006_policy_counts), so every
 * write, in the writer's transaction and by whatever writes, moves the count with the row. Never
 * loaded as entities; declared here so the schema stays what the migrations make.
 */
export const PolicyCountSchema = defineEntity({
  name: 'PolicyCount',
  tableName: 'usage_policy_counts',
  properties: (p) => ({
    organisationId: p.uuid().primary(),
    workspaceId: p.uuid().primary(),
    status: p.enum(['active', 'archived'] as const).primary(),
    type: p.enum(['cost', 'tokens'] as const).primary(),
    policies: p.integer(),
  }),
});

export type PolicyCount = InferEntity<typeof PolicyCountSchema>;
