/**
 * Data-plane enforcement end to end: a real HTTP server, the openai SDK v6, a real JWKS server.
 * Order of checks: virtual key → rate limit (429) → usage limits (412) → input guardrails (446 /
 * 246); then output guardrails and usage settlement when the run ends.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { evaluationWriter } from '../../src/modules/guardrails/evaluation-writer.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import { modelRegistry } from '../../src/modules/runs/models/registry.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { startJwksServer, type JwksServer } from '../unit/guardrails/jwks-server.js';
import { allSettled, BETA, DATA_PLANE, heldReservations, ok, policyUsage, runEnforcement, sdk, tokensPolicy, waitTerminal } from '../helpers/enforcement.js';

async function status(promise: Promise<unknown>): Promise<{ status: number; error: any }> {
  try {
    await promise;
    return { status: 200, error: null };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, error };
    throw error;
  }
}

describe('usage limits (412) with the openai SDK', () => {
  let t: TestApp;
  let openai: OpenAI;
  beforeAll(async () => {
    t = await createTestApp();
    openai = sdk(`${await t.listen()}/v1`);
  });
  afterAll(() => t.close());

  it('a tokens policy grouped by api_key refuses the first run after the budget is spent, and admits again after reset_usage_for_value', async () => {
    const policyId = await tokensPolicy(t, 40, 'Team budget');
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const used: number[] = [];
    let refusal: any = null;
    for (let i = 0; i < 20 && !refusal; i++) {
      const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: `hello number ${i}, how are you today?` }] });
      const outcome = await status(openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 10 }).then((run) => {
        expect(run.status).toBe('completed');
        used.push(run.usage!.total_tokens);
      }));
      if (outcome.status !== 200) refusal = outcome;
    }
    expect(refusal).not.toBeNull();
    const total = used.reduce((a, b) => a + b, 0);
    // Refused only once the budget was spent, and not a run later.
    expect(total).toBeGreaterThanOrEqual(40);
    expect(total - used[used.length - 1]).toBeLessThan(40);
    expect(refusal.status).toBe(412);
    expect(refusal.error.error).toMatchObject({ type: 'usage_limit_error', code: 'usage_limit_exceeded' });
    expect(refusal.error.message).toContain(`usage-limit policy 'Team budget' (${policyId})`);
    expect(refusal.error.headers.get('x-gateway-overhead-ms')).toMatch(/^\d+(\.\d+)?$/);

    await allSettled(t);
    const usage = await policyUsage(t, policyId);
    const [valueKey] = Object.keys(usage);
    expect(valueKey).toMatch(/^api_key:/);
    expect(usage[valueKey]).toMatchObject({ current_usage: total, status: 'exhausted' });
    expect(await heldReservations(t)).toBe(0);

    await ok(t, 'PUT', `/v1/policies/usage-limits/${policyId}`, { reset_usage_for_value: valueKey });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'back again' }] });
    const { data: run, response } = await openai.beta.threads.runs.create(thread.id, { assistant_id: assistant.id }).withResponse();
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('x-gateway-overhead-ms'))).toBeGreaterThan(0);
    const done = await waitTerminal(t, thread.id, run.id);
    expect(done.status).toBe('completed');
    await allSettled(t);
    expect((await policyUsage(t, policyId))[valueKey].current_usage).toBe(done.usage.total_tokens);

    // The run's enforcement decisions: the limit with its bucket, the estimate, the settlement.
    const view = await runEnforcement(t, thread.id, run.id);
    expect(view.enforcement.admissions).toHaveLength(1);
    const admission = view.enforcement.admissions[0];
    expect(admission).toMatchObject({ kind: 'create_run', status: 200, rateLimit: null, inputGuardrails: null });
    expect(admission.limits).toEqual([
      expect.objectContaining({ ownerType: 'policy', ownerId: policyId, valueKey, type: 'tokens', creditLimit: 40, currentUsage: 0 }),
    ]);
    expect(admission.limits[0].reserved).toBe(admission.estimate.tokens);
    expect(admission.estimate.tokens).toBeGreaterThanOrEqual(done.usage.total_tokens);
    expect(admission.settlement).toEqual({
      action: 'settled',
      promptTokens: done.usage.prompt_tokens,
      completionTokens: done.usage.completion_tokens,
      totalTokens: done.usage.total_tokens,
      cost: 0,
    });
    await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
  });

  it('tool-output submissions are admitted and settled too: each admission pays for its segment of the run', async () => {
    const policyId = await tokensPolicy(t, 100_000, 'Big budget');
    const assistant = await openai.beta.assistants.create({
      model: 'local-test',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather for Paris' }] });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 10 });
    expect(run.status).toBe('requires_action');
    const callId = run.required_action!.submit_tool_outputs.tool_calls[0].id;
    const done = await openai.beta.threads.runs.submitToolOutputsAndPoll(run.id, { thread_id: thread.id, tool_outputs: [{ tool_call_id: callId, output: 'sunny' }] }, { pollIntervalMs: 10 });
    expect(done.status).toBe('completed');
    await allSettled(t);
    const view = await runEnforcement(t, thread.id, run.id);
    expect(view.enforcement.admissions.map((a: any) => a.kind)).toEqual(['create_run', 'submit_tool_outputs']);
    const settled = view.enforcement.admissions.map((a: any) => a.settlement.totalTokens);
    expect(settled[0]).toBeGreaterThan(0);
    expect(settled[1]).toBeGreaterThan(0);
    expect(settled[0] + settled[1]).toBe(done.usage!.total_tokens);
    expect(Object.values(await policyUsage(t, policyId))[0].current_usage).toBe(done.usage!.total_tokens);
    expect(await heldReservations(t)).toBe(0);
    await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
  });

  it('an admission whose write fails (a second run racing for the thread) gives its reservation back', async () => {
    const policyId = await tokensPolicy(t, 100_000, 'Race budget');
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'race' }] });
    const results = await Promise.all(
      Array.from({ length: 4 }, () => t.request('POST', `/v1/threads/${thread.id}/runs`, { body: { assistant_id: assistant.id }, headers: DATA_PLANE })),
    );
    const created = results.filter((r) => r.status === 200);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(results.filter((r) => r.status === 400).length).toBe(4 - created.length);
    for (const r of created) await waitTerminal(t, thread.id, r.body.id);
    await allSettled(t);
    const total = (await Promise.all(created.map((r) => waitTerminal(t, thread.id, r.body.id)))).reduce((a, run) => a + run.usage.total_tokens, 0);
    expect(Object.values(await policyUsage(t, policyId))[0].current_usage).toBe(total);
    await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
  });
});

describe('rate limits (429) with the openai SDK', () => {
  let t: TestApp;
  let openai: OpenAI;
  const clock = new ManualClock(new Date('2026-11-22T10:00:10.000Z'));
  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    openai = sdk(`${await t.listen()}/v1`);
  });
  afterAll(() => t.close());

  it('3 rpm: three runs pass with x-ratelimit-* headers, the fourth gets 429 with a sane Retry-After', async () => {
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 3 }] }] });
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await openai.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: `hi ${i}` }] } }).withResponse();
      expect(response.headers.get('x-ratelimit-limit')).toBe('3');
      expect(response.headers.get('x-ratelimit-reset')).toBe(String(Date.parse('2026-11-22T10:01:00.000Z') / 1000));
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await status(openai.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'one too many' }] } }));
    expect(refused.status).toBe(429);
    expect(refused.error.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.error.headers.get('retry-after')).toBe('50');
    expect(refused.error.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.error.headers.get('x-gateway-overhead-ms')).not.toBeNull();

    // The next window admits again.
    clock.set('2026-11-22T10:01:00.000Z');
    const again = await status(openai.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'next minute' }] } }));
    expect(again.status).toBe(200);
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: null }] });
  });

  it('the workspace access’s own usage limit: 412 naming it once spent; disabled access 403; unknown virtual key 404', async () => {
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 1 }] }] });
    const assistant = await openai.beta.assistants.create({ model: 'local-test' });
    const first = await openai.beta.threads.createAndRunPoll({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'spend it' }] } }, { pollIntervalMs: 10 });
    expect(first.status).toBe('completed');
    await allSettled(t);
    const refused = await status(openai.beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'again' }] } }));
    expect(refused.status).toBe(412);
    expect(refused.error.message).toContain("the workspace's access to integration 'local'");
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: false }] });
    expect((await status(openai.beta.threads.createAndRun({ assistant_id: assistant.id }))).status).toBe(403);
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: null }] });
    const unknown = sdk(openai.baseURL, { 'x-gateway-virtual-key': 'nope' });
    expect((await status(unknown.beta.threads.createAndRun({ assistant_id: assistant.id }))).status).toBe(404);
    const metrics = await fetchMetrics(t);
    for (const reason of ['rate_limit', 'usage_limit', 'integration_disabled', 'virtual_key']) {
      expect(metrics).toMatch(new RegExp(`gatehouse_dataplane_refusals_total\\{reason="${reason}"\\} 1\\b`));
    }
  });
});

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

describe('guardrails (446, 246, output deny) with the openai SDK and a real JWKS server', () => {
  let t: TestApp;
  let base: string;
  let jwks: JwksServer;
  let key: KeyPair;
  let assistantId: string;
  let jwtGuard: string;
  let softGuard: string;

  const sign = () =>
    new SignJWT({ sub: 'user-1' }).setProtectedHeader({ alg: 'RS256', kid: key.kid }).setIssuedAt().setExpirationTime('10m').sign(key.privateKey);

  beforeAll(async () => {
    t = await createTestApp();
    base = `${await t.listen()}/v1`;
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    key = { kid: 'k1', privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' } };
    jwks = await startJwksServer([key.jwk]);
    jwtGuard = (
      await ok(t, 'POST', '/v1/guardrails', {
        name: 'Signed users only',
        checks: [{ id: 'default.jwt', parameters: { jwksUri: jwks.url, headerKey: 'x-user-token' } }],
        actions: { deny: true },
      })
    ).slug;
    softGuard = (
      await ok(t, 'POST', '/v1/guardrails', {
        name: 'Must say please',
        checks: [{ id: 'default.regexMatch', parameters: { rule: 'please' } }],
        actions: { deny: false, on_fail: { feedback: { value: -3, weight: 2, metadata: 'impolite' } } },
      })
    ).slug;
    assistantId = (await sdk(base).beta.assistants.create({ model: 'local-test' })).id;
    // A budget, so a 446 has a reservation to give back.
    await tokensPolicy(t, 1_000_000, 'Guarded budget');
  });
  afterAll(async () => {
    await t.close();
    await jwks.close();
  });
  afterEach(async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [], output_guardrails: [] });
  });

  it('a deny default.jwt input guardrail: 446 with guardrail_results without a valid token; admitted with one', async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [jwtGuard] });
    const denied = await status(sdk(base).beta.threads.createAndRun({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'hi' }] } }));
    expect(denied.status).toBe(446);
    expect(denied.error.error).toMatchObject({ type: 'guardrail_error', code: 'guardrail_denied' });

    const raw = await fetch(`${base}/threads/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_KEY, ...DATA_PLANE, 'x-user-token': 'not-a-jwt' },
      body: JSON.stringify({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'hi' }] } }),
    });
    expect(raw.status).toBe(446);
    const body = await raw.json();
    expect(body.error).toEqual({ message: `The request was denied by guardrail 'Signed users only' (${jwtGuard}).`, type: 'guardrail_error', param: null, code: 'guardrail_denied' });
    expect(body.guardrail_results).toEqual([expect.objectContaining({ slug: jwtGuard, verdict: false, deny: true, feedback: { value: -5, weight: 1, metadata: '' } })]);
    expect(await heldReservations(t)).toBe(0);

    const signed = sdk(base, { 'x-user-token': `Bearer ${await sign()}` });
    const { data: run, response } = await signed.beta.threads.createAndRun({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'hi' }] } }).withResponse();
    expect(response.status).toBe(200);
    const done = await waitTerminal(t, run.thread_id, run.id);
    expect(done.status).toBe('completed');
    const view = await runEnforcement(t, run.thread_id, run.id);
    expect(view.enforcement.admissions[0].inputGuardrails).toMatchObject({ stage: 'input', verdict: true, deny: false, missing: [] });
    expect(view.enforcement.admissions[0].inputGuardrails.results[0]).toMatchObject({ slug: jwtGuard, verdict: true, feedback: { value: 5, weight: 1, metadata: '' } });
  });

  it('a failing non-deny guardrail lets the request through with 246 and records the evaluation', async () => {
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [jwtGuard, softGuard] });
    const signed = sdk(base, { 'x-user-token': await sign() });
    const { data: run, response } = await signed.beta.threads.createAndRun({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'give me the answer' }] } }).withResponse();
    expect(response.status).toBe(246);
    expect(run.object).toBe('thread.run');
    expect((await waitTerminal(t, run.thread_id, run.id)).status).toBe('completed');
    const view = await runEnforcement(t, run.thread_id, run.id);
    const admission = view.enforcement.admissions[0];
    expect(admission.status).toBe(246);
    expect(admission.inputGuardrails).toMatchObject({ verdict: false, deny: false });
    expect(admission.inputGuardrails.results.map((r: any) => [r.slug, r.verdict, r.feedback])).toEqual([
      [jwtGuard, true, { value: 5, weight: 1, metadata: '' }],
      [softGuard, false, { value: -3, weight: 2, metadata: 'impolite' }],
    ]);
    // The evaluation is stored by the guardrails domain too (in its next batch).
    await evaluationWriter(t.app.runtime).flush();
    const stored = await t.app.runtime.fork().getConnection().execute<any[]>('select verdict, stage from guardrail_evaluations where id = ?', [admission.inputGuardrails.results[1].evaluation_id], 'all');
    expect(stored).toHaveLength(1);

    const polite = await signed.beta.threads.createAndRun({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'please answer' }] } }).withResponse();
    expect(polite.response.status).toBe(200);

    // A stream answers 246 too, and the SDK reads its events to the end.
    const { data: stream, response: streamed } = await signed.beta.threads
      .createAndRun({ assistant_id: assistantId, stream: true, thread: { messages: [{ role: 'user', content: 'stream it' }] } })
      .withResponse();
    expect(streamed.status).toBe(246);
    const events: string[] = [];
    for await (const event of stream) events.push(event.event);
    expect(events[0]).toBe('thread.created');
    expect(events.at(-1)).toBe('thread.run.completed');
  });

  it('an output default.regexMatch guardrail with deny fails a run whose answer matches (invalid_prompt, the guardrail in the message and the record)', async () => {
    const outputGuard = (
      await ok(t, 'POST', '/v1/guardrails', {
        name: 'No secrets out',
        checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret', not: true } }],
        actions: { deny: true },
      })
    ).slug;
    await ok(t, 'PUT', '/v1/providers/local', { output_guardrails: [outputGuard] });
    const openai = sdk(base);
    const bad = await openai.beta.threads.createAndRunPoll({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'the secret is 42' }] } }, { pollIntervalMs: 10 });
    expect(bad.status).toBe('failed');
    const deniedMessage = `The answer was denied by guardrail 'No secrets out' (${outputGuard}).`;
    expect(bad.last_error).toEqual({ code: 'invalid_prompt', message: deniedMessage });
    const steps = await openai.beta.threads.runs.steps.list(bad.id, { thread_id: bad.thread_id });
    expect(steps.data.map((step) => step.last_error)).toEqual([{ code: 'server_error', message: deniedMessage }]);
    const good = await openai.beta.threads.createAndRunPoll({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'nothing to hide' }] } }, { pollIntervalMs: 10 });
    expect(good.status).toBe('completed');
    const view = await runEnforcement(t, bad.thread_id, bad.id);
    expect(view.enforcement.outputGuardrails).toEqual([expect.objectContaining({ stage: 'output', verdict: false, deny: true })]);
    expect(JSON.stringify(view.enforcement.outputGuardrails[0].results)).toContain(outputGuard);
  });
});

describe('over GraphQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('createRun is refused with 412 by an exhausted policy, and Run.enforcement is readable', async () => {
    const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const thread = await ok(t, 'POST', '/v1/threads', { messages: [{ role: 'user', content: 'hello' }] }, BETA);
    const create = 'mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id status } }';
    const admitted = await t.graphql(create, { t: thread.id, i: { assistantId: assistant.id } });
    expect(admitted.errors).toBeUndefined();
    const done = await waitTerminal(t, thread.id, admitted.data.createRun.id);
    const view = await runEnforcement(t, thread.id, done.id);
    expect(view.enforcement).toEqual({ admissions: [expect.objectContaining({ kind: 'create_run', status: 200, limits: [], estimate: null, settlement: null })], outputGuardrails: [] });

    const policyId = await tokensPolicy(t, 0, 'Nothing left');
    const refused = await t.graphql(create, { t: thread.id, i: { assistantId: assistant.id } });
    expect(refused.errors?.[0]).toMatchObject({ extensions: { status: 412, type: 'usage_limit_error', code: 'usage_limit_exceeded' } });
    expect(refused.errors?.[0].message).toContain(`usage-limit policy 'Nothing left' (${policyId})`);
    await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);

    // 446 through GraphQL as well.
    const guard = (await ok(t, 'POST', '/v1/guardrails', { name: 'Needs a token', checks: [{ id: 'default.jwt', parameters: { jwksUri: 'http://127.0.0.1:9/jwks.json', headerKey: 'x-user-token' } }], actions: { deny: true } })).slug;
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [guard] });
    const denied = await t.graphql(create, { t: thread.id, i: { assistantId: assistant.id } });
    expect(denied.errors?.[0]).toMatchObject({ extensions: { status: 446, type: 'guardrail_error', code: 'guardrail_denied' } });
    await ok(t, 'PUT', '/v1/providers/local', { input_guardrails: [] });

    const metrics = await fetchMetrics(t);
    expect(metrics).toMatch(/gatehouse_dataplane_refusals_total\{reason="usage_limit"\} 1\b/);
    expect(metrics).toMatch(/gatehouse_dataplane_refusals_total\{reason="guardrail"\} 1\b/);
    expect(Number(/gatehouse_dataplane_overhead_seconds_count (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
  });
});

async function fetchMetrics(t: TestApp): Promise<string> {
  const r = await t.app.fetch(new Request('http://gatehouse.test/metrics'));
  return r.text();
}

describe('a stream whose client disconnects early', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('still settles the run’s usage into the budget', async () => {
    modelRegistry(t.app.runtime).set('local', () => new LocalModel({ delayMs: 15, tokensPerDelta: 1 }));
    const policyId = await tokensPolicy(t, 100_000, 'Stream budget');
    const base = await t.listen();
    const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/threads/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_KEY, ...DATA_PLANE },
      body: JSON.stringify({ assistant_id: assistant.id, stream: true, thread: { messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t' }] } }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-overhead-ms')).toMatch(/^\d+(\.\d+)?$/);
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('thread.message.delta')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const created = text.split('\n').find((line) => line.startsWith('data: ') && line.includes('"object":"thread.run"'))!;
    const { id: runId, thread_id: threadId } = JSON.parse(created.slice(6));
    const done = await waitTerminal(t, threadId, runId);
    expect(done.status).toBe('completed');
    await allSettled(t);
    expect(Object.values(await policyUsage(t, policyId))[0].current_usage).toBe(done.usage.total_tokens);
  });
});
