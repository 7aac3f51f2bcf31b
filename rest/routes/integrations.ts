import {
  createIntegrationBody,
  createProviderBody,
  listIntegrationsQuery,
  listProvidersQuery,
  providerQuery,
  updateIntegrationBody,
  updateIntegrationWorkspacesBody,
  updateProviderBody,
  type UpdateIntegrationWorkspacesBody,
} from '../bodies/integrations.js';
import { graphqlInput, providersContract } from '../../schema/contracts.js';
import { listBody, type RouteRow } from '../route.js';

type Wire = Record<string, any>;

/**
 * `undefined` stays `undefined` (the field was left out: keep the current value), `null` stays
 * `null` (clear it); a present object is mapped.
 */
const mapOptional = <T, R>(value: T | null | undefined, map: (v: T) => R): R | null | undefined =>
  value === undefined ? undefined : value === null ? null : map(value);

const usageLimits = (list: Wire[] | null | undefined) =>
  mapOptional(list, (items) =>
    items.map((u) => ({ type: u.type, creditLimit: u.credit_limit, alertThreshold: u.alert_threshold, periodicReset: u.periodic_reset })),
  );

const rateLimits = (list: Wire[] | null | undefined) =>
  mapOptional(list, (items) => items.map((r) => ({ type: r.type, unit: r.unit, value: r.value })));

const configurations = (c: Wire | null | undefined) =>
  mapOptional(c, (v) => ({
    baseUrl: v.base_url !== undefined ? v.base_url : v.baseUrl,
    defaultModel: v.default_model !== undefined ? v.default_model : v.defaultModel,
    prices: v.prices,
  }));

function workspacesInput(body: UpdateIntegrationWorkspacesBody) {
  return {
    workspaces: mapOptional(body.workspaces, (items) =>
      items.map((w) => ({
        id: w.id,
        enabled: w.enabled,
        usageLimits: usageLimits(w.usage_limits),
        rateLimits: rateLimits(w.rate_limits),
        resetUsage: w.reset_usage,
      })),
    ),
    globalWorkspaceAccess: mapOptional(body.global_workspace_access, (g) => ({
      enabled: g.enabled,
      usageLimits: usageLimits(g.usage_limits),
      rateLimits: rateLimits(g.rate_limits),
    })),
    overrideExistingWorkspaceAccess: body.override_existing_workspace_access ?? body.override_existing_workspaces_access,
  };
}

/** The provider's integration, flattened into `integration_slug` and `ai_provider_id`. */
function providerWire({ integration, ...provider }: Wire): Wire {
  return {
    ...provider,
    integration_slug: integration.slug,
    ai_provider_id: integration.ai_provider_id,
  };
}

/** Integrations (organisation level), their workspace access, and providers (virtual keys). */
export const integrationsRoutes: RouteRow[] = [
  {
    method: 'GET',
    path: '/v1/integrations',
    operation: 'RestListIntegrations',
    query: listIntegrationsQuery,
    variables: ({ query }) => ({ workspaceId: query.workspace_id, type: query.type, currentPage: query.current_page, pageSize: query.page_size }),
    result: (data) => listBody(data.integrations),
  },
  {
    method: 'POST',
    path: '/v1/integrations',
    operation: 'RestCreateIntegration',
    body: createIntegrationBody,
    variables: ({ body }) => ({
      input: {
        name: body.name,
        slug: body.slug,
        description: body.description,
        aiProviderId: body.ai_provider_id,
        key: body.key,
        configurations: configurations(body.configurations),
        workspaceId: body.workspace_id,
      },
    }),
  },
  { method: 'GET', path: '/v1/integrations/:slug', operation: 'RestGetIntegration', variables: ({ params }) => ({ slug: params.slug }) },
  {
    method: 'PUT',
    path: '/v1/integrations/:slug',
    operation: 'RestUpdateIntegration',
    body: updateIntegrationBody,
    variables: ({ params, body }) => ({
      slug: params.slug,
      input: { name: body.name, description: body.description, key: body.key, configurations: configurations(body.configurations) },
    }),
    result: () => ({}),
  },
  { method: 'DELETE', path: '/v1/integrations/:slug', operation: 'RestDeleteIntegration', variables: ({ params }) => ({ slug: params.slug }), result: () => ({}) },
  {
    method: 'GET',
    path: '/v1/integrations/:slug/workspaces',
    operation: 'RestListIntegrationWorkspaces',
    variables: ({ params }) => ({ slug: params.slug }),
  },
  {
    method: 'PUT',
    path: '/v1/integrations/:slug/workspaces',
    operation: 'RestUpdateIntegrationWorkspaces',
    body: updateIntegrationWorkspacesBody,
    variables: ({ params, body }) => ({ slug: params.slug, input: workspacesInput(body) }),
    result: () => ({}),
  },
  {
    method: 'GET',
    path: '/v1/providers',
    operation: 'RestListProviders',
    query: listProvidersQuery,
    variables: ({ query }) => ({ workspaceId: query.workspace_id, currentPage: query.current_page, pageSize: query.page_size }),
    result: (data) => listBody(data.providers, providerWire),
  },
  {
    method: 'POST',
    path: '/v1/providers',
    operation: 'RestCreateProvider',
    body: createProviderBody,
    variables: ({ body }) => ({ input: graphqlInput(providersContract.createProviderContract, body) }),
  },
  {
    method: 'GET',
    path: '/v1/providers/:slug',
    operation: 'RestGetProvider',
    query: providerQuery,
    variables: ({ params, query }) => ({ slug: params.slug, workspaceId: query.workspace_id }),
    result: (data) => providerWire(data.provider),
  },
  {
    method: 'PUT',
    path: '/v1/providers/:slug',
    operation: 'RestUpdateProvider',
    body: updateProviderBody,
    variables: ({ params, body }) => ({
      slug: params.slug,
      workspaceId: body.workspace_id,
      input: graphqlInput(providersContract.updateProviderContract, body),
    }),
  },
  {
    method: 'DELETE',
    path: '/v1/providers/:slug',
    operation: 'RestDeleteProvider',
    query: providerQuery,
    variables: ({ params, query }) => ({ slug: params.slug, workspaceId: query.workspace_id }),
    result: () => ({}),
  },
];
