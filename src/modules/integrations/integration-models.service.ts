/**
 * `GET|PUT|DELETE /v1/integrations/{slug}/models`: which models an integration offers, its custom
 * models and their prices. A price set here goes into the integration's price map, the one that
 * usage and cost limits charge (src/modules/usage/prices.ts), so a custom model is priced
 * without code.
 */
import type { ServiceContext } from '../../context.js';
import { BadRequestError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { dollarsPerMillion, type PriceOverrides } from '../usage/prices.js';
import type { Integration } from './integration.entity.js';
import type { UpdateIntegrationModelsInput } from './integrations.contract.js';
import { EMPTY_CONFIGURATIONS } from './limits.js';
import { findIntegration } from './lookup.js';
import { catalogueOf, DEFAULT_MODELS, offeredModels, type IntegrationModels, type ModelSetting, type OfferedModel } from './models.js';

export interface IntegrationModelList {
  total: number;
  models: OfferedModel[];
}

export function modelsOf(integration: Integration): IntegrationModelList {
  const models = offeredModels(integration.aiProviderId, integration.configurations?.models, integration.configurations?.prices);
  return { total: models.length, models };
}

/** Readable by every key of the organisation, as the integration itself. */
export async function listIntegrationModels(ctx: ServiceContext, slugOrId: string): Promise<IntegrationModelList> {
  return modelsOf(await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId));
}

const invalid = (param: string, message: string) => new BadRequestError(message, { param, code: 'invalid_value' });

/**
 * Sets models one by one (all or nothing): a catalogue model is enabled or not; a model outside
 * the catalogue needs `is_custom: true` (that adds it). `pricing_config` sets its price, null
 * removes the price (a catalogue model is charged its shipped price again); left out, it stays.
 */
export async function updateIntegrationModels(ctx: ServiceContext, slugOrId: string, input: UpdateIntegrationModelsInput): Promise<Integration> {
  ctx.scope.requireOrganisationKey();
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
  const catalogue = new Set(catalogueOf(integration.aiProviderId));
  const current = integration.configurations?.models ?? DEFAULT_MODELS;
  const settings = new Map(current.models.map((m) => [m.slug, m]));
  const prices: PriceOverrides = { ...(integration.configurations?.prices ?? {}) };
  // Models outside the catalogue that the integration already names (set one by one or priced).
  const known = new Set([...settings.keys(), ...Object.keys(prices)]);
  const seen = new Map<string, number>();
  for (const [i, item] of input.models.entries()) {
    const param = `models[${i}]`;
    const earlier = seen.get(item.slug);
    if (earlier !== undefined) throw invalid(`${param}.slug`, `Model '${item.slug}' is listed twice (also as models[${earlier}]).`);
    seen.set(item.slug, i);
    const inCatalogue = catalogue.has(item.slug);
    if (inCatalogue && item.is_custom) {
      throw invalid(`${param}.is_custom`, `Model '${item.slug}' is in the catalogue of provider '${integration.aiProviderId}': it cannot be a custom model.`);
    }
    if (!inCatalogue && !known.has(item.slug) && item.is_custom !== true) {
      throw invalid(`${param}.slug`, `Model '${item.slug}' is not in the catalogue of provider '${integration.aiProviderId}': send is_custom: true to add it as a custom model.`);
    }
    const before = settings.get(item.slug);
    const setting: ModelSetting = {
      slug: item.slug,
      enabled: item.enabled,
      isCustom: !inCatalogue,
      isFinetune: item.is_finetune ?? before?.isFinetune ?? false,
      baseModelSlug: item.base_model_slug !== undefined ? item.base_model_slug : (before?.baseModelSlug ?? null),
    };
    settings.set(item.slug, setting);
    if (item.pricing_config === null) delete prices[item.slug];
    else if (item.pricing_config) {
      const { request_token, response_token } = item.pricing_config.pay_as_you_go;
      prices[item.slug] = { input: dollarsPerMillion(request_token.price), output: dollarsPerMillion(response_token.price) };
    }
  }
  return save(ctx, integration, { allowAllModels: input.allow_all_models ?? current.allowAllModels, models: [...settings.values()] }, prices);
}

/** Removes custom models, their settings and prices (all or nothing); a catalogue model can only be disabled. */
export async function deleteIntegrationModels(ctx: ServiceContext, slugOrId: string, slugs: string[]): Promise<Integration> {
  ctx.scope.requireOrganisationKey();
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
  const custom = new Set(modelsOf(integration).models.filter((m) => m.isCustom).map((m) => m.slug));
  const missing = slugs.find((slug) => !custom.has(slug));
  if (missing !== undefined) {
    throw invalid('slugs', `'${missing}' is not a custom model of integration '${integration.slug}': only custom models can be deleted (disable a catalogue model with PUT).`);
  }
  const gone = new Set(slugs);
  const current = integration.configurations?.models ?? DEFAULT_MODELS;
  const prices = Object.fromEntries(Object.entries(integration.configurations?.prices ?? {}).filter(([slug]) => !gone.has(slug)));
  return save(ctx, integration, { ...current, models: current.models.filter((m) => !gone.has(m.slug)) }, prices);
}

/** Writes the model settings and the price map; the data plane's cached providers see them at once. */
async function save(ctx: ServiceContext, integration: Integration, models: IntegrationModels, prices: PriceOverrides): Promise<Integration> {
  integration.configurations = { ...EMPTY_CONFIGURATIONS, ...integration.configurations, models, prices: Object.keys(prices).length ? prices : null };
  integration.updatedAt = ctx.runtime.clock.now();
  await ctx.em.flush();
  configCache(ctx.runtime).invalidate('providers');
  return integration;
}
