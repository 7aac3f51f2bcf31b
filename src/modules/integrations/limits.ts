// Workspace-access settings (enabled, at most one usage limit, at most one rate limit) and an
// integration's configurations: their stored shapes, and parsed input (integrations.contract.ts
// validates it) applied to them. Pure: no ORM, no GraphQL.
import type { PriceOverrides } from '../usage/prices.js';
import type { IntegrationModels } from './models.js';
import type { PeriodicReset } from '../usage/usage-periods.js';
import type { AccessSettingsInput, ConfigurationsInput } from './integrations.contract.js';

export {
  USAGE_LIMIT_TYPES, RATE_LIMIT_TYPES, RATE_LIMIT_UNITS, MAX_RATE_LIMIT_VALUE,
  type UsageLimitType, type RateLimitType, type RateLimitUnit,
} from './limit-kinds.js';
import type { UsageLimitType, RateLimitType, RateLimitUnit } from './limit-kinds.js';

export interface UsageLimit {
  type: UsageLimitType;
  creditLimit: number;
  alertThreshold: number | null;
  periodicReset: PeriodicReset;
}

export interface RateLimit {
  type: RateLimitType;
  unit: RateLimitUnit;
  value: number;
}

/** What a workspace gets: access on or off, and its limits. */
export interface AccessSettings {
  enabled: boolean;
  usageLimit: UsageLimit | null;
  rateLimit: RateLimit | null;
}

export const NO_ACCESS: AccessSettings = Object.freeze({ enabled: false, usageLimit: null, rateLimit: null });

/** Parsed access input (see integrations.contract.ts): `undefined` limits mean "keep the current ones". */
export interface AccessPatch {
  enabled: boolean;
  usageLimit: UsageLimit | null | undefined;
  rateLimit: RateLimit | null | undefined;
}

/** `undefined` (left out) stays undefined: keep; null or [] means none. The contract allows at most one. */
const firstOf = <T, R>(list: T[] | null | undefined, map: (item: T) => R): R | null | undefined =>
  list === undefined ? undefined : list === null || list.length === 0 ? null : map(list[0]);

/** Access settings as the contract parsed them, with the defaults filled in. */
export function accessPatchOf(input: AccessSettingsInput): AccessPatch {
  return {
    enabled: input.enabled,
    usageLimit: firstOf(input.usage_limits, (u) => ({
      type: u.type ?? 'cost',
      creditLimit: u.credit_limit,
      alertThreshold: u.alert_threshold ?? null,
      periodicReset: u.periodic_reset ?? null,
    })),
    rateLimit: firstOf(input.rate_limits, (r) => ({ type: r.type ?? 'requests', unit: r.unit, value: r.value })),
  };
}

/** The settings after a patch: limits not sent stay as they are. */
export function mergeAccess(current: AccessSettings, patch: AccessPatch): AccessSettings {
  return {
    enabled: patch.enabled,
    usageLimit: patch.usageLimit === undefined ? current.usageLimit : patch.usageLimit,
    rateLimit: patch.rateLimit === undefined ? current.rateLimit : patch.rateLimit,
  };
}

export function sameSettings(a: AccessSettings, b: AccessSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface IntegrationConfigurations {
  /** OpenAI-compatible endpoint, up to and including `/v1`; null: the provider's default. */
  baseUrl: string | null;
  /** Model used when a request names none. */
  defaultModel: string | null;
  /** Per-model prices (USD per million tokens) overriding the shipped table. */
  prices: PriceOverrides | null;
  /** Sent upstream as the `OpenAI-Organization` header by the openai provider; absent in rows written before it existed. */
  openaiOrganization?: string | null;
  /**
   * Models set one by one and whether the rest of the catalogue is offered (`PUT .../models`);
   * absent: the whole catalogue, nothing custom. Not a wire configuration: `configurations: null` keeps it.
   */
  models?: IntegrationModels | null;
}

export const EMPTY_CONFIGURATIONS: IntegrationConfigurations = Object.freeze({ baseUrl: null, defaultModel: null, prices: null, openaiOrganization: null });

/**
 * Configurations from parsed input (integrations.contract.ts) over the current ones: each key sent
 * replaces (null clears it), keys not sent stay; null input clears them all.
 */
export function applyConfigurations(current: IntegrationConfigurations, input: ConfigurationsInput | null | undefined): IntegrationConfigurations {
  if (input === undefined) return current;
  if (input === null) return { ...EMPTY_CONFIGURATIONS, models: current.models ?? null };
  const next = { ...EMPTY_CONFIGURATIONS, ...current };
  const host = input.custom_host !== undefined ? input.custom_host : input.base_url;
  if (host !== undefined) next.baseUrl = host;
  if (input.default_model !== undefined) next.defaultModel = input.default_model;
  if (input.openai_organization !== undefined) next.openaiOrganization = input.openai_organization;
  if (input.prices !== undefined) next.prices = input.prices;
  return next;
}
