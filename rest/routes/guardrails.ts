import { createGuardrailBody, listGuardrailsQuery, updateGuardrailBody } from '../bodies/guardrails.js';
import { graphqlInput, guardrailsContract } from '../../schema/contracts.js';
import type { RouteRow } from '../route.js';

/** A stored check entry has a name only when one was given: no `"name": null` on the wire. */
function wireGuardrail(guardrail: { checks: Array<Record<string, unknown>> }) {
  return { ...guardrail, checks: guardrail.checks.map(({ id, name, ...rest }) => (name == null ? { id, ...rest } : { id, name, ...rest })) };
}

/** Guardrails: the portkey-ai SDK's guardrails.create/list/retrieve/update/delete. */
export const guardrailsRoutes: RouteRow[] = [
  {
    method: 'POST',
    path: '/v1/guardrails',
    operation: 'RestCreateGuardrail',
    body: createGuardrailBody,
    variables: ({ body }) => ({ input: graphqlInput(guardrailsContract.createGuardrailContract, body) }),
  },
  {
    method: 'GET',
    path: '/v1/guardrails',
    operation: 'RestListGuardrails',
    query: listGuardrailsQuery,
    variables: ({ query }) => ({ workspaceId: query.workspace_id, status: query.status, pageSize: query.page_size, currentPage: query.current_page }),
  },
  {
    method: 'GET',
    path: '/v1/guardrails/:guardrailId',
    operation: 'RestGetGuardrail',
    variables: ({ params }) => ({ id: params.guardrailId }),
    result: (data) => wireGuardrail(data.guardrail),
  },
  {
    method: 'PUT',
    path: '/v1/guardrails/:guardrailId',
    operation: 'RestUpdateGuardrail',
    body: updateGuardrailBody,
    variables: ({ params, body }) => ({ id: params.guardrailId, input: graphqlInput(guardrailsContract.updateGuardrailContract, body) }),
  },
  {
    method: 'DELETE',
    path: '/v1/guardrails/:guardrailId',
    operation: 'RestDeleteGuardrail',
    variables: ({ params }) => ({ id: params.guardrailId }),
    result: () => ({}),
  },
];
