import { z } from 'zod';
import { AI_PROVIDER_IDS, pageQuery, providersContract } from '../../schema/contracts.js';

// Bodies and query strings of the integrations and providers routes, in wire terms. They check
// types (so GraphQL variable coercion never fails with a vaguer message); the rules (at most one
// limit, ranges, slugs, URLs, prices) are the service's, so both front doors answer alike.

const oneOf = <T extends [string, ...string[]]>(values: T) =>
  z.enum(values, { errorMap: (issue, ctx) => (issue.code === 'invalid_enum_value' ? { message: `expected one of ${values.map((v) => `'${v}'`).join(', ')}.` } : { message: ctx.defaultError }) });

/** Integers that fit a GraphQL Int; the service checks the real range. */
const int32 = z
  .number()
  .int()
  .refine((n) => Math.abs(n) <= 2_147_483_647, { message: 'expected an integer from 1 to 1000000000.' });

export const usageLimitItem = z.object({
  type: oneOf(['cost', 'tokens']).nullish(),
  credit_limit: z.number(),
  alert_threshold: z.number().nullish(),
  periodic_reset: oneOf(['monthly', 'weekly']).nullish(),
});

export const rateLimitItem = z.object({
  type: oneOf(['requests']).nullish(),
  unit: oneOf(['rpm', 'rph', 'rpd']),
  value: int32,
});

const accessSettings = {
  enabled: z.boolean(),
  usage_limits: z.array(usageLimitItem).nullish(),
  rate_limits: z.array(rateLimitItem).nullish(),
};

export const updateIntegrationWorkspacesBody = z.object({
  workspaces: z
    .array(z.object({ id: z.string(), ...accessSettings, reset_usage: z.boolean().nullish() }))
    .nullish(),
  global_workspace_access: z.object(accessSettings).nullish(),
  override_existing_workspace_access: z.boolean().nullish(),
  // The portkey-ai SDK's spelling.
  override_existing_workspaces_access: z.boolean().nullish(),
});

export type UpdateIntegrationWorkspacesBody = z.infer<typeof updateIntegrationWorkspacesBody>;

/** Nested keys are not converted by the portkey-ai SDK, so both spellings are accepted here. */
export const configurationsBody = z.object({
  base_url: z.string().nullish(),
  baseUrl: z.string().nullish(),
  default_model: z.string().nullish(),
  defaultModel: z.string().nullish(),
  prices: z.unknown(),
});

export const createIntegrationBody = z.object({
  name: z.string(),
  slug: z.string().nullish(),
  description: z.string().nullish(),
  ai_provider_id: oneOf(AI_PROVIDER_IDS),
  key: z.string().nullish(),
  configurations: configurationsBody.nullish(),
  workspace_id: z.string().nullish(),
});

export const updateIntegrationBody = z.object({
  name: z.string().nullish(),
  description: z.string().nullish(),
  key: z.string().nullish(),
  configurations: configurationsBody.nullish(),
});

export const listIntegrationsQuery = z.object({
  workspace_id: z.string().optional(),
  type: oneOf(['all', 'organisation', 'workspace']).optional(),
  ...pageQuery,
});

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
