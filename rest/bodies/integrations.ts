import { z } from 'zod';
import { integrationsContract, pageQuery, providersContract } from '../../schema/contracts.js';

// Bodies and query strings of the integrations and providers routes, in wire terms: the
// operations' contracts (src/modules/integrations/*.contract.ts), as the resolvers parse them.

export const createIntegrationBody = integrationsContract.createIntegrationContract;
export const updateIntegrationBody = integrationsContract.updateIntegrationContract;
export const updateIntegrationWorkspacesBody = integrationsContract.updateIntegrationWorkspacesContract;
export const updateIntegrationModelsBody = integrationsContract.updateIntegrationModelsContract;
export const deleteIntegrationModelsQuery = integrationsContract.deleteIntegrationModelsQuery;

export const listIntegrationsQuery = integrationsContract.listIntegrationsContract.extend(pageQuery);

// Limits live on the workspace's access to the integration, not on one provider.
const noProviderLimits = z.unknown().refine((value) => value == null, {
  message: 'limits are set per workspace access: use PUT /v1/integrations/{slug}/workspaces.',
});

/** The operations' contracts (src/modules/integrations/providers.contract.ts) plus the REST-only refusal of limits. */
export const createProviderBody = providersContract.createProviderContract.extend({ usage_limits: noProviderLimits, rate_limits: noProviderLimits });

/** `workspace_id` picks the provider (a GraphQL argument beside the input). */
export const updateProviderBody = providersContract.updateProviderContract.extend({
  workspace_id: z.string().nullish(),
  usage_limits: noProviderLimits,
  rate_limits: noProviderLimits,
});

export const listProvidersQuery = z.object({
  workspace_id: z.string().optional(),
  ...pageQuery,
});

export const providerQuery = z.object({ workspace_id: z.string().optional() });
