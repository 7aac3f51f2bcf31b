/**
 * A run's admissions (the create, then each accepted tool-output submission) each pay for their own
 * segment of the run, whatever enforcement applied to the others: a submission to which nothing
 * applied is still recorded, because its start ends the previous admission's segment, and it is
 * the run's only link to the request that admitted it (kind, request id); a create to which nothing
 * applied has no record, its run row holds both (test/e2e/run-enforcement-upgrade).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { allSettled, DATA_PLANE, heldReservations, ok, policyUsage, runEnforcement, sdk, tokensPolicy } from '../helpers/enforcement.js';
import { startRun, waitFor } from '../helpers/run-fixtures.js';

describe('admissions with and without enforcement in one run', () => {
  let t: TestApp;
  let openai: OpenAI;
  let assistantId: string;
  beforeAll(async () => {
    t = await createTestApp();
    openai = sdk(`${await t.listen()}/v1`);
    assistantId = (
      await openai.beta.assistants.create({
        model: 'local-test',
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      })
    ).id;
  });
  afterAll(() => t.close());

  /** A run stopped at its tool call, then given its output with `between` done in the meantime. */
  async function runWithToolCall(between: () => Promise<void>) {
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather for Lyon' }] });
    const { data: created, response } = await openai.beta.threads.runs.create(thread.id, { assistant_id: assistantId }).withResponse();
    const createRequestId = response.headers.get('x-gateway-request-id');
    const waiting = await openai.beta.threads.runs.poll(created.id, { thread_id: thread.id }, { pollIntervalMs: 10 });
    expect(waiting.status).toBe('requires_action');
    await between();
    const callId = waiting.required_action!.submit_tool_outputs.tool_calls[0].id;
    const submitted = await openai.beta.threads.runs.submitToolOutputs(created.id, { thread_id: thread.id, tool_outputs: [{ tool_call_id: callId, output: 'rain' }] }).withResponse();
    const submitRequestId = submitted.response.headers.get('x-gateway-request-id');
    const done = await openai.beta.threads.runs.poll(created.id, { thread_id: thread.id }, { pollIntervalMs: 10 });
    expect(done.status).toBe('completed');
    await allSettled(t);
    const view = await runEnforcement(t, thread.id, created.id);
    return { done, view, requestIds: [createRequestId, submitRequestId] };
  }

  it('no enforcement at all: both admissions are listed with their request ids, nothing reserved or settled', async () => {
    const { view, requestIds } = await runWithToolCall(async () => {});
    expect(requestIds.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(view.enforcement.admissions).toEqual([
      expect.objectContaining({ kind: 'create_run', requestId: requestIds[0], status: 200, rateLimit: null, limits: [], estimate: null, inputGuardrails: null, settlement: null }),
      expect.objectContaining({ kind: 'submit_tool_outputs', requestId: requestIds[1], status: 200, rateLimit: null, limits: [], estimate: null, inputGuardrails: null, settlement: null }),
    ]);
  });

  it('a policy created mid-run: only the submission’s segment is counted on it', async () => {
    let policyId = '';
    const { done, view } = await runWithToolCall(async () => {
      policyId = await tokensPolicy(t, 100_000, 'Created mid-run');
    });
    const [create, submit] = view.enforcement.admissions;
    expect(create).toMatchObject({ kind: 'create_run', limits: [], estimate: null, settlement: null });
    expect(submit.kind).toBe('submit_tool_outputs');
    expect(submit.limits.map((l: { ownerId: string }) => l.ownerId)).toEqual([policyId]);
    expect(submit.settlement.action).toBe('settled');
    // The run used tokens before the submission (its first model call): those are nobody's.
    expect(submit.settlement.totalTokens).toBeGreaterThan(0);
    expect(submit.settlement.totalTokens).toBeLessThan(done.usage!.total_tokens);
    expect(Object.values(await policyUsage(t, policyId))[0].current_usage).toBe(submit.settlement.totalTokens);
    await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
  });

  it('a policy archived mid-run: the submission admitted with nothing ends the first admission’s segment', async () => {
    const policyId = await tokensPolicy(t, 100_000, 'Archived mid-run');
    const { done, view } = await runWithToolCall(async () => {
      await ok(t, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
    });
    const [create, submit] = view.enforcement.admissions;
    expect(create.limits.map((l: { ownerId: string }) => l.ownerId)).toEqual([policyId]);
    expect(create.settlement.action).toBe('settled');
    expect(create.settlement.totalTokens).toBeGreaterThan(0);
    // Without the submission's record the first admission would pay for the whole run.
    expect(create.settlement.totalTokens).toBeLessThan(done.usage!.total_tokens);
    expect(submit).toMatchObject({ kind: 'submit_tool_outputs', limits: [], estimate: null, settlement: null });
    const buckets = await t.app.runtime
      .fork()
      .getConnection()
      .execute<Array<{ used: number }>>('select sum(used) as used from usage_buckets where owner_id = ?', [policyId], 'all');
    expect(Number(buckets[0].used)).toBe(create.settlement.totalTokens);
  });
});

it('a submission after a restart, admitted with nothing, still settles what the create reserved', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-enforcement-segments-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
  const first = await createTestApp(env);
  let firstOpen = true;
  try {
    const policyId = await tokensPolicy(first, 100_000, 'Before the restart');
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
    const { thread, run } = await startRun(first, 'get_weather for Nantes', {}, { tools });
    const waiting = await waitFor(first, thread.id, run.id, ['requires_action']);
    await ok(first, 'DELETE', `/v1/policies/usage-limits/${policyId}`);
    expect(await heldReservations(first)).toBeGreaterThan(0);
    await first.close();
    firstOpen = false;

    const second = await createTestApp(env);
    try {
      const callId = waiting.required_action.submit_tool_outputs.tool_calls[0].id;
      await ok(second, 'POST', `/v1/threads/${thread.id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: callId, output: 'fog' }] }, DATA_PLANE);
      const done = await waitFor(second, thread.id, run.id, ['completed']);
      await allSettled(second);
      const [create, submit] = (await runEnforcement(second, thread.id, run.id)).enforcement.admissions;
      expect(submit).toMatchObject({ kind: 'submit_tool_outputs', limits: [], settlement: null });
      expect(create.settlement.action).toBe('settled');
      expect(create.settlement.totalTokens).toBeLessThan(done.usage.total_tokens);
      expect(Object.values(await policyUsage(second, policyId))[0].current_usage).toBe(create.settlement.totalTokens);
    } finally {
      await second.close();
    }
  } finally {
    if (firstOpen) await first.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
