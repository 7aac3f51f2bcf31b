import { createPolicyBody, listPoliciesQuery, listPolicyEntitiesQuery, updatePolicyBody } from '../bodies/policies.js';
import { graphqlInput, policiesContract } from '../../schema/contracts.js';
import { listBody, type RouteRow } from '../route.js';

interface ValueKeyUsageWire {
  value_key: string;
  current_usage: number;
  status: string;
  is_threshold_alerts_sent: boolean;
  is_exhausted_alerts_sent: boolean;
}

/**
 * The policy as the REST wire shows it: `value_key_usage` (a GraphQL list) becomes
 * `value_key_usage_map`. No `object`: the Portkey document's list item has none, only the single
 * GET adds it (`UsageLimitsPolicyResponse`).
 */
export function wirePolicy(policy: { value_key_usage: ValueKeyUsageWire[] } & Record<string, unknown>): Record<string, unknown> {
  const { value_key_usage, ...rest } = policy;
  const map = Object.fromEntries(
    value_key_usage.map(({ value_key, ...usage }) => [value_key, usage]),
  );
  return { ...rest, value_key_usage_map: map };
}

/** Usage-limits policies (docs/contract.md#usage-limit-policies). */
export const policiesRoutes: RouteRow[] = [
  {
    method: 'GET',
    path: '/v1/policies/usage-limits',
    operation: 'RestListUsageLimitsPolicies',
    query: listPoliciesQuery,
    variables: ({ query }) => ({
      workspaceId: query.workspace_id,
      status: query.status,
      type: query.type,
      pageSize: query.page_size,
      currentPage: query.current_page,
    }),
    result: (data) => listBody(data.usageLimitsPolicies, wirePolicy),
  },
  {
    method: 'POST',
    path: '/v1/policies/usage-limits',
    operation: 'RestCreateUsageLimitsPolicy',
    body: createPolicyBody,
    variables: ({ body }) => ({ input: graphqlInput(policiesContract.createPolicyContract, body) }),
    result: (data) => ({ id: data.createUsageLimitsPolicy.id, object: 'policy_usage_limits' }),
  },
  {
    method: 'GET',
    path: '/v1/policies/usage-limits/:id',
    operation: 'RestGetUsageLimitsPolicy',
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => ({ object: 'policy_usage_limits', ...wirePolicy(data.usageLimitsPolicy) }),
  },
  {
    method: 'PUT',
    path: '/v1/policies/usage-limits/:id',
    operation: 'RestUpdateUsageLimitsPolicy',
    body: updatePolicyBody,
    variables: ({ params, body }) => ({ id: params.id, input: graphqlInput(policiesContract.updatePolicyContract, body) }),
    result: () => ({}),
  },
  {
    method: 'GET',
    path: '/v1/policies/usage-limits/:id/entities',
    operation: 'RestListUsageLimitsPolicyEntities',
    query: listPolicyEntitiesQuery,
    variables: ({ params, query }) => ({
      id: params.id,
      status: query.status,
      search: query.search,
      pageSize: query.page_size,
      currentPage: query.current_page,
    }),
    result: (data) => listBody(data.usageLimitsPolicy.entities),
  },
  {
    method: 'PUT',
    path: '/v1/policies/usage-limits/:id/entities/:entityId/reset',
    operation: 'RestResetUsageLimitsPolicyEntity',
    variables: ({ params }) => ({ id: params.id, entityId: params.entityId }),
    result: () => ({}),
  },
  {
    method: 'DELETE',
    path: '/v1/policies/usage-limits/:id',
    operation: 'RestArchiveUsageLimitsPolicy',
    variables: ({ params }) => ({ id: params.id }),
    result: () => ({}),
  },
];
