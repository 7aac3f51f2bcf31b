import { describe, expect, it } from 'vitest';
import { parseContract } from '../../../src/lib/contract.js';
import { updateIntegrationWorkspacesContract } from '../../../src/modules/integrations/integrations.contract.js';
import { accessPatchOf, applyConfigurations, EMPTY_CONFIGURATIONS, mergeAccess, NO_ACCESS } from '../../../src/modules/integrations/limits.js';

/** Access settings as the contract parses them (its refusals: integrations-contract.test.ts). */
const parsed = (access: unknown) => parseContract(updateIntegrationWorkspacesContract, { global_workspace_access: access }).global_workspace_access!;

describe('access patches', () => {
  it('fill the defaults: a usage limit counts cost and never resets, a rate limit counts requests', () => {
    expect(accessPatchOf(parsed({ enabled: true, usage_limits: [{ credit_limit: 10 }], rate_limits: [{ unit: 'rpd', value: 100 }] }))).toEqual({
      enabled: true,
      usageLimit: { type: 'cost', creditLimit: 10, alertThreshold: null, periodicReset: null },
      rateLimit: { type: 'requests', unit: 'rpd', value: 100 },
    });
  });

  it('keep limits that were left out; null or [] removes them', () => {
    const current = { enabled: true, usageLimit: { type: 'cost' as const, creditLimit: 5, alertThreshold: null, periodicReset: null }, rateLimit: { type: 'requests' as const, unit: 'rpm' as const, value: 3 } };
    expect(mergeAccess(current, accessPatchOf(parsed({ enabled: false })))).toEqual({ ...current, enabled: false });
    expect(mergeAccess(current, accessPatchOf(parsed({ enabled: true, usage_limits: null, rate_limits: [] })))).toEqual({ enabled: true, usageLimit: null, rateLimit: null });
    expect(mergeAccess(NO_ACCESS, accessPatchOf(parsed({ enabled: true, rate_limits: [{ unit: 'rph', value: 9 }] })))).toEqual({
      enabled: true,
      usageLimit: null,
      rateLimit: { type: 'requests', unit: 'rph', value: 9 },
    });
  });
});

describe('applyConfigurations', () => {
  const base = { ...EMPTY_CONFIGURATIONS };

  it('merges key by key, null clearing one key or everything but the model settings', () => {
    const a = applyConfigurations(base, { base_url: 'https://api.example.com/v1', default_model: 'gpt-4o-mini', openai_organization: 'org-1', prices: { m: { input: 1, output: 2 } } });
    expect(a).toEqual({ baseUrl: 'https://api.example.com/v1', defaultModel: 'gpt-4o-mini', openaiOrganization: 'org-1', prices: { m: { input: 1, output: 2 } } });
    expect(applyConfigurations(a, { default_model: null })).toEqual({ ...a, defaultModel: null });
    expect(applyConfigurations(a, { custom_host: 'http://127.0.0.1:9/v1' })).toEqual({ ...a, baseUrl: 'http://127.0.0.1:9/v1' });
    expect(applyConfigurations(a, undefined)).toBe(a);
    const models = { allowAllModels: false, models: [] };
    expect(applyConfigurations({ ...a, models }, null)).toEqual({ ...EMPTY_CONFIGURATIONS, models });
  });
});
