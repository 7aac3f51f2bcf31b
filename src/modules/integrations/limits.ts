// Workspace-access settings (enabled, at most one usage limit, at most one rate limit) and an
// integration's configurations: their stored shapes and the validation of caller input into them.
// Pure: no ORM, no GraphQL. Errors name the offending input by its wire path (`workspaces[1].rate_limits`).
import { BadRequestError, missingParameter } from '../../errors.js';
import { validateLimits } from '../usage/alerts.js';
import { priceOverridesSchema, type PriceOverrides } from '../usage/prices.js';
import { isPeriodicReset, type PeriodicReset } from '../usage/usage-periods.js';

export const USAGE_LIMIT_TYPES = ['cost', 'tokens'] as const;
export type UsageLimitType = (typeof USAGE_LIMIT_TYPES)[number];
export const RATE_LIMIT_TYPES = ['requests'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];
export const RATE_LIMIT_UNITS = ['rpm', 'rph', 'rpd'] as const;
export type RateLimitUnit = (typeof RATE_LIMIT_UNITS)[number];

/** Largest rate-limit value: far above any real limit, and safely inside a 32-bit GraphQL Int. */
export const MAX_RATE_LIMIT_VALUE = 1_000_000_000;

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

export interface UsageLimitInput {
  type?: string | null;
  creditLimit?: number | null;
  alertThreshold?: number | null;
  periodicReset?: string | null;
}

export interface RateLimitInput {
  type?: string | null;
  unit?: string | null;
  value?: number | null;
}

/** Access settings as a caller sends them; omitted limits keep the current ones. */
export interface AccessSettingsInput {
  enabled?: boolean | null;
  usageLimits?: UsageLimitInput[] | null;
  rateLimits?: RateLimitInput[] | null;
}

/** The reason part of a message, shared with the REST body schemas so both front doors say the same. */
export const expectedOneOf = (values: readonly string[]): string => `expected one of ${values.map((v) => `'${v}'`).join(', ')}.`;
export const EXPECTED_RATE_VALUE = `expected an integer from 1 to ${MAX_RATE_LIMIT_VALUE}.`;

const invalid = (param: string, message: string): BadRequestError => new BadRequestError(message, { param, code: 'invalid_value' });

function oneOf<T extends string>(values: readonly T[], value: unknown, param: string): T {
  if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as T;
  throw invalid(param, `Invalid value for '${param}': ${expectedOneOf(values)}`);
}

/**
 * `usage_limits` as sent: undefined (omitted) stays undefined; null or [] means no limit; more than
 * one item is refused.
 */
export function parseUsageLimits(list: UsageLimitInput[] | null | undefined, param: string): UsageLimit | null | undefined {
  if (list === undefined) return undefined;
  if (list === null || list.length === 0) return null;
  if (list.length > 1) throw invalid(param, `Invalid value for '${param}': at most one usage limit is allowed, got ${list.length}.`);
  const item = list[0];
  const at = `${param}[0]`;
  const type = item.type == null ? 'cost' : oneOf(USAGE_LIMIT_TYPES, item.type, `${at}.type`);
  if (item.creditLimit == null) throw missingParameter(`${at}.credit_limit`);
  const alertThreshold = item.alertThreshold ?? null;
  const issue = validateLimits({ creditLimit: item.creditLimit, alertThreshold })[0];
  if (issue) throw invalid(`${at}.${issue.param}`, `Invalid value for '${at}.${issue.param}': ${issue.message}`);
  const periodicReset = item.periodicReset ?? null;
  if (!isPeriodicReset(periodicReset)) {
    throw invalid(`${at}.periodic_reset`, `Invalid value for '${at}.periodic_reset': expected one of 'monthly', 'weekly' or null.`);
  }
  return { type, creditLimit: item.creditLimit, alertThreshold, periodicReset };
}

/** `rate_limits` as sent, with the same rules as `parseUsageLimits`. Only `requests` limits exist. */
export function parseRateLimits(list: RateLimitInput[] | null | undefined, param: string): RateLimit | null | undefined {
  if (list === undefined) return undefined;
  if (list === null || list.length === 0) return null;
  if (list.length > 1) throw invalid(param, `Invalid value for '${param}': at most one rate limit is allowed, got ${list.length}.`);
  const item = list[0];
  const at = `${param}[0]`;
  const type = item.type == null ? 'requests' : oneOf(RATE_LIMIT_TYPES, item.type, `${at}.type`);
  if (item.unit == null) throw missingParameter(`${at}.unit`);
  const unit = oneOf(RATE_LIMIT_UNITS, item.unit, `${at}.unit`);
  if (item.value == null) throw missingParameter(`${at}.value`);
  if (!Number.isInteger(item.value) || item.value < 1 || item.value > MAX_RATE_LIMIT_VALUE) {
    throw invalid(`${at}.value`, `Invalid value for '${at}.value': ${EXPECTED_RATE_VALUE}`);
  }
  return { type, unit, value: item.value };
}

/** Parsed access input: `undefined` limits mean "keep the current ones". */
export interface AccessPatch {
  enabled: boolean;
  usageLimit: UsageLimit | null | undefined;
  rateLimit: RateLimit | null | undefined;
}

/** Validates access input (`enabled` required; at most one limit of each kind). */
export function parseAccessInput(input: AccessSettingsInput, param: string): AccessPatch {
  const prefix = param ? `${param}.` : '';
  if (input.enabled == null) throw missingParameter(`${prefix}enabled`);
  return {
    enabled: input.enabled,
    usageLimit: parseUsageLimits(input.usageLimits, `${prefix}usage_limits`),
    rateLimit: parseRateLimits(input.rateLimits, `${prefix}rate_limits`),
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
}

export const EMPTY_CONFIGURATIONS: IntegrationConfigurations = Object.freeze({ baseUrl: null, defaultModel: null, prices: null });

export interface ConfigurationsInput {
  baseUrl?: string | null;
  defaultModel?: string | null;
  prices?: unknown;
}

const MAX_URL = 2048;
const MAX_MODEL = 256;

/**
 * Configurations from input over the current ones: each key sent replaces (null clears it), keys
 * not sent stay. Everything is validated here, when the integration is written, not first when a
 * request needs it.
 */
export function applyConfigurations(current: IntegrationConfigurations, input: ConfigurationsInput | null | undefined): IntegrationConfigurations {
  if (input === undefined) return current;
  if (input === null) return { ...EMPTY_CONFIGURATIONS };
  const next = { ...current };
  if (input.baseUrl !== undefined) next.baseUrl = input.baseUrl === null ? null : validateBaseUrl(input.baseUrl);
  if (input.defaultModel !== undefined) {
    const model = input.defaultModel;
    if (model !== null && (typeof model !== 'string' || !model.trim() || model.length > MAX_MODEL)) {
      throw invalid('configurations.default_model', `Invalid value for 'configurations.default_model': expected a non-empty string of at most ${MAX_MODEL} characters.`);
    }
    next.defaultModel = model === null ? null : model.trim();
  }
  if (input.prices !== undefined) next.prices = input.prices === null ? null : validatePrices(input.prices);
  return next;
}

function validateBaseUrl(value: string): string {
  const param = 'configurations.base_url';
  let url: URL | null = null;
  try {
    url = typeof value === 'string' && value.length <= MAX_URL ? new URL(value) : null;
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw invalid(param, `Invalid value for '${param}': expected an http:// or https:// URL.`);
  }
  if (url.username || url.password) {
    // A credential in the URL would be returned unmasked: it belongs in `key`.
    throw invalid(param, `Invalid value for '${param}': a URL must not contain credentials; send the secret as 'key'.`);
  }
  return value.replace(/\/+$/, '');
}

function validatePrices(value: unknown): PriceOverrides {
  const parsed = priceOverridesSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = ['configurations', 'prices', ...issue.path].map((part) => (typeof part === 'number' ? `[${part}]` : part));
  const param = path.join('.').replace(/\.\[/g, '[');
  if (issue.code === 'unrecognized_keys') {
    return throwInvalid(`${param}.${issue.keys[0]}`, `Unrecognized price field '${issue.keys[0]}' in '${param}': a price has only 'input' and 'output'.`);
  }
  return throwInvalid(param, `Invalid value for '${param}': ${issue.message}. Prices are {input, output} in US dollars per million tokens.`);
}

function throwInvalid(param: string, message: string): never {
  throw invalid(param, message);
}
