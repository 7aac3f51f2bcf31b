import { createGuardrailBody, listGuardrailsQuery, updateGuardrailBody, type GuardrailActionsBody, type GuardrailCheckBody } from '../bodies/guardrails.js';
import type { RouteRow } from '../route.js';

/** Wire check entries → GraphQL `GuardrailCheckInput`. */
function checksInput(checks: GuardrailCheckBody[] | null | undefined) {
  return checks?.map((c) => ({ id: c.id, name: c.name, isEnabled: c.is_enabled, parameters: c.parameters }));
}

/** Wire actions → GraphQL `GuardrailActionsInput`. */
function actionsInput(actions: GuardrailActionsBody | null | undefined) {
  if (!actions) return actions;
  return { deny: actions.deny, async: actions.async, onSuccess: actions.on_success, onFail: actions.on_fail };
}

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
    variables: ({ body }) => ({
      input: { name: body.name, checks: checksInput(body.checks), actions: actionsInput(body.actions), workspaceId: body.workspace_id },
    }),
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
    variables: ({ params, body }) => ({
      id: params.guardrailId,
      input: { name: body.name, checks: checksInput(body.checks), actions: actionsInput(body.actions) },
    }),
  },
  {
    method: 'DELETE',
    path: '/v1/guardrails/:guardrailId',
    operation: 'RestDeleteGuardrail',
    variables: ({ params }) => ({ id: params.guardrailId }),
    result: () => ({}),
  },
];
