import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * The index that finds a request's policies (conditions.ts `policyTerms`): one row per term of each
 * active policy, with the policy's number of terms. Written with the policy, removed when it is
 * archived; `matchingPolicySpecs` reads it.
 */
export const PolicyTermSchema = defineEntity({
  name: 'PolicyTerm',
  tableName: 'usage_policy_terms',
  properties: (p) => ({
    policyId: p.uuid().primary(),
    key: p.string().primary(),
    value: p.string().primary(),
    workspaceId: p.uuid(),
    /** How many terms the policy has: it matches when the request has all of them. */
    terms: p.integer(),
  }),
  indexes: [{ properties: ['workspaceId', 'key', 'value'] }],
});

export type PolicyTerm = InferEntity<typeof PolicyTermSchema>;
