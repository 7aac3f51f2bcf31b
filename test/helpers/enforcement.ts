import OpenAI from 'openai';
import { expect } from 'vitest';
import { TEST_KEY, type TestApp } from './app.js';

export const BETA = { 'OpenAI-Beta': 'assistants=v2' };
export const DATA_PLANE = { 'x-gateway-virtual-key': 'local', ...BETA };

export function sdk(baseURL: string, extra: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: { ...DATA_PLANE, ...extra }, maxRetries: 0 });
}

export async function ok(t: TestApp, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await t.request(method, path, { body, headers });
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.body;
}

/** Polls until the run is terminal (or the given statuses). */
export async function waitTerminal(t: TestApp, threadId: string, runId: string, statuses = ['completed', 'failed', 'cancelled', 'expired', 'incomplete']): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await t.request('GET', `/v1/threads/${threadId}/runs/${runId}`, { headers: BETA });
    if (statuses.includes(r.body.status)) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} did not finish`);
}

export async function tokensPolicy(t: TestApp, creditLimit: number, name = 'Team budget'): Promise<string> {
  const created = await ok(t, 'POST', '/v1/policies/usage-limits', {
    name,
    conditions: [{ key: 'workspace_id', value: '*' }],
    group_by: [{ key: 'api_key' }],
    type: 'tokens',
    credit_limit: creditLimit,
  });
  return created.id;
}

/** Current usage per value key of a policy. */
export async function policyUsage(t: TestApp, id: string): Promise<Record<string, { current_usage: number; status: string }>> {
  return (await ok(t, 'GET', `/v1/policies/usage-limits/${id}`)).value_key_usage_map;
}

/** Estimates still held on any bucket (0 once every admission settled or was released). */
export async function heldReservations(t: TestApp): Promise<number> {
  const rows = await t.app.runtime.fork().getConnection().execute<Array<{ held: number | null }>>('select sum(reserved) as held from usage_buckets', [], 'all');
  return Number(rows[0]?.held ?? 0);
}

export const RUN_ENFORCEMENT = `enforcement {
  admissions { kind requestId status rateLimit { limit remaining resetAt } limits { ownerType ownerId label valueKey type creditLimit currentUsage reserved }
    estimate inputGuardrails { stage verdict deny results missing } settlement { action promptTokens completionTokens totalTokens cost } }
  outputGuardrails { stage verdict deny results }
}`;

export async function runEnforcement(t: TestApp, threadId: string, runId: string): Promise<any> {
  const r = await t.graphql(`query($t: String!, $r: String!) { run(threadId: $t, id: $r) { id status ${RUN_ENFORCEMENT} } }`, { t: threadId, r: runId });
  expect(r.errors).toBeUndefined();
  return r.data.run;
}

/** Usage settles just after a run's terminal status is visible: wait until nothing is held. */
export async function allSettled(t: TestApp): Promise<void> {
  for (let i = 0; i < 300 && (await heldReservations(t)) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await heldReservations(t)).toBe(0);
}
