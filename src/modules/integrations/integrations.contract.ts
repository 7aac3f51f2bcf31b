/**
 * The integrations' operation inputs, each one schema in wire terms: the REST row validates its
 * body with it, the GraphQL resolver parses its input with it, and GraphQL's input types are
 * derived from it (schema/contract-input.ts), so both front doors refuse alike. Rules over stored
 * data (slugs in use, workspaces, the provider's catalogue of models) and names (`validateName`,
 * shared with workspaces) stay with the service. Transforms keep the shape of the input: the REST
 * row hands the parsed body on, and the resolver parses it again.
 */
import { z, type ZodTypeAny } from 'zod';
import { refuseWhole } from '../../lib/contract.js';
import { validateLimits } from '../usage/alerts.js';
import { priceOverridesSchema } from '../usage/prices.js';
import { PERIODIC_RESETS } from '../usage/usage-periods.js';
import { AI_PROVIDER_IDS } from '../runs/models/providers.js';
import { MAX_RATE_LIMIT_VALUE, RATE_LIMIT_TYPES, RATE_LIMIT_UNITS, USAGE_LIMIT_TYPES } from './limit-kinds.js';
import { slugProblem } from '../tenancy/tenancy.contract.js';

const DESCRIPTION_MAX = 2000;
const KEY_MAX = 8192;
const URL_MAX = 2048;
const MODEL_MAX = 256;
const ORGANIZATION_MAX = 256;
const MODELS_MAX = 1000;

/** The reason part of a message: `expected one of 'a', 'b'.` */
export const expectedOneOf = (values: readonly string[]): string => `expected one of ${values.map((v) => `'${v}'`).join(', ')}.`;

/** One of `values`, refused as `Invalid value for '<param>': expected one of 'a', 'b'.` */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { errorMap: (issue, ctx) => (issue.code === 'invalid_enum_value' ? { message: expectedOneOf(values) } : { message: ctx.defaultError }) });

/** A problem worded `Invalid value for '<param>': <reason>` (the formatter's default for a plain custom issue). */
const invalid = (ctx: z.RefinementCtx, reason: string, path?: (string | number)[]) => ctx.addIssue({ code: z.ZodIssueCode.custom, message: reason, path });

/** A list of at most one `item`, its length checked before the item (`at most one usage limit is allowed, got 2.`). */
function atMostOne<T extends ZodTypeAny>(item: T, what: string) {
  return z
    .array(z.unknown())
    .superRefine((list, ctx) => {
      if (list.length > 1) invalid(ctx, `at most one ${what} is allowed, got ${list.length}.`);
    })
    .pipe(z.array(item));
}

// ---------------------------------------------------------------------------------------------
// Integration

const slug = z.string().superRefine((value, ctx) => {
  const problem = slugProblem(value, 'slug');
  if (problem) refuseWhole(ctx, 'invalid_value', problem);
});

const description = z.string().superRefine((value, ctx) => {
  if (value.length > DESCRIPTION_MAX) refuseWhole(ctx, 'invalid_value', `'description' must be at most ${DESCRIPTION_MAX} characters.`);
});

/** The provider's secret: non-empty; null (on update) removes it. */
const key = z.string().superRefine((value, ctx) => {
  if (!value.length || value.length > KEY_MAX) refuseWhole(ctx, 'invalid_value', `'key' must be a non-empty string of at most ${KEY_MAX} characters.`);
});

/** An http(s) endpoint without credentials (they would be shown unmasked), trailing slashes dropped. */
const endpoint = z
  .string()
  .superRefine((value, ctx) => {
    let url: URL | null = null;
    try {
      url = value.length <= URL_MAX ? new URL(value) : null;
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return invalid(ctx, 'expected an http:// or https:// URL.');
    if (url.username || url.password) invalid(ctx, "a URL must not contain credentials; send the secret as 'key'.");
  })
  .transform((value) => value.replace(/\/+$/, ''));

const modelName = z
  .string()
  .superRefine((value, ctx) => {
    if (!value.trim() || value.length > MODEL_MAX) invalid(ctx, `expected a non-empty string of at most ${MODEL_MAX} characters.`);
  })
  .transform((value) => value.trim());

/** Sent upstream as the `OpenAI-Organization` header: a header value, so visible ASCII only. */
const organization = z.string().superRefine((value, ctx) => {
  if (!/^[\x21-\x7e]+$/.test(value) || value.length > ORGANIZATION_MAX) {
    invalid(ctx, `expected an OpenAI organization id (1–${ORGANIZATION_MAX} visible ASCII characters, no spaces).`);
  }
});

const configurationsShape = z
  .object({
    custom_host: endpoint.nullish().describe('OpenAI-compatible base URL (http or https, up to /v1); null: the provider default.'),
    base_url: endpoint.nullish().describe('The same setting as customHost, by its older name.'),
    openai_organization: organization.nullish().describe('OpenAI organization id, sent upstream as the OpenAI-Organization header.'),
    default_model: modelName.nullish().describe('Model used when a request names none.'),
    prices: priceOverridesSchema.nullish().describe('Model → {input, output} in US dollars per million tokens, overriding the shipped prices.'),
  })
  .superRefine((value, ctx) => {
    if (value.custom_host !== undefined && value.base_url !== undefined) {
      refuseWhole(ctx, 'invalid_value', "Send 'configurations.custom_host' or 'configurations.base_url' (one setting, two names), not both.", ['base_url']);
    }
  });

const CAMEL_KEYS: Readonly<Record<string, string>> = { customHost: 'custom_host', baseUrl: 'base_url', openaiOrganization: 'openai_organization', defaultModel: 'default_model' };

/**
 * Configurations; keys sent replace, keys left out stay, null clears one. The portkey-ai SDK does
 * not convert nested keys, so a camelCase string key stands for its snake_case one when that is
 * absent (a camelCase key of another type is ignored, as any unknown key).
 */
const configurations = z.preprocess((value) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [camel, snake] of Object.entries(CAMEL_KEYS)) {
    const v = out[camel];
    delete out[camel];
    if (out[snake] === undefined && (typeof v === 'string' || v === null)) out[snake] = v;
  }
  return out;
}, configurationsShape);

/** The list's filters (paging is `pageOf`'s), for the REST query and GraphQL's arguments alike. */
export const listIntegrationsContract = z.object({
  workspace_id: z.string().nullish().describe('Only integrations this workspace (UUID or slug) has enabled access to.'),
  type: oneOf(['all', 'organisation', 'workspace']).nullish().describe('all (default), organisation or workspace (always empty: integrations are organisation level).'),
});

export const createIntegrationContract = z.object({
  name: z.string().describe('Display name (1–255 characters).'),
  slug: slug.nullish().describe('Unique slug (letters, digits, - and _); derived from the name when omitted.'),
  description: description.nullish().describe('Free text.'),
  ai_provider_id: oneOf(AI_PROVIDER_IDS).describe('Which kind of provider: ' + AI_PROVIDER_IDS.join(', ') + '.'),
  key: key.nullish().describe("The provider's secret key; stored encrypted, only ever returned masked."),
  configurations: configurations.nullish().describe('How the provider is reached.'),
  workspace_id: z
    .string()
    .superRefine((value, ctx) => {
      if (value) {
        refuseWhole(
          ctx,
          'invalid_value',
          "Integrations belong to the organisation: leave out 'workspace_id' and grant workspaces access with PUT /v1/integrations/{slug}/workspaces.",
        );
      }
    })
    .nullish()
    .describe('Not supported: integrations belong to the organisation (400 when set).'),
});

export const updateIntegrationContract = z.object({
  name: z.string().nullish().describe('Display name.'),
  description: description.nullish().describe('Free text; null removes it.'),
  key: key.nullish().describe('A new secret key; null removes it.'),
  configurations: configurations.nullish().describe('Merged key by key; null clears all.'),
});

// ---------------------------------------------------------------------------------------------
// Workspace access

const usageLimit = z
  .object({
    type: oneOf(USAGE_LIMIT_TYPES).nullish().describe('cost (default) or tokens.'),
    credit_limit: z.number().describe('The budget, ≥ 0.'),
    alert_threshold: z.number().nullish().describe('Usage that raises an alert; below credit_limit.'),
    periodic_reset: oneOf(PERIODIC_RESETS).nullish().describe('monthly or weekly; default: never.'),
  })
  .superRefine((value, ctx) => {
    const issue = validateLimits({ creditLimit: value.credit_limit, alertThreshold: value.alert_threshold ?? null })[0];
    if (issue) invalid(ctx, issue.message, [issue.param]);
  });

const rateLimit = z.object({
  type: oneOf(RATE_LIMIT_TYPES).nullish().describe('requests (the default and only kind).'),
  unit: oneOf(RATE_LIMIT_UNITS).describe('The window: rpm, rph or rpd.'),
  value: z
    .number()
    .int()
    .superRefine((value, ctx) => {
      if (value < 1 || value > MAX_RATE_LIMIT_VALUE) invalid(ctx, `expected an integer from 1 to ${MAX_RATE_LIMIT_VALUE}.`);
    })
    .describe(`Requests admitted per window (1–${MAX_RATE_LIMIT_VALUE}).`),
});

const accessSettings = {
  enabled: z.boolean().describe('Whether access is on: the workspace (or those the global access applies to) may use the integration.'),
  usage_limits: atMostOne(usageLimit, 'usage limit').nullish().describe('At most one; left out: kept, null or []: none.'),
  rate_limits: atMostOne(rateLimit, 'rate limit').nullish().describe('At most one; left out: kept, null or []: none.'),
};

const workspaceAccess = z.object({
  id: z.string().describe('Workspace UUID or slug.'),
  ...accessSettings,
  reset_usage: z.boolean().nullish().describe("True: zero the workspace's usage so far (active again)."),
});

export const updateIntegrationWorkspacesContract = z.object({
  workspaces: z.array(workspaceAccess).nullish().describe('Workspaces set one by one.'),
  global_workspace_access: z.object(accessSettings).nullish().describe('Default access for workspaces not listed and created later; null removes it.'),
  override_existing_workspace_access: z.boolean().nullish().describe('True: every existing workspace not listed gets the global access too.'),
  override_existing_workspaces_access: z.boolean().nullish().describe('The same as overrideExistingWorkspaceAccess, as the portkey-ai SDK spells it.'),
});

/** The GraphQL names of the workspace-access contract's typed nested inputs. */
const LIMIT_INPUTS = {
  usage_limits: ['WorkspaceUsageLimitInput', 'A usage limit.'],
  rate_limits: ['WorkspaceRateLimitInput', 'A rate limit.'],
} as const;
export const WORKSPACES_NESTED = {
  workspaces: ['WorkspaceAccessInput', "One workspace's access. Limits left out keep their current value; null or [] removes them.", LIMIT_INPUTS],
  global_workspace_access: ['GlobalWorkspaceAccessInput', 'Access for workspaces not listed, including workspaces created later.', LIMIT_INPUTS],
} as const;

// ---------------------------------------------------------------------------------------------
// Models

const price = z.object({
  price: z
    .number()
    .superRefine((value, ctx) => {
      if (!Number.isFinite(value) || value < 0) invalid(ctx, 'expected a price ≥ 0 (US cents per token).');
    })
    .describe('US cents per token.'),
});

const pricingConfig = z.object({
  type: oneOf(['static']).nullish().describe('static (the only kind).'),
  pay_as_you_go: z
    .object({
      request_token: price.describe('The price of a prompt token.'),
      response_token: price.describe('The price of a completion token.'),
    })
    .describe('Prices per token.'),
});

const modelSetting = z.object({
  slug: modelName.describe('The model name a request sends.'),
  enabled: z.boolean().describe('Whether the integration offers it.'),
  is_custom: z.boolean().nullish().describe("True for a model outside the provider's catalogue (adds it)."),
  is_finetune: z.boolean().nullish().describe('True for a fine-tuned model.'),
  base_model_slug: modelName.nullish().describe('The model a fine-tune was made from.'),
  configurations: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value != null) invalid(ctx, "per-model configurations are not supported: set the integration's configurations.custom_host.");
    })
    .describe('Not supported (400 when set).'),
  pricing_config: pricingConfig.nullish().describe('Its price, charged by usage and cost limits; null: back to the shipped price.'),
});

export const updateIntegrationModelsContract = z.object({
  models: z
    .array(z.unknown())
    .superRefine((list, ctx) => {
      if (list.length > MODELS_MAX) invalid(ctx, `at most ${MODELS_MAX} models per request, got ${list.length}.`);
    })
    .pipe(z.array(modelSetting))
    .describe('The models to set.'),
  allow_all_models: z.boolean().nullish().describe("Whether catalogue models not set one by one are offered (default true)."),
});

export const MODELS_NESTED = {
  models: [
    'IntegrationModelInput',
    'One model of an integration.',
    {
      pricing_config: [
        'ModelPricingConfigInput',
        'A static price.',
        {
          pay_as_you_go: [
            'PayAsYouGoPricingInput',
            'Prices per token.',
            { request_token: ['TokenPriceInput', 'A price per token.'], response_token: ['TokenPriceInput', 'A price per token.'] },
          ],
        },
      ],
    },
  ],
} as const;

export const deleteIntegrationModelsQuery = z.object({
  slugs: z
    .string()
    .superRefine((value, ctx) => {
      // Whole, so the query string (REST) and the argument (GraphQL) are refused in the same words.
      if (!value.split(',').some((s) => s.trim())) refuseWhole(ctx, 'invalid_value', "Invalid value for 'slugs': expected a comma-separated list of model slugs.");
    })
    .transform((value) => [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))])
    .describe('Comma-separated model slugs.'),
});

export type CreateIntegrationInput = z.output<typeof createIntegrationContract>;
export type UpdateIntegrationInput = z.output<typeof updateIntegrationContract>;
export type ConfigurationsInput = NonNullable<CreateIntegrationInput['configurations']>;
export type UpdateIntegrationWorkspacesInput = z.output<typeof updateIntegrationWorkspacesContract>;
export type AccessSettingsInput = NonNullable<UpdateIntegrationWorkspacesInput['global_workspace_access']>;
export type UpdateIntegrationModelsInput = z.output<typeof updateIntegrationModelsContract>;
