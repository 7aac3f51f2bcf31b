// Which models an integration offers: its provider's catalogue (each offered unless set otherwise,
// or unless `allow_all_models` is off) and its custom models, with the price each is charged at.
// Pure: no ORM, no GraphQL. `GET /v1/integrations/{slug}/models` shows this list and
// `GET /v1/models` lists its enabled entries.
import { MODEL_PRICES, priceOf, type ModelPrice, type PriceOverrides } from '../usage/prices.js';
import type { AiProviderId } from '../runs/models/providers.js';

/** One model set one by one (`PUT /v1/integrations/{slug}/models`). */
export interface ModelSetting {
  slug: string;
  enabled: boolean;
  isCustom: boolean;
  isFinetune: boolean;
  baseModelSlug: string | null;
}

/** What an integration stores about its models; null in rows written before models could be set. */
export interface IntegrationModels {
  /** Whether catalogue models not set one by one are offered. */
  allowAllModels: boolean;
  models: ModelSetting[];
}

export const DEFAULT_MODELS: IntegrationModels = Object.freeze({ allowAllModels: true, models: [] });

/** The shipped price table's models, without the built-in `local` (read once: the table is fixed). */
const OPENAI_CATALOGUE = Object.keys(MODEL_PRICES).filter((m) => m !== 'local');

/** The models a provider offers out of the box. */
const CATALOGUES: Record<AiProviderId, readonly string[]> = { local: ['local'], openai: OPENAI_CATALOGUE };

export function catalogueOf(aiProviderId: AiProviderId): readonly string[] {
  return CATALOGUES[aiProviderId];
}

/**
 * Whether a request may use `model`: a model set one by one is offered when enabled; any other one
 * (catalogue or not) while `allow_all_models` is on. The data plane refuses the rest.
 */
export function isOffered(stored: IntegrationModels | null | undefined, model: string): boolean {
  const settings = stored ?? DEFAULT_MODELS;
  const setting = settings.models.find((m) => m.slug === model);
  return setting ? setting.enabled : settings.allowAllModels;
}

export interface OfferedModel extends ModelSetting {
  /** US dollars per million tokens; undefined when no price is known. */
  price: ModelPrice | undefined;
}

/**
 * Every model the integration names, catalogue first (in catalogue order), then its custom models:
 * those set one by one and those it only prices (`configurations.prices` names a model outside the
 * catalogue: that is how it adds one too).
 */
export function offeredModels(aiProviderId: AiProviderId, stored: IntegrationModels | null | undefined, prices: PriceOverrides | null | undefined): OfferedModel[] {
  const settings = stored ?? DEFAULT_MODELS;
  const catalogue = catalogueOf(aiProviderId);
  const bySlug = new Map(settings.models.map((m) => [m.slug, m]));
  const overrides = prices ?? undefined;
  const offered = (setting: ModelSetting): OfferedModel => ({ ...setting, price: priceOf(setting.slug, overrides) });
  const list = catalogue.map((slug) => offered(bySlug.get(slug) ?? { slug, enabled: settings.allowAllModels, isCustom: false, isFinetune: false, baseModelSlug: null }));
  const inCatalogue = new Set(catalogue);
  const custom = [...settings.models.map((m) => m.slug), ...Object.keys(prices ?? {})].filter((slug) => !inCatalogue.has(slug));
  for (const slug of new Set(custom)) list.push(offered(bySlug.get(slug) ?? { slug, enabled: true, isCustom: true, isFinetune: false, baseModelSlug: null }));
  return list;
}
