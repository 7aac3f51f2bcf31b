import type { Integration } from '../src/modules/integrations/integration.entity.js';
import * as integrations from '../src/modules/integrations/integrations.service.js';
import type { AccessSettings, IntegrationConfigurations, RateLimit, UsageLimit } from '../src/modules/integrations/limits.js';
import type { Provider } from '../src/modules/integrations/provider.entity.js';
import { MODEL_PROVIDERS, type AiProviderId } from '../src/modules/runs/models/providers.js';
import * as providers from '../src/modules/integrations/providers.service.js';
import type { WorkspaceAccess } from '../src/modules/integrations/workspace-access.entity.js';
import * as providersContract from '../src/modules/integrations/providers.contract.js';
import * as integrationsContract from '../src/modules/integrations/integrations.contract.js';
import * as integrationModels from '../src/modules/integrations/integration-models.service.js';
import type { OfferedModel } from '../src/modules/integrations/models.js';
import { centsPerToken, type ModelPrice } from '../src/modules/usage/prices.js';
import { parseContract } from '../src/lib/contract.js';
import { builder } from './builder.js';
import { contractInputType, parseInput } from './contract-input.js';

const AiProviderIdEnum = builder.enumType('AiProviderId', {
  description: 'Which kind of model provider an integration reaches.',
  values: Object.fromEntries(Object.entries(MODEL_PROVIDERS).map(([id, provider]) => [id, { description: provider.description }])) as Record<
    AiProviderId,
    { description: string }
  >,
});

const ResourceStatusValues = {
  active: { description: 'In use.' },
  archived: { description: 'Deleted: kept for history, no longer usable; its slug is free again.' },
} as const;

const IntegrationStatusEnum = builder.enumType('IntegrationStatus', { description: 'Deleting archives.', values: ResourceStatusValues });
const ProviderStatusEnum = builder.enumType('ProviderStatus', { description: 'Deleting archives.', values: ResourceStatusValues });

const WorkspaceUsageLimitTypeEnum = builder.enumType('WorkspaceUsageLimitType', {
  description: 'What a workspace usage limit counts.',
  values: { cost: { description: 'US dollars, from the model price.' }, tokens: { description: 'Prompt plus completion tokens.' } } as const,
});

const WorkspaceUsageLimitResetEnum = builder.enumType('WorkspaceUsageLimitReset', {
  description: 'When a workspace usage limit starts again from zero (null: never).',
  values: { monthly: { description: '00:00 UTC on the 1st.' }, weekly: { description: '00:00 UTC on Monday.' } } as const,
});

const RateLimitTypeEnum = builder.enumType('RateLimitType', {
  description: 'What a rate limit counts.',
  values: { requests: { description: 'Requests that reach the model.' } } as const,
});

const RateLimitUnitEnum = builder.enumType('RateLimitUnit', {
  description: 'The window of a rate limit: fixed windows aligned to the clock in UTC.',
  values: { rpm: { description: 'Per minute.' }, rph: { description: 'Per hour.' }, rpd: { description: 'Per day (UTC).' } } as const,
});

const UsageLimitRef = builder.objectRef<UsageLimit>('WorkspaceUsageLimit').implement({
  description: "A budget on a workspace's use of an integration; requests are refused (412) once it is used up.",
  fields: (t) => ({
    type: t.expose('type', { type: WorkspaceUsageLimitTypeEnum, description: 'Cost or tokens.' }),
    creditLimit: t.exposeFloat('creditLimit', { description: 'The budget (dollars or tokens).' }),
    alertThreshold: t.exposeFloat('alertThreshold', { nullable: true, description: 'Usage that raises an alert; below credit_limit.' }),
    periodicReset: t.expose('periodicReset', { type: WorkspaceUsageLimitResetEnum, nullable: true, description: 'When usage starts again from zero; null: never.' }),
  }),
});

const RateLimitRef = builder.objectRef<RateLimit>('WorkspaceRateLimit').implement({
  description: "A request rate limit on a workspace's use of an integration (429 above it).",
  fields: (t) => ({
    type: t.expose('type', { type: RateLimitTypeEnum, description: 'What is counted: requests.' }),
    unit: t.expose('unit', { type: RateLimitUnitEnum, description: 'The window.' }),
    value: t.exposeInt('value', { description: 'Requests admitted per window.' }),
  }),
});

const asList = <T,>(value: T | null | undefined): T[] | null => (value ? [value] : null);

const GlobalWorkspaceAccessRef = builder.objectRef<AccessSettings>('GlobalWorkspaceAccess').implement({
  description: 'The access of workspaces not configured one by one, including workspaces created later.',
  fields: (t) => ({
    enabled: t.exposeBoolean('enabled', { description: 'Whether those workspaces may use the integration.' }),
    usageLimits: t.field({ type: [UsageLimitRef], nullable: true, description: 'At most one usage limit; null: none.', resolve: (s) => asList(s.usageLimit) }),
    rateLimits: t.field({ type: [RateLimitRef], nullable: true, description: 'At most one rate limit; null: none.', resolve: (s) => asList(s.rateLimit) }),
  }),
});

const IntegrationConfigurationsRef = builder.objectRef<IntegrationConfigurations>('IntegrationConfigurations').implement({
  description: 'How the gateway reaches the provider.',
  fields: (t) => ({
    baseUrl: t.string({ nullable: true, description: 'OpenAI-compatible base URL (up to /v1); null: the provider default.', resolve: (c) => c.baseUrl ?? null }),
    defaultModel: t.string({ nullable: true, description: 'Model used when a request names none.', resolve: (c) => c.defaultModel ?? null }),
    prices: t.field({ type: 'JSON', nullable: true, description: 'Model → {input, output} in US dollars per million tokens, overriding the shipped prices.', resolve: (c) => c.prices ?? null }),
    openaiOrganization: t.string({
      nullable: true,
      description: 'OpenAI organization id, sent upstream as the OpenAI-Organization header by the openai provider.',
      resolve: (c) => c.openaiOrganization ?? null,
    }),
  }),
});

const TokenPriceRef = builder.objectRef<{ price: number }>('TokenPrice').implement({
  description: 'A price per token.',
  fields: (t) => ({ price: t.exposeFloat('price', { description: 'US cents per token.' }) }),
});

const PayAsYouGoPricingRef = builder.objectRef<ModelPrice>('PayAsYouGoPricing').implement({
  description: 'Prices per token, in US cents (the price table counts US dollars per million tokens: one cent per token is 10,000 of those).',
  fields: (t) => ({
    requestToken: t.field({ type: TokenPriceRef, description: 'A prompt token.', resolve: (p) => ({ price: centsPerToken(p.input) }) }),
    responseToken: t.field({ type: TokenPriceRef, description: 'A completion token.', resolve: (p) => ({ price: centsPerToken(p.output) }) }),
  }),
});

const ModelPricingConfigRef = builder.objectRef<ModelPrice>('ModelPricingConfig').implement({
  description: 'The price a model is charged at by usage and cost limits.',
  fields: (t) => ({
    type: t.string({ description: 'static (the only kind).', resolve: () => 'static' }),
    payAsYouGo: t.field({ type: PayAsYouGoPricingRef, description: 'Prices per token.', resolve: (p) => p }),
  }),
});

const IntegrationModelRef = builder.objectRef<OfferedModel>('IntegrationModel').implement({
  description: "A model an integration offers: from its provider's catalogue or custom.",
  fields: (t) => ({
    slug: t.exposeString('slug', { description: 'The model name a request sends.' }),
    name: t.exposeString('slug', { description: 'Display name (the slug).' }),
    enabled: t.exposeBoolean('enabled', { description: 'Whether the integration offers it (GET /v1/models lists it).' }),
    isCustom: t.exposeBoolean('isCustom', { description: "True for a model outside the provider's catalogue." }),
    isFinetune: t.exposeBoolean('isFinetune', { description: 'True for a fine-tuned model.' }),
    baseModelSlug: t.exposeString('baseModelSlug', { nullable: true, description: 'The model a fine-tune was made from.' }),
    pricingConfig: t.field({
      type: ModelPricingConfigRef,
      nullable: true,
      description: "Its price (the integration's own, else the shipped one); null: unknown (cost limits refuse it).",
      resolve: (m) => m.price ?? null,
    }),
  }),
});

const IntegrationModelListRef = builder.objectRef<integrationModels.IntegrationModelList>('IntegrationModelList').implement({
  description: "An integration's models: the catalogue first, then custom models.",
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'How many.' }),
    models: t.field({ type: [IntegrationModelRef], description: 'The models.', resolve: (l) => l.models }),
  }),
});

const WorkspaceUsageStatusEnum = builder.enumType('WorkspaceUsageStatus', {
  description: 'Whether a workspace usage limit still admits requests.',
  values: { active: { description: 'Below the limit.' }, exhausted: { description: 'Used up: requests are refused (412) until the period ends or the usage is reset.' } } as const,
});

const WorkspaceUsageRef = builder.objectRef<integrations.AccessUsage>('WorkspaceUsage').implement({
  description: "A workspace's usage against its usage limit in the current period.",
  fields: (t) => ({
    currentUsage: t.exposeFloat('currentUsage', { description: 'Usage so far (US dollars or tokens, as the limit counts).' }),
    status: t.expose('status', { type: WorkspaceUsageStatusEnum, description: 'Active or exhausted.' }),
    periodKey: t.exposeString('periodKey', { description: 'The period: 2026-11 (monthly), 2026-W48 (weekly) or all (never resets).' }),
    nextResetAt: t.expose('nextResetAt', { type: 'DateTime', nullable: true, description: 'When the next period starts and usage starts again from zero; null: the limit never resets.' }),
  }),
});

export const WorkspaceAccessRef = builder.objectRef<WorkspaceAccess>('WorkspaceAccess').implement({
  description: "A workspace's access to an integration.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID of the access (usage buckets and rate counters are keyed by it).' }),
    workspaceId: t.exposeID('workspaceId', { description: 'The workspace.' }),
    integrationId: t.exposeID('integrationId', { description: 'The integration.' }),
    enabled: t.exposeBoolean('enabled', { description: "Whether the workspace's providers for this integration work (403 integration_disabled otherwise)." }),
    usageLimits: t.field({ type: [UsageLimitRef], nullable: true, description: 'At most one usage limit; null: none.', resolve: (a) => asList(a.usageLimit) }),
    rateLimits: t.field({ type: [RateLimitRef], nullable: true, description: 'At most one rate limit; null: none.', resolve: (a) => asList(a.rateLimit) }),
    usage: t.loadable({
      type: WorkspaceUsageRef,
      nullable: true,
      description: 'Usage against the usage limit in the current period; null without a usage limit.',
      load: (rows: WorkspaceAccess[], ctx) => integrations.accessUsage(ctx.runtime, rows),
      resolve: (a) => a,
      loaderOptions: { cacheKeyFn: (row: WorkspaceAccess) => row.id },
    }),
    inheritsGlobal: t.exposeBoolean('inheritsGlobal', { description: "True while it follows the integration's global access (not set one by one)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

const IntegrationWorkspacesRef = builder
  .objectRef<{ total: number; workspaces: WorkspaceAccess[] }>('IntegrationWorkspaces')
  .implement({
    description: "Workspaces' access to one integration, in workspace creation order.",
    fields: (t) => ({
      total: t.exposeInt('total', { description: 'How many.' }),
      workspaces: t.field({ type: [WorkspaceAccessRef], description: 'One entry per workspace the caller can see.', resolve: (l) => l.workspaces }),
    }),
  });

export const IntegrationRef = builder.objectRef<Integration>('Integration').implement({
  description: "An organisation's credentials and settings for one model provider.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    slug: t.exposeString('slug', { description: 'Unique among active integrations of the organisation.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    description: t.exposeString('description', { nullable: true, description: 'Free text.' }),
    aiProviderId: t.expose('aiProviderId', { type: AiProviderIdEnum, description: 'Which kind of provider.' }),
    status: t.expose('status', { type: IntegrationStatusEnum, description: 'Active or archived.' }),
    organisationId: t.exposeID('organisationId', { description: 'The owning organisation.' }),
    maskedKey: t.exposeString('maskedKey', { nullable: true, description: 'The secret key, masked (last four characters); the key itself is never returned.' }),
    configurations: t.field({ type: IntegrationConfigurationsRef, description: 'How the provider is reached.', resolve: (i) => i.configurations ?? { baseUrl: null, defaultModel: null, prices: null } }),
    allowAllModels: t.boolean({ description: "Whether catalogue models not set one by one are offered.", resolve: (i) => i.configurations?.models?.allowAllModels ?? true }),
    models: t.field({ type: IntegrationModelListRef, description: 'The models it offers, with their prices.', resolve: (i) => integrationModels.modelsOf(i) }),
    globalWorkspaceAccess: t.field({
      type: GlobalWorkspaceAccessRef,
      nullable: true,
      description: 'Access of workspaces not configured one by one (and of new ones); null: none.',
      resolve: (i) => i.globalAccess ?? null,
    }),
    workspaces: t.loadable({
      type: IntegrationWorkspacesRef,
      description: "Workspaces' access to this integration (a workspace key sees its own workspace).",
      load: (ids: string[], ctx) => integrations.accessRowsByIntegrationIds(ctx, ids),
      resolve: (i) => i.id,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

const IntegrationListRef = builder.objectRef<{ total: number; data: Integration[] }>('IntegrationList').implement({
  description: 'A page of integrations, newest first.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'How many match, over all pages.' }),
    data: t.field({ type: [IntegrationRef], description: 'This page.', resolve: (l) => l.data }),
  }),
});

export const ProviderRef = builder.objectRef<Provider>('Provider').implement({
  description: "A provider: the virtual key a workspace's callers send (x-gateway-virtual-key) to use an integration.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    slug: t.exposeString('slug', { description: 'The virtual key; unique among active providers of the workspace.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    note: t.exposeString('note', { nullable: true, description: 'Free text.' }),
    status: t.expose('status', { type: ProviderStatusEnum, description: 'Active or archived.' }),
    workspaceId: t.exposeID('workspaceId', { description: 'The workspace.' }),
    integrationId: t.exposeID('integrationId', { description: 'The integration it uses.' }),
    integration: t.loadable({
      type: IntegrationRef,
      description: 'The integration it uses.',
      load: (ids: string[], ctx) => providers.integrationsByIds(ctx.em, ids),
      resolve: (p) => p.integrationId,
    }),
    inputGuardrails: t.stringList({ description: 'Guardrail ids or slugs checked on requests.', resolve: (p) => p.inputGuardrails ?? [] }),
    outputGuardrails: t.stringList({ description: "Guardrail ids or slugs checked on the model's answers.", resolve: (p) => p.outputGuardrails ?? [] }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

const ProviderListRef = builder.objectRef<{ total: number; data: Provider[] }>('ProviderList').implement({
  description: 'A page of providers, newest first.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'How many match, over all pages.' }),
    data: t.field({ type: [ProviderRef], description: 'This page.', resolve: (l) => l.data }),
  }),
});

const CONFIGURATIONS_NESTED = { configurations: ['IntegrationConfigurationsInput', 'Configurations to set; keys left out stay as they are, null clears one.'] } as const;
const CreateIntegrationInput = contractInputType('CreateIntegrationInput', 'A new integration (organisation level).', integrationsContract.createIntegrationContract, CONFIGURATIONS_NESTED);
const UpdateIntegrationInput = contractInputType(
  'UpdateIntegrationInput',
  'Changes to an integration; fields left out stay as they are.',
  integrationsContract.updateIntegrationContract,
  CONFIGURATIONS_NESTED,
);
const UpdateIntegrationWorkspacesInput = contractInputType(
  'UpdateIntegrationWorkspacesInput',
  'Changes to workspace access; all or nothing.',
  integrationsContract.updateIntegrationWorkspacesContract,
  integrationsContract.WORKSPACES_NESTED,
);
const UpdateIntegrationModelsInput = contractInputType(
  'UpdateIntegrationModelsInput',
  "Models of an integration set one by one; all or nothing.",
  integrationsContract.updateIntegrationModelsContract,
  integrationsContract.MODELS_NESTED,
);
const CreateProviderInput = contractInputType('CreateProviderInput', 'Another virtual key for an integration the workspace has access to.', providersContract.createProviderContract);
const UpdateProviderInput = contractInputType('UpdateProviderInput', 'Changes to a provider; fields left out stay as they are.', providersContract.updateProviderContract);

builder.queryFields((t) => ({
  integrations: t.field({
    type: IntegrationListRef,
    description: "The organisation's active integrations, newest first.",
    args: {
      workspaceId: t.arg.string({ description: 'Only integrations this workspace (UUID or slug) has enabled access to.' }),
      type: t.arg.string({ description: 'all (default), organisation or workspace (always empty: integrations are organisation level).' }),
      currentPage: t.arg.int({ description: 'Zero-based page.' }),
      pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100).' }),
    },
    resolve: (_root, args, ctx) => integrations.listIntegrations(ctx, args),
  }),
  integration: t.field({
    type: IntegrationRef,
    description: 'One active integration by slug or id.',
    args: { slug: t.arg.string({ required: true, description: 'Slug or UUID.' }) },
    resolve: (_root, args, ctx) => integrations.getIntegration(ctx, args.slug),
  }),
  integrationWorkspaces: t.field({
    type: IntegrationWorkspacesRef,
    description: "Workspaces' access to an integration (a workspace key sees its own workspace).",
    args: { slug: t.arg.string({ required: true, description: 'Integration slug or UUID.' }) },
    resolve: (_root, args, ctx) => integrations.listIntegrationWorkspaces(ctx, args.slug),
  }),
  integrationModels: t.field({
    type: IntegrationModelListRef,
    description: "An integration's models: its provider's catalogue and its custom models, with their prices.",
    args: { slug: t.arg.string({ required: true, description: 'Integration slug or UUID.' }) },
    resolve: (_root, args, ctx) => integrationModels.listIntegrationModels(ctx, args.slug),
  }),
  providers: t.field({
    type: ProviderListRef,
    description: 'Active providers (virtual keys), newest first.',
    args: {
      workspaceId: t.arg.string({ description: 'Only this workspace (UUID or slug); default: every workspace the caller can see.' }),
      currentPage: t.arg.int({ description: 'Zero-based page.' }),
      pageSize: t.arg.int({ description: 'Items per page, 0–1000 (default 100).' }),
    },
    resolve: (_root, args, ctx) => providers.listProviders(ctx, args),
  }),
  provider: t.field({
    type: ProviderRef,
    description: 'One active provider by slug (its virtual key).',
    args: {
      slug: t.arg.string({ required: true, description: 'The virtual key.' }),
      workspaceId: t.arg.string({ description: "Workspace UUID or slug; default: the caller's." }),
    },
    resolve: (_root, args, ctx) => providers.getProvider(ctx, args.slug, args.workspaceId),
  }),
}));

builder.mutationFields((t) => ({
  createIntegration: t.field({
    type: IntegrationRef,
    description: 'Creates an integration (organisation keys only). Every workspace gets its global access (none by default).',
    authScopes: { organisationKey: true },
    args: { input: t.arg({ type: CreateIntegrationInput, required: true, description: 'The integration.' }) },
    resolve: (_root, { input }, ctx) => integrations.createIntegration(ctx, parseInput(integrationsContract.createIntegrationContract, input)),
  }),
  updateIntegration: t.field({
    type: IntegrationRef,
    description: 'Changes an integration (organisation keys only).',
    authScopes: { organisationKey: true },
    args: {
      slug: t.arg.string({ required: true, description: 'Slug or UUID.' }),
      input: t.arg({ type: UpdateIntegrationInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, args, ctx) => integrations.updateIntegration(ctx, args.slug, parseInput(integrationsContract.updateIntegrationContract, args.input)),
  }),
  deleteIntegration: t.field({
    type: IntegrationRef,
    description: 'Archives an integration and its providers (organisation keys only).',
    authScopes: { organisationKey: true },
    args: { slug: t.arg.string({ required: true, description: 'Slug or UUID.' }) },
    resolve: (_root, args, ctx) => integrations.deleteIntegration(ctx, args.slug),
  }),
  updateIntegrationWorkspaces: t.field({
    type: IntegrationWorkspacesRef,
    description: 'Sets workspace access, limits and the global access, all or nothing (organisation keys only); returns the access afterwards.',
    authScopes: { organisationKey: true },
    args: {
      slug: t.arg.string({ required: true, description: 'Integration slug or UUID.' }),
      input: t.arg({ type: UpdateIntegrationWorkspacesInput, required: true, description: 'The changes.' }),
    },
    resolve: async (_root, args, ctx) => {
      await integrations.updateIntegrationWorkspaces(ctx, args.slug, parseInput(integrationsContract.updateIntegrationWorkspacesContract, args.input));
      return integrations.listIntegrationWorkspaces(ctx, args.slug);
    },
  }),
  updateIntegrationModels: t.field({
    type: IntegrationModelListRef,
    description: 'Sets models one by one (enabled, custom, price), all or nothing (organisation keys only); returns the models afterwards.',
    authScopes: { organisationKey: true },
    args: {
      slug: t.arg.string({ required: true, description: 'Integration slug or UUID.' }),
      input: t.arg({ type: UpdateIntegrationModelsInput, required: true, description: 'The changes.' }),
    },
    resolve: async (_root, args, ctx) =>
      integrationModels.modelsOf(await integrationModels.updateIntegrationModels(ctx, args.slug, parseInput(integrationsContract.updateIntegrationModelsContract, args.input))),
  }),
  deleteIntegrationModels: t.field({
    type: IntegrationModelListRef,
    description: 'Removes custom models with their prices, all or nothing (organisation keys only); returns the models afterwards.',
    authScopes: { organisationKey: true },
    args: {
      slug: t.arg.string({ required: true, description: 'Integration slug or UUID.' }),
      slugs: t.arg.string({ required: true, description: 'Comma-separated custom model slugs.' }),
    },
    resolve: async (_root, args, ctx) => {
      const { slugs } = parseContract(integrationsContract.deleteIntegrationModelsQuery, { slugs: args.slugs });
      return integrationModels.modelsOf(await integrationModels.deleteIntegrationModels(ctx, args.slug, slugs));
    },
  }),
  createProvider: t.field({
    type: ProviderRef,
    description: 'Creates another provider (virtual key) for an integration the workspace has access to.',
    args: { input: t.arg({ type: CreateProviderInput, required: true, description: 'The provider.' }) },
    resolve: (_root, { input }, ctx) => providers.createProvider(ctx, parseInput(providersContract.createProviderContract, input)),
  }),
  updateProvider: t.field({
    type: ProviderRef,
    description: "Changes a provider's name, note or guardrails.",
    args: {
      slug: t.arg.string({ required: true, description: 'The virtual key.' }),
      workspaceId: t.arg.string({ description: "Workspace UUID or slug; default: the caller's." }),
      input: t.arg({ type: UpdateProviderInput, required: true, description: 'The changes.' }),
    },
    resolve: (_root, args, ctx) => providers.updateProvider(ctx, args.slug, parseInput(providersContract.updateProviderContract, args.input), args.workspaceId),
  }),
  deleteProvider: t.field({
    type: ProviderRef,
    description: 'Archives a provider: its virtual key stops working and its slug is free again.',
    args: {
      slug: t.arg.string({ required: true, description: 'The virtual key.' }),
      workspaceId: t.arg.string({ description: "Workspace UUID or slug; default: the caller's." }),
    },
    resolve: (_root, args, ctx) => providers.deleteProvider(ctx, args.slug, args.workspaceId),
  }),
}));
