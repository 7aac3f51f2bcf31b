import {
  createIntegrationBody,
  createProviderBody,
  deleteIntegrationModelsQuery,
  listIntegrationsQuery,
  listProvidersQuery,
  providerQuery,
  updateIntegrationBody,
  updateIntegrationModelsBody,
  updateIntegrationWorkspacesBody,
  updateProviderBody,
} from '../bodies/integrations.js';
import { graphqlInput, integrationsContract, providersContract } from '../../schema/contracts.js';
import { listBody, type RouteRow } from '../route.js';

type Wire = Record<string, any>;

/** The document's types for these keys are not nullable: a value not set is left out. */
const withoutNulls = (object: Wire): Wire => Object.fromEntries(Object.entries(object).filter(([, value]) => value !== null));

/** An integration as Portkey's IntegrationList item: `description` is a string there ("" when none). */
const integrationSummary = (integration: Wire): Wire => ({ ...integration, description: integration.description ?? '', object: 'integration' });

/** Limits as Portkey's UsageLimits and RateLimits: `alert_threshold` left out when none. */
const accessWire = ({ usage_limits, ...access }: Wire): Wire => ({
  ...access,
  usage_limits: usage_limits?.map(({ alert_threshold, ...limit }: Wire) => ({ ...limit, ...withoutNulls({ alert_threshold }) })) ?? null,
});

/**
 * An integration as Portkey's IntegrationDetailResponse (README says why `default_model` is there
 * too): no key, no global access: those keys are left out.
 */
const integrationDetail = ({ masked_key, configurations, global_workspace_access_settings: global, ...integration }: Wire): Wire => ({
  ...integrationSummary(integration),
  ...withoutNulls({ masked_key, global_workspace_access_settings: global && accessWire(global) }),
  configurations: withoutNulls(configurations),
});

/** A model as Portkey's IntegrationModel: `pricing_config` left out when no price is known. */
const modelWire = (model: Wire): Wire => (model.pricing_config === null ? (({ pricing_config, ...rest }) => rest)(model) : model);

/**
 * A provider as Portkey's Providers (README says why `id`, `workspace_id` and the guardrail lists are
 * there too); its integration is `integration_id`, which `GET /v1/integrations/{slug}` also takes.
 */
const providerWire = (provider: Wire): Wire => ({ ...provider, object: 'provider' });

/** Integrations (organisation level), their workspace access, and providers (virtual keys). */
export const integrationsRoutes: RouteRow[] = [
  {
    method: 'GET',
    path: '/v1/integrations',
    operation: 'RestListIntegrations',
    query: listIntegrationsQuery,
    variables: ({ query }) => ({ workspaceId: query.workspace_id, type: query.type, currentPage: query.current_page, pageSize: query.page_size }),
    result: (data) => listBody(data.integrations, integrationSummary),
  },
  {
    method: 'POST',
    path: '/v1/integrations',
    operation: 'RestCreateIntegration',
    body: createIntegrationBody,
    variables: ({ body }) => ({ input: graphqlInput(integrationsContract.createIntegrationContract, body) }),
  },
  {
    method: 'GET',
    path: '/v1/integrations/:slug',
    operation: 'RestGetIntegration',
    variables: ({ params }) => ({ slug: params.slug }),
    result: (data) => integrationDetail(data.integration),
  },
  {
    method: 'PUT',
    path: '/v1/integrations/:slug',
    operation: 'RestUpdateIntegration',
    body: updateIntegrationBody,
    variables: ({ params, body }) => ({ slug: params.slug, input: graphqlInput(integrationsContract.updateIntegrationContract, body) }),
    result: () => ({}),
  },
  { method: 'DELETE', path: '/v1/integrations/:slug', operation: 'RestDeleteIntegration', variables: ({ params }) => ({ slug: params.slug }), result: () => ({}) },
  {
    method: 'GET',
    path: '/v1/integrations/:slug/workspaces',
    operation: 'RestListIntegrationWorkspaces',
    variables: ({ params }) => ({ slug: params.slug }),
    result: (data) => ({ total: data.integrationWorkspaces.total, workspaces: data.integrationWorkspaces.workspaces.map(accessWire) }),
  },
  {
    method: 'PUT',
    path: '/v1/integrations/:slug/workspaces',
    operation: 'RestUpdateIntegrationWorkspaces',
    body: updateIntegrationWorkspacesBody,
    variables: ({ params, body }) => ({ slug: params.slug, input: graphqlInput(integrationsContract.updateIntegrationWorkspacesContract, body) }),
    result: () => ({}),
  },
  {
    method: 'GET',
    path: '/v1/integrations/:slug/models',
    operation: 'RestListIntegrationModels',
    variables: ({ params }) => ({ slug: params.slug }),
    result: (data) => ({ total: data.integrationModels.total, models: data.integrationModels.models.map(modelWire) }),
  },
  {
    method: 'PUT',
    path: '/v1/integrations/:slug/models',
    operation: 'RestUpdateIntegrationModels',
    body: updateIntegrationModelsBody,
    variables: ({ params, body }) => ({ slug: params.slug, input: graphqlInput(integrationsContract.updateIntegrationModelsContract, body) }),
    result: () => ({}),
  },
  {
    method: 'DELETE',
    path: '/v1/integrations/:slug/models',
    operation: 'RestDeleteIntegrationModels',
    query: deleteIntegrationModelsQuery,
    variables: ({ params, query }) => ({ slug: params.slug, slugs: query.slugs.join(',') }),
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
