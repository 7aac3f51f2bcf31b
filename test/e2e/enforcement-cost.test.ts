/**
 * Cost budgets on the data plane: dollars come from the integration's price overrides (else the
 * shipped table), a model without a price is refused naming it, the budget refuses once spent;
 * and a settlement that fails gives its reservation back at once.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageEngine } from '../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { allSettled, heldReservations, ok, policyUsage, runEnforcement, sdk, tokensPolicy } from '../helpers/enforcement.js';

describe('a cost policy', () => {
  let t: TestApp;
  let openai: OpenAI;
  beforeAll(async () => {
    t = await createTestApp();
    openai = sdk(`${await t.listen()}/v1`);
  });
  afterAll(() => t.close());

  it('refuses a model without a price (400 naming it), counts dollars from the integration’s prices, and refuses once spent (412)', async () => {
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', {
      name: 'Dollar budget',
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'workspace_id' }],
      type: 'cost',
      credit_limit: 0.5,
    });
    const assistant = await openai.beta.assistants.create({ model: 'local-priced' });
    const unpriced = await openai.beta.threads.createAndRun({ assistant_id: assistant.id }).catch((error: unknown) => error);
    expect(unpriced).toBeInstanceOf(OpenAI.APIError);
    expect((unpriced as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((unpriced as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'model_price_unknown', param: 'model' });
    expect((unpriced as InstanceType<typeof OpenAI.APIError>).message).toContain('local-priced');
    expect((unpriced as InstanceType<typeof OpenAI.APIError>).message).toContain(`usage-limit policy 'Dollar budget' (${policy.id})`);

    // USD per million tokens: 1,000 in, 2,000 out → a tenth of a cent per prompt token.
    await ok(t, 'PUT', '/v1/integrations/local', { configurations: { prices: { 'local-priced': { input: 1000, output: 2000 } } } });
    const runs: Array<{ prompt_tokens: number; completion_tokens: number }> = [];
    let refused: InstanceType<typeof OpenAI.APIError> | null = null;
    for (let i = 0; i < 40 && !refused; i++) {
      try {
        const run = await openai.beta.threads.createAndRunPoll(
          { assistant_id: assistant.id, max_completion_tokens: 256, thread: { messages: [{ role: 'user', content: `spend some dollars, round ${i}` }] } },
          { pollIntervalMs: 10 },
        );
        expect(run.status).toBe('completed');
        runs.push(run.usage!);
        await allSettled(t);
      } catch (error) {
        if (!(error instanceof OpenAI.APIError)) throw error;
        refused = error;
      }
    }
    expect(refused?.status, refused?.message).toBe(412);
    const dollars = runs.reduce((sum, u) => sum + u.prompt_tokens * 0.001 + u.completion_tokens * 0.002, 0);
    expect(dollars).toBeGreaterThanOrEqual(0.5);
    const usage = Object.values(await policyUsage(t, policy.id))[0];
    expect(usage.current_usage).toBeCloseTo(dollars, 9);
    expect(usage.status).toBe('exhausted');
    expect(refused!.message).toMatch(/has used \$\d+(\.\d+)? of \$0\.5/);
  });
});

describe('a settlement that fails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('gives the reservation back at once and records the admission as released', async () => {
    const policyId = await tokensPolicy(t, 100_000, 'Flaky settle');
    const engine = usageEngine(t.app.runtime);
    const settle = engine.settle;
    engine.settle = async () => {
      throw new Error('disk full');
    };
    try {
      const openai = sdk(`${await t.listen()}/v1`);
      const assistant = await openai.beta.assistants.create({ model: 'local-test' });
      const run = await openai.beta.threads.createAndRunPoll({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'hello' }] } }, { pollIntervalMs: 10 });
      expect(run.status).toBe('completed');
      await allSettled(t);
      expect(await heldReservations(t)).toBe(0);
      const view = await runEnforcement(t, run.thread_id, run.id);
      expect(view.enforcement.admissions[0].settlement).toMatchObject({ action: 'released', cost: 0, totalTokens: run.usage!.total_tokens });
      expect(Object.values(await policyUsage(t, policyId))[0]?.current_usage ?? 0).toBe(0);
    } finally {
      engine.settle = settle;
    }
  });
});

describe('a run under several limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('settles its usage into every bucket that admitted it: the access’s own and each matching policy', async () => {
    const byKey = await tokensPolicy(t, 100_000, 'Per key');
    const byWorkspace = (
      await ok(t, 'POST', '/v1/policies/usage-limits', {
        name: 'Per workspace and model',
        conditions: [{ key: 'virtual_key', value: 'local' }],
        group_by: [{ key: 'workspace_id' }, { key: 'model' }],
        type: 'tokens',
        credit_limit: 100_000,
      })
    ).id;
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100_000 }] }] });
    const openai = sdk(`${await t.listen()}/v1`);
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const run = await openai.beta.threads.createAndRunPoll({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'count me three times' }] } }, { pollIntervalMs: 10 });
    expect(run.status).toBe('completed');
    await allSettled(t);
    const total = run.usage!.total_tokens;
    expect(Object.values(await policyUsage(t, byKey)).map((u) => u.current_usage)).toEqual([total]);
    const perModel = await policyUsage(t, byWorkspace);
    expect(Object.keys(perModel)).toEqual([expect.stringMatching(/^workspace_id:[0-9a-f-]{36}\|model:local-test$/)]);
    expect(Object.values(perModel)[0].current_usage).toBe(total);
    const access = await t.app.runtime.fork().getConnection().execute<Array<{ used: number }>>("select used from usage_buckets where owner_type = 'workspace_access'", [], 'all');
    expect(access.map((row: { used: number }) => Number(row.used))).toEqual([total]);
    const view = await runEnforcement(t, run.thread_id, run.id);
    expect(view.enforcement.admissions[0].limits.map((l: { ownerType: string }) => l.ownerType)).toEqual(['workspace_access', 'policy', 'policy']);
  });
});
