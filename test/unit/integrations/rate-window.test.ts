import { describe, expect, it } from 'vitest';
import type { ResolvedProvider } from '../../../src/modules/integrations/provider-resolution.js';
import { rateLimitHeaders, rateLimitKey, rateWindow } from '../../../src/modules/integrations/rate-limiter.js';
import { workspaceAccessLimitSpec } from '../../../src/modules/integrations/usage-limits.js';

describe('rateWindow', () => {
  const at = (iso: string) => new Date(iso);
  it('aligns minutes, hours and days to the UTC clock', () => {
    expect(rateWindow('rpm', at('2026-11-22T10:15:42.123Z'))).toEqual({ start: Date.parse('2026-11-22T10:15:00Z'), end: Date.parse('2026-11-22T10:16:00Z') });
    expect(rateWindow('rph', at('2026-11-22T10:15:42.123Z'))).toEqual({ start: Date.parse('2026-11-22T10:00:00Z'), end: Date.parse('2026-11-22T11:00:00Z') });
    expect(rateWindow('rpd', at('2026-11-22T23:59:59.999Z'))).toEqual({ start: Date.parse('2026-11-22T00:00:00Z'), end: Date.parse('2026-11-23T00:00:00Z') });
  });
  it('starts a window exactly on its boundary', () => {
    expect(rateWindow('rpm', at('2026-11-22T10:16:00.000Z')).start).toBe(Date.parse('2026-11-22T10:16:00Z'));
    expect(rateWindow('rpm', at('2026-11-22T10:15:59.999Z')).start).toBe(Date.parse('2026-11-22T10:15:00Z'));
  });
  it('refuses an invalid date', () => {
    expect(() => rateWindow('rpm', new Date(NaN))).toThrow(RangeError);
  });
});

describe('rateLimitHeaders', () => {
  const resetAt = new Date('2026-11-22T10:16:00Z');
  it('gives limit, remaining and the reset as Unix seconds; retry-after only when refused', () => {
    expect(rateLimitHeaders({ allowed: true, limit: 50, remaining: 49, resetAt, retryAfterSeconds: 0 })).toEqual({
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '49',
      'x-ratelimit-reset': String(Date.parse('2026-11-22T10:16:00Z') / 1000),
    });
    expect(rateLimitHeaders({ allowed: false, limit: 50, remaining: 0, resetAt, retryAfterSeconds: 18 })).toEqual({
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1795342560',
      'retry-after': '18',
    });
  });
  it('keys counters by integration, workspace and unit', () => {
    expect(rateLimitKey({ integrationId: 'i', workspaceId: 'w', unit: 'rpd' })).toBe('i:w:rpd');
  });
});

describe('workspaceAccessLimitSpec', () => {
  const resolved = (usageLimit: ResolvedProvider['access']['usageLimit']): ResolvedProvider => ({
    provider: { id: 'p', slug: 'openai', workspaceId: 'ws-1', inputGuardrails: [], outputGuardrails: [] },
    integration: { id: 'int-1', slug: 'openai', aiProviderId: 'openai', baseUrl: null, apiKey: null, defaultModel: null, prices: null, openaiOrganization: null, models: null },
    access: { id: 'acc-1', enabled: true, usageLimit, rateLimit: null },
  });
  it('is null without a usage limit', () => {
    expect(workspaceAccessLimitSpec(resolved(null))).toBeNull();
  });
  it("keys the bucket by the access and the workspace", () => {
    expect(workspaceAccessLimitSpec(resolved({ type: 'tokens', creditLimit: 1000, alertThreshold: 900, periodicReset: 'monthly' }))).toEqual({
      ownerType: 'workspace_access',
      ownerId: 'acc-1',
      valueKey: 'workspace:ws-1',
      type: 'tokens',
      creditLimit: 1000,
      alertThreshold: 900,
      periodicReset: 'monthly',
      workspaceId: 'ws-1',
      label: "the workspace's access to integration 'openai'",
    });
  });
});
