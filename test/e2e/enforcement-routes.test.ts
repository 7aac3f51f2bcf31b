/**
 * Enforcement holds on every data-plane route, over both front doors: the three GraphQL mutations
 * (createRun, createThreadAndRun, submitToolOutputs) are refused like their REST routes; every
 * data-plane response carries x-gateway-overhead-ms (refusals before admission included) and no
 * other response does; crossing a policy's alert threshold and exhausting it raise one alert each,
 * delivered over graphql-sse while real runs spend the budget.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { allSettled, BETA, DATA_PLANE, ok, policyUsage, sdk, waitTerminal } from '../helpers/enforcement.js';

const OVERHEAD = /^\d+\.\d{3}$/;

/** GraphQL over HTTP with the data-plane headers, keeping the response's status and headers. */
async function gql(t: TestApp, query: string, variables: Record<string, unknown> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await t.app.fetch(
    new Request('http://gatehouse.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_KEY, 'x-gateway-virtual-key': 'local' },
      body: JSON.stringify({ query, variables }),
    }),
  );
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const CREATE_RUN = 'mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i) { id status threadId } }';
const CREATE_THREAD_AND_RUN = 'mutation($i: CreateThreadAndRunInput!) { createThreadAndRun(input: $i) { id status threadId } }';
const SUBMIT = 'mutation($t: String!, $r: String!, $i: SubmitToolOutputsInput!) { submitToolOutputs(threadId: $t, runId: $r, input: $i) { id status } }';
const PENDING_CALL = 'query($t: String!, $r: String!) { run(threadId: $t, id: $r) { requiredAction { submitToolOutputs { toolCalls { id } } } } }';

describe('the three GraphQL data-plane mutations', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
  let assistantId: string;

  /** A run stopped for a tool call, created over GraphQL (createThreadAndRun). */
  async function pendingToolRun(): Promise<{ threadId: string; runId: string; callId: string }> {
    const created = await gql(t, CREATE_THREAD_AND_RUN, { i: { assistantId, thread: { messages: [{ role: 'user', content: 'get_weather for Oslo' }] } } });
    expect(created.body.errors).toBeUndefined();
    const { id: runId, threadId } = created.body.data.createThreadAndRun;
    await waitTerminal(t, threadId, runId, ['requires_action']);
    const pending = await gql(t, PENDING_CALL, { t: threadId, r: runId });
    return { threadId, runId, callId: pending.body.data.run.requiredAction.submitToolOutputs.toolCalls[0].id };
  }

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    assistantId = (
      await ok(t, 'POST', '/v1/assistants', {
        model: 'local-test',
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      }, BETA)
    ).id;
  });
  afterAll(() => t.close());

  it('are all refused with 412 once the access’s budget is spent', async () => {
    const { threadId, runId, callId } = await pendingToolRun();
    await allSettled(t);
    // The budget is what the run used so far: spent.
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 1 }] }] });
    const spend = await gql(t, CREATE_RUN, { t: (await ok(t, 'POST', '/v1/threads', {}, BETA)).id, i: { assistantId } });
    expect(spend.body.errors).toBeUndefined();
    expect((await waitTerminal(t, spend.body.data.createRun.threadId, spend.body.data.createRun.id)).status).toBe('completed');
    await allSettled(t);

    const refusals = [
      await gql(t, SUBMIT, { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: callId, output: 'rain' }] } }),
      await gql(t, CREATE_RUN, { t: (await ok(t, 'POST', '/v1/threads', {}, BETA)).id, i: { assistantId } }),
      await gql(t, CREATE_THREAD_AND_RUN, { i: { assistantId } }),
    ];
    for (const r of refusals) {
      expect(r.body.data).toBeNull();
      expect(r.body.errors[0]).toMatchObject({ extensions: { status: 412, type: 'usage_limit_error', code: 'usage_limit_exceeded' } });
      expect(r.body.errors[0].message).toContain("the workspace's access to integration 'local'");
      expect(r.headers.get('x-gateway-overhead-ms')).toMatch(OVERHEAD);
    }
    // The refused submission left the run waiting for its outputs.
    expect((await t.request('GET', `/v1/threads/${threadId}/runs/${runId}`, { headers: BETA })).body.status).toBe('requires_action');
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: null }] });

    // With the budget lifted the same submission goes through and the run completes.
    const admitted = await gql(t, SUBMIT, { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: callId, output: 'rain' }] } });
    expect(admitted.body.errors).toBeUndefined();
    expect((await waitTerminal(t, threadId, runId)).status).toBe('completed');
  });

  it('are all refused with 429 (Retry-After and x-ratelimit-* headers) past the access’s rate limit, and every refusal is counted', async () => {
    const { threadId, runId, callId } = await pendingToolRun();
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] }] });
    clock.set('2026-11-22T10:05:20.000Z');
    const first = await gql(t, CREATE_THREAD_AND_RUN, { i: { assistantId } });
    expect(first.body.errors).toBeUndefined();
    expect(first.headers.get('x-ratelimit-remaining')).toBe('0');

    const refusals = [
      await gql(t, SUBMIT, { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: callId, output: 'snow' }] } }),
      await gql(t, CREATE_RUN, { t: (await ok(t, 'POST', '/v1/threads', {}, BETA)).id, i: { assistantId } }),
      await gql(t, CREATE_THREAD_AND_RUN, { i: { assistantId } }),
    ];
    for (const r of refusals) {
      expect(r.body.errors[0]).toMatchObject({ extensions: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
      expect(r.headers.get('retry-after')).toBe('40');
      expect(r.headers.get('x-ratelimit-limit')).toBe('1');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    clock.set('2026-11-22T10:06:00.000Z');
    const next = await gql(t, SUBMIT, { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: callId, output: 'snow' }] } });
    expect(next.body.errors).toBeUndefined();
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: null }] });

    // Every refusal of both tests is counted by reason.
    const metrics = await (await t.app.fetch(new Request('http://gatehouse.test/metrics'))).text();
    expect(metrics).toMatch(/gatehouse_dataplane_refusals_total\{reason="usage_limit"\} 3\b/);
    expect(metrics).toMatch(/gatehouse_dataplane_refusals_total\{reason="rate_limit"\} 3\b/);
  });
});

describe('a failed non-deny input guardrail over GraphQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('admits the mutation, whose own answer can select the 246 decision and the evaluation', async () => {
    const guard = await ok(t, 'POST', '/v1/guardrails', { name: 'Short inputs', checks: [{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 3 } }] });
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [guard.slug] });
    const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const answer = await gql(
      t,
      'mutation($i: CreateThreadAndRunInput!) { createThreadAndRun(input: $i) { id threadId enforcement { admissions { kind status inputGuardrails { verdict deny results } } } } }',
      { i: { assistantId: assistant.id, thread: { messages: [{ role: 'user', content: 'this message has far too many words' }] } } },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    const { admissions } = answer.body.data.createThreadAndRun.enforcement;
    expect(admissions).toEqual([
      { kind: 'create_thread_and_run', status: 246, inputGuardrails: { verdict: false, deny: false, results: [expect.objectContaining({ slug: guard.slug, verdict: false })] } },
    ]);
    const run = answer.body.data.createThreadAndRun;
    expect((await waitTerminal(t, run.threadId, run.id)).status).toBe('completed');
  });
});

describe('x-gateway-overhead-ms', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is on every REST data-plane response, refusals before admission included, and on no other response', async () => {
    const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const thread = await ok(t, 'POST', '/v1/threads', {}, BETA);
    const dataPlane = [
      // admitted
      await t.request('POST', `/v1/threads/${thread.id}/runs`, { body: { assistant_id: assistant.id }, headers: DATA_PLANE }),
      // invalid body (400), unknown thread (404), unknown run (404), no API key (401), missing beta header (400)
      await t.request('POST', '/v1/threads/runs', { body: { assistant_id: 42 }, headers: DATA_PLANE }),
      await t.request('POST', '/v1/threads/thread_nope/runs', { body: { assistant_id: assistant.id }, headers: DATA_PLANE }),
      await t.request('POST', `/v1/threads/${thread.id}/runs/run_nope/submit_tool_outputs`, { body: { tool_outputs: [] }, headers: DATA_PLANE }),
      await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.id }, headers: DATA_PLANE, key: null }),
      await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.id } }),
    ];
    expect(dataPlane.map((r) => r.status)).toEqual([200, 400, 404, 404, 401, 400]);
    for (const r of dataPlane) expect(r.headers.get('x-gateway-overhead-ms'), r.text).toMatch(OVERHEAD);

    const others = [
      await t.request('GET', '/v1/assistants', { headers: BETA }),
      await t.request('GET', `/v1/threads/${thread.id}/runs`, { headers: BETA }),
      await t.request('POST', '/v1/threads', { body: {}, headers: BETA }),
    ];
    for (const r of others) {
      expect(r.status).toBe(200);
      expect(r.headers.get('x-gateway-overhead-ms')).toBeNull();
    }
    const query = await gql(t, '{ viewer { organisation { id } } }');
    expect(query.status).toBe(200);
    expect(query.headers.get('x-gateway-overhead-ms')).toBeNull();
  });
});

describe('usage alerts while runs spend a budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('crossing the threshold and reaching the limit raise one alert each, delivered over graphql-sse', async () => {
    const base = await t.listen();
    const policy = await ok(t, 'POST', '/v1/policies/usage-limits', {
      name: 'Alerting budget',
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 60,
      alert_threshold: 20,
    });
    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': TEST_KEY }, retryAttempts: 0 });
    const alerts: any[] = [];
    const unsubscribe = client.subscribe<any>(
      { query: 'subscription { usageAlerts { kind ownerId valueKey currentUsage creditLimit alertThreshold } }' },
      { next: (value) => alerts.push(value.data.usageAlerts), error: () => undefined, complete: () => undefined },
    );
    const viewer = await t.graphql('{ viewer { workspaces { id slug } } }');
    const workspaceId = viewer.data.viewer.workspaces.find((w: { slug: string }) => w.slug === 'default').id;
    for (let i = 0; i < 100 && t.app.runtime.pubsub.listenerCount(`usageAlerts:${workspaceId}`) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    const openai = sdk(`${base}/v1`);
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    let refused = false;
    let total = 0;
    for (let i = 0; i < 30 && !refused; i++) {
      try {
        const run = await openai.beta.threads.createAndRunPoll(
          { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: `message number ${i} for the budget` }] } },
          { pollIntervalMs: 10 },
        );
        total += run.usage!.total_tokens;
        await allSettled(t);
      } catch (error: any) {
        expect(error.status).toBe(412);
        refused = true;
      }
    }
    expect(refused).toBe(true);
    expect(total).toBeGreaterThanOrEqual(60);
    for (let i = 0; i < 100 && alerts.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    // Later settlements on the same bucket (none here) would raise nothing more: give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alerts.map((a) => a.kind)).toEqual(['threshold', 'exhausted']);
    expect(alerts.every((a) => a.ownerId === policy.id && a.creditLimit === 60 && a.alertThreshold === 20)).toBe(true);
    expect(alerts[0].currentUsage).toBeGreaterThanOrEqual(20);
    expect(alerts[1].currentUsage).toBe(total);
    const usage = Object.values(await policyUsage(t, policy.id))[0] as any;
    expect(usage).toMatchObject({ current_usage: total, status: 'exhausted', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: true });
    unsubscribe();
    client.dispose();
  });
});
