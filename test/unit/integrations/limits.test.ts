import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/errors.js';
import {
  applyConfigurations,
  EMPTY_CONFIGURATIONS,
  mergeAccess,
  NO_ACCESS,
  parseAccessInput,
  parseRateLimits,
  parseUsageLimits,
} from '../../../src/modules/integrations/limits.js';

/** The error a call throws, as the envelope fields a REST caller sees. */
function failure(fn: () => unknown): { message: string; param: string | null; code: string | null; status: number } {
  try {
    fn();
  } catch (error) {
    if (error instanceof BadRequestError) return { message: error.message, param: error.param, code: error.code, status: error.status };
    throw error;
  }
  throw new Error('expected a BadRequestError');
}

describe('parseUsageLimits', () => {
  it('leaves an omitted list undefined (keep), and reads null or [] as "no limit"', () => {
    expect(parseUsageLimits(undefined, 'usage_limits')).toBeUndefined();
    expect(parseUsageLimits(null, 'usage_limits')).toBeNull();
    expect(parseUsageLimits([], 'usage_limits')).toBeNull();
  });

  it('defaults type to cost and the rest to null', () => {
    expect(parseUsageLimits([{ creditLimit: 10 }], 'u')).toEqual({ type: 'cost', creditLimit: 10, alertThreshold: null, periodicReset: null });
    expect(parseUsageLimits([{ type: 'tokens', creditLimit: 1000, alertThreshold: 800, periodicReset: 'weekly' }], 'u')).toEqual({
      type: 'tokens',
      creditLimit: 1000,
      alertThreshold: 800,
      periodicReset: 'weekly',
    });
  });

  it('refuses more than one item, naming the list', () => {
    expect(failure(() => parseUsageLimits([{ creditLimit: 1 }, { creditLimit: 2 }], 'workspaces[1].usage_limits'))).toEqual({
      message: "Invalid value for 'workspaces[1].usage_limits': at most one usage limit is allowed, got 2.",
      param: 'workspaces[1].usage_limits',
      code: 'invalid_value',
      status: 400,
    });
  });

  it('needs credit_limit ≥ 0 and alert_threshold below it', () => {
    expect(failure(() => parseUsageLimits([{}], 'usage_limits'))).toMatchObject({
      message: "Missing required parameter: 'usage_limits[0].credit_limit'.",
      param: 'usage_limits[0].credit_limit',
      code: 'missing_required_parameter',
    });
    expect(failure(() => parseUsageLimits([{ creditLimit: -1 }], 'usage_limits'))).toMatchObject({
      message: "Invalid value for 'usage_limits[0].credit_limit': credit_limit must be a number greater than or equal to 0.",
      param: 'usage_limits[0].credit_limit',
    });
    expect(failure(() => parseUsageLimits([{ creditLimit: 10, alertThreshold: 10 }], 'usage_limits'))).toMatchObject({
      message: "Invalid value for 'usage_limits[0].alert_threshold': alert_threshold must be less than credit_limit.",
      param: 'usage_limits[0].alert_threshold',
    });
  });

  it('refuses unknown types and resets', () => {
    expect(failure(() => parseUsageLimits([{ creditLimit: 1, type: 'requests' }], 'u')).message).toBe("Invalid value for 'u[0].type': expected one of 'cost', 'tokens'.");
    expect(failure(() => parseUsageLimits([{ creditLimit: 1, periodicReset: 'daily' }], 'u')).message).toBe(
      "Invalid value for 'u[0].periodic_reset': expected one of 'monthly', 'weekly' or null.",
    );
  });
});

describe('parseRateLimits', () => {
  it('reads one requests limit, type defaulting to requests', () => {
    expect(parseRateLimits([{ unit: 'rpd', value: 100 }], 'rate_limits')).toEqual({ type: 'requests', unit: 'rpd', value: 100 });
    expect(parseRateLimits(undefined, 'rate_limits')).toBeUndefined();
    expect(parseRateLimits([], 'rate_limits')).toBeNull();
  });

  it.each([
    [[{ unit: 'rpm', value: 1 }, { unit: 'rph', value: 1 }], 'r', "Invalid value for 'r': at most one rate limit is allowed, got 2."],
    [[{ unit: 'rps', value: 1 }], 'r[0].unit', "Invalid value for 'r[0].unit': expected one of 'rpm', 'rph', 'rpd'."],
    [[{ unit: 'rpm', value: 0 }], 'r[0].value', "Invalid value for 'r[0].value': expected an integer from 1 to 1000000000."],
    [[{ unit: 'rpm', value: 1.5 }], 'r[0].value', "Invalid value for 'r[0].value': expected an integer from 1 to 1000000000."],
    [[{ unit: 'rpm', value: 1, type: 'tokens' }], 'r[0].type', "Invalid value for 'r[0].type': expected one of 'requests'."],
    [[{ value: 1 }], 'r[0].unit', "Missing required parameter: 'r[0].unit'."],
    [[{ unit: 'rpm' }], 'r[0].value', "Missing required parameter: 'r[0].value'."],
  ])('refuses %j', (list, param, message) => {
    expect(failure(() => parseRateLimits(list, 'r'))).toMatchObject({ param, message });
  });
});

describe('access patches', () => {
  it('needs enabled, and keeps limits that were left out', () => {
    expect(failure(() => parseAccessInput({}, 'global_workspace_access'))).toMatchObject({
      message: "Missing required parameter: 'global_workspace_access.enabled'.",
      param: 'global_workspace_access.enabled',
    });
    const current = { enabled: true, usageLimit: { type: 'cost' as const, creditLimit: 5, alertThreshold: null, periodicReset: null }, rateLimit: { type: 'requests' as const, unit: 'rpm' as const, value: 3 } };
    expect(mergeAccess(current, parseAccessInput({ enabled: false }, 'w'))).toEqual({ ...current, enabled: false });
    expect(mergeAccess(current, parseAccessInput({ enabled: true, usageLimits: null, rateLimits: [] }, 'w'))).toEqual({ enabled: true, usageLimit: null, rateLimit: null });
    expect(mergeAccess(NO_ACCESS, parseAccessInput({ enabled: true, rateLimits: [{ unit: 'rph', value: 9 }] }, 'w'))).toEqual({
      enabled: true,
      usageLimit: null,
      rateLimit: { type: 'requests', unit: 'rph', value: 9 },
    });
  });
});

describe('applyConfigurations', () => {
  const base = { ...EMPTY_CONFIGURATIONS };

  it('merges key by key, null clearing one key or everything', () => {
    const a = applyConfigurations(base, { baseUrl: 'https://api.example.com/v1/', defaultModel: 'gpt-4o-mini', prices: { m: { input: 1, output: 2 } } });
    expect(a).toEqual({ baseUrl: 'https://api.example.com/v1', defaultModel: 'gpt-4o-mini', prices: { m: { input: 1, output: 2 } } });
    expect(applyConfigurations(a, { defaultModel: null })).toEqual({ ...a, defaultModel: null });
    expect(applyConfigurations(a, undefined)).toBe(a);
    expect(applyConfigurations(a, null)).toEqual(EMPTY_CONFIGURATIONS);
  });

  it.each([
    [{ baseUrl: 'ftp://x' }, 'configurations.base_url', "Invalid value for 'configurations.base_url': expected an http:// or https:// URL."],
    [{ baseUrl: 'not a url' }, 'configurations.base_url', "Invalid value for 'configurations.base_url': expected an http:// or https:// URL."],
    [
      { baseUrl: 'https://user:pw@x/v1' },
      'configurations.base_url',
      "Invalid value for 'configurations.base_url': a URL must not contain credentials; send the secret as 'key'.",
    ],
    [{ defaultModel: ' ' }, 'configurations.default_model', "Invalid value for 'configurations.default_model': expected a non-empty string of at most 256 characters."],
    [
      { prices: { 'gpt-x': { input: -1, output: 1 } } },
      'configurations.prices.gpt-x.input',
      "Invalid value for 'configurations.prices.gpt-x.input': Number must be greater than or equal to 0. Prices are {input, output} in US dollars per million tokens.",
    ],
    [
      { prices: { 'gpt-x': { input: 1, output: 1, cached: 1 } } },
      'configurations.prices.gpt-x.cached',
      "Unrecognized price field 'cached' in 'configurations.prices.gpt-x': a price has only 'input' and 'output'.",
    ],
    [
      { prices: 'cheap' },
      'configurations.prices',
      "Invalid value for 'configurations.prices': Expected object, received string. Prices are {input, output} in US dollars per million tokens.",
    ],
  ])('refuses %j', (input, param, message) => {
    expect(failure(() => applyConfigurations(base, input))).toEqual({ message, param, code: 'invalid_value', status: 400 });
  });
});
