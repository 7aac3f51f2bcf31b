/**
 * 100 concurrent runs (REST over a real HTTP server, the local model, a file database) against a
 * tokens budget that admits about ten of them: the cap holds (admitted usage ≤ limit + one run's
 * usage) and the bucket's usage equals the sum of the runs' usage exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { allSettled, BETA, DATA_PLANE, ok, policyUsage, tokensPolicy, waitTerminal } from '../helpers/enforcement.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-enforcement-'));
  t = await createTestApp({ DATABASE_URL: 'sqlite:' + join(dir, 'gatehouse.db') });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

it('100 concurrent runs keep the cap and the recorded usage equals the runs’ usage', { timeout: 60_000 }, async () => {
  const base = await t.listen();
  const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
  // Each run reads ~100 tokens and echoes them: ~200 tokens per run, so 2,000 admits about ten.
  const text = Array.from({ length: 100 }, (_, i) => `w${i % 10}`).join(' ');
  const limit = 2000;
  const policyId = await tokensPolicy(t, limit, 'Shared budget');

  const responses = await Promise.all(
    Array.from({ length: 100 }, () =>
      fetch(`${base}/v1/threads/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_KEY, ...DATA_PLANE },
        body: JSON.stringify({ assistant_id: assistant.id, max_completion_tokens: 256, thread: { messages: [{ role: 'user', content: text }] } }),
      }).then(async (r) => ({ status: r.status, body: await r.json() })),
    ),
  );
  const statuses = responses.map((r) => r.status);
  expect(statuses.every((s) => s === 200 || s === 412)).toBe(true);
  const admitted = responses.filter((r) => r.status === 200).map((r) => r.body);
  expect(admitted.length).toBeGreaterThanOrEqual(3);
  expect(admitted.length).toBeLessThan(30);
  expect(responses.find((r) => r.status === 412)!.body.error.code).toBe('usage_limit_exceeded');

  const runs = await Promise.all(admitted.map((run) => waitTerminal(t, run.thread_id, run.id)));
  expect(runs.every((run) => run.status === 'completed')).toBe(true);
  await allSettled(t);
  const usages = runs.map((run) => run.usage.total_tokens as number);
  const total = usages.reduce((a, b) => a + b, 0);
  expect(total).toBeLessThanOrEqual(limit + Math.max(...usages));
  const buckets = Object.values(await policyUsage(t, policyId));
  expect(buckets).toHaveLength(1);
  expect(buckets[0].current_usage).toBe(total);

  // The budget is spent: the next run is refused.
  const after = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'more' }] } }, headers: DATA_PLANE });
  expect(after.status).toBe(412);
});
