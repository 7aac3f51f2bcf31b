/**
 * The engine from a request's point of view: the limits that apply (matching policies plus extra
 * ones), check → allowed or refused naming the limit, record in tokens or dollars, reserve.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageLimitError } from '../../../src/errors.js';
import { checkRequest, limitsForRequest, recordRequest, reserveForRequest, type UsageRequestContext } from '../../../src/modules/policies/request-usage.js';
import { usageEngine, type LimitSpec } from '../../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let base: UsageRequestContext;

async function createPolicy(body: Record<string, unknown>): Promise<string> {
  const r = await t.request('POST', '/v1/policies/usage-limits', { body });
  expect(r.status, r.text).toBe(200);
  return r.body.id;
}

async function usageOf(policyId: string): Promise<Record<string, { current_usage: number; status: string }>> {
  return (await t.request('GET', `/v1/policies/usage-limits/${policyId}`)).body.value_key_usage_map;
}

beforeAll(async () => {
  t = await createTestApp();
  const viewer = await t.graphql('{ viewer { organisation { id } workspaces { id slug } } }');
  base = {
    organisationId: viewer.data.viewer.organisation.id,
    workspaceId: viewer.data.viewer.workspaces.find((w: { slug: string }) => w.slug === 'default').id,
    apiKeyId: 'key-1',
    virtualKey: 'local',
    model: 'gpt-4o-mini',
    metadata: { app: 'billing' },
  };
});
afterAll(() => t.close());

describe('the request-level usage API', () => {
  it('applies only matching policies, plus the extra limits first', async () => {
    const matching = await createPolicy({ name: 'Billing app', conditions: [{ key: 'metadata.app', value: 'billing' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 100 });
    await createPolicy({ name: 'Other app', conditions: [{ key: 'metadata.app', value: 'other' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 100 });
    const extra = { ownerType: 'workspace_access', ownerId: 'access-1', valueKey: 'workspace:x', type: 'tokens', creditLimit: 5, alertThreshold: null, periodicReset: null, workspaceId: null, label: 'the access' } satisfies LimitSpec;
    const limits = await limitsForRequest(t.app.runtime, t.app.runtime.fork(), { ...base, extraLimits: [extra] });
    expect(limits.map((l) => [l.ownerId, l.valueKey])).toEqual([
      ['access-1', 'workspace:x'],
      [matching, 'api_key:key-1'],
    ]);
    await t.request('DELETE', `/v1/policies/usage-limits/${matching}`);
  });

  it('check → allowed until recorded usage reaches the limit, then refused naming the policy; record counts dollars from the price', async () => {
    const tokens = await createPolicy({ name: 'Tokens', conditions: [{ key: 'api_key', value: 'key-2' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 100 });
    const dollars = await createPolicy({ name: 'Dollars', conditions: [{ key: 'api_key', value: 'key-2' }], group_by: [{ key: 'model' }], type: 'cost', credit_limit: 1 });
    const ctx = { ...base, apiKeyId: 'key-2' };
    const em = t.app.runtime.fork();
    expect(await checkRequest(t.app.runtime, em, ctx)).toMatchObject({ allowed: true });

    // gpt-4o-mini: $0.15 / $0.60 per million tokens.
    const amount = await recordRequest(t.app.runtime, em, ctx, { prompt_tokens: 60, completion_tokens: 40 });
    expect(amount).toEqual({ tokens: 100, cost: (60 * 0.15 + 40 * 0.6) / 1e6 });
    expect((await usageOf(tokens))['api_key:key-2']).toMatchObject({ current_usage: 100, status: 'exhausted' });
    expect((await usageOf(dollars))['model:gpt-4o-mini'].current_usage).toBeCloseTo(0.000033, 12);

    const refused = await checkRequest(t.app.runtime, em, ctx);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.refusedBy.ownerId).toBe(tokens);
    expect(refused.error).toBeInstanceOf(UsageLimitError);
    expect(refused.error.message).toContain(`usage-limit policy 'Tokens' (${tokens})`);

    // Price overrides (the integration's) change the dollars.
    const overridden = await createPolicy({ name: 'Overridden', conditions: [{ key: 'api_key', value: 'key-3' }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 10 });
    const priced = await recordRequest(t.app.runtime, em, { ...ctx, apiKeyId: 'key-3', prices: { 'gpt-4o-mini': { input: 2, output: 1 } } }, { prompt_tokens: 500_000, completion_tokens: 0 });
    expect(priced).toEqual({ tokens: 500_000, cost: 1 });
    expect((await usageOf(overridden))['api_key:key-3'].current_usage).toBe(1);
    // Without a cost limit nothing needs a price: an unpriced model records tokens only.
    expect(await recordRequest(t.app.runtime, em, { ...ctx, apiKeyId: 'key-5', model: 'no-such-model' }, { prompt_tokens: 1, completion_tokens: 1 })).toEqual({ tokens: 2, cost: 0 });
    await t.request('DELETE', `/v1/policies/usage-limits/${overridden}`);
    await t.request('DELETE', `/v1/policies/usage-limits/${tokens}`);
    await t.request('DELETE', `/v1/policies/usage-limits/${dollars}`);
  });

  it('reserve: null without limits (the estimate is never computed); a reservation that settles; a 412 when spent', async () => {
    const em = t.app.runtime.fork();
    let estimated = 0;
    const estimate = async () => {
      estimated++;
      return { prompt_tokens: 10, completion_tokens: 10 };
    };
    expect(await reserveForRequest(t.app.runtime, em, { ...base, apiKeyId: 'nobody' }, estimate)).toBeNull();
    expect(estimated).toBe(0);

    const policy = await createPolicy({ name: 'Small', conditions: [{ key: 'api_key', value: 'key-4' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 30 });
    const ctx = { ...base, apiKeyId: 'key-4' };
    const held = await reserveForRequest(t.app.runtime, em, ctx, estimate);
    expect(held).toMatchObject({ amount: { tokens: 20, cost: 0 } });
    expect(estimated).toBe(1);
    await usageEngine(t.app.runtime).settle(held!.reservation, { tokens: 35, cost: 0 });
    expect((await usageOf(policy))['api_key:key-4']).toMatchObject({ current_usage: 35, status: 'exhausted' });
    await expect(reserveForRequest(t.app.runtime, em, ctx, estimate)).rejects.toThrow(UsageLimitError);
  });
});
