/**
 * The run lifecycle beyond the happy path: cancel from each state, expiry (on read and by the
 * sweep, with a manual clock), restart recovery, and the enforcement hooks (admission, output
 * check, run finished).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitError } from '../../src/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import { runHooks, type RunSummary } from '../../src/modules/runs/admission.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import type { ModelAdapter } from '../../src/modules/runs/models/model.js';
import { throwIfAborted } from '../../src/modules/runs/models/model.js';
import { sweepExpiredRuns } from '../../src/modules/runs/recovery.js';
import type { RunUsage } from '../../src/modules/runs/run.entity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BETA, H, assistant, names, ok, parseSse, slowLocal, startRun, thread, useLocalModel, waitFor, waitingRun } from '../helpers/run-fixtures.js';

const events = async (t: TestApp, threadId: string, runId: string, after = 0) =>
  parseSse((await t.request('GET', `/v1/threads/${threadId}/runs/${runId}/events?after=${after}`, { headers: BETA })).text);

/** A model that never answers until its signal aborts. */
const hanging: () => ModelAdapter = () => ({
  async *stream(req) {
    await new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
    throwIfAborted(req.signal);
  },
});

describe('cancel', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ RUN_CONCURRENCY: 1 });
  });
  afterAll(() => t.close());

  it('from in_progress: answers cancelling, settles cancelled, closes the message and the step', async () => {
    slowLocal(t, { delayMs: 30, tokensPerDelta: 1 });
    const { thread: th, run } = await startRun(t, 'a long enough answer to be cancelled midway through it', {}, { tools: [] });
    await waitFor(t, th.id, run.id, ['in_progress']);
    while ((await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA)).data.length === 0) await new Promise((r) => setTimeout(r, 5));
    const cancelled = await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, undefined, BETA);
    expect(cancelled.status).toBe('cancelling');
    const done = await waitFor(t, th.id, run.id, ['cancelled', 'completed']);
    expect(done).toMatchObject({ status: 'cancelled', expires_at: null, required_action: null });
    expect(done.cancelled_at).toEqual(expect.any(Number));
    expect(done.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    const log = names(await events(t, th.id, run.id));
    expect(log.slice(-5)).toEqual(['thread.run.cancelling', 'thread.message.incomplete', 'thread.run.step.cancelled', 'thread.run.cancelled', 'done']);
    const messages = await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA);
    expect(messages.data[0]).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'run_cancelled' } });
    // The thread is free again.
    expect((await t.request('POST', `/v1/threads/${th.id}/messages`, { body: { role: 'user', content: 'next' }, headers: BETA })).status).toBe(200);
  });

  it('from queued (behind a busy executor): cancelled, and never executed', async () => {
    useLocalModel(t, hanging);
    const busy = await startRun(t, 'occupy the only slot', {}, { tools: [] });
    await waitFor(t, busy.thread.id, busy.run.id, ['in_progress']);
    const queued = await startRun(t, 'wait in line', {}, { tools: [] });
    expect((await ok(t, 'GET', `/v1/threads/${queued.thread.id}/runs/${queued.run.id}`, undefined, BETA)).status).toBe('queued');
    const answer = await ok(t, 'POST', `/v1/threads/${queued.thread.id}/runs/${queued.run.id}/cancel`, undefined, BETA);
    expect(answer.status).toBe('cancelling');
    const after = await ok(t, 'GET', `/v1/threads/${queued.thread.id}/runs/${queued.run.id}`, undefined, BETA);
    expect(after).toMatchObject({ status: 'cancelled', started_at: null });
    expect(names(await events(t, queued.thread.id, queued.run.id))).toEqual(['thread.run.created', 'thread.run.queued', 'thread.run.cancelling', 'thread.run.cancelled', 'done']);
    // Free the slot; the cancelled run must not start.
    await ok(t, 'POST', `/v1/threads/${busy.thread.id}/runs/${busy.run.id}/cancel`, undefined, BETA);
    await waitFor(t, busy.thread.id, busy.run.id, ['cancelled']);
    await new Promise((r) => setTimeout(r, 30));
    expect((await ok(t, 'GET', `/v1/threads/${queued.thread.id}/runs/${queued.run.id}`, undefined, BETA)).status).toBe('cancelled');
  });

  it('from requires_action: cancelled, the tool-calls step cancelled', async () => {
    useLocalModel(t, () => new LocalModel());
    const { run } = await waitingRun(t);
    const answer = await ok(t, 'POST', `/v1/threads/${run.thread_id}/runs/${run.id}/cancel`, undefined, BETA);
    expect(answer).toMatchObject({ status: 'cancelling', required_action: null });
    const after = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA);
    expect(after.status).toBe('cancelled');
    const steps = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}/steps`, undefined, BETA);
    expect(steps.data[0]).toMatchObject({ type: 'tool_calls', status: 'cancelled' });
  });

  it('a terminal run cannot be cancelled (400, never 409)', async () => {
    const { thread: th, run } = await startRun(t, 'quick', {}, { tools: [] });
    await waitFor(t, th.id, run.id, ['completed']);
    const r = await t.request('POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, { headers: BETA });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { message: "Cannot cancel run with status 'completed'.", type: 'invalid_request_error', param: null, code: null } });
    const unknown = await t.request('POST', `/v1/threads/${th.id}/runs/run_nope/cancel`, { headers: BETA });
    expect(unknown.status).toBe(404);
  });
});

describe('expiry', () => {
  let t: TestApp;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
    t = await createTestApp({}, { clock });
  });
  afterAll(() => t.close());

  it('a waiting run past expires_at is expired on read; submitting is refused', async () => {
    const { run, calls } = await waitingRun(t);
    expect(run.expires_at).toBe(run.created_at + 600);
    clock.advance(599_000);
    expect((await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).status).toBe('requires_action');
    clock.advance(1_000);
    const r = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
      body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'late' }] },
      headers: H,
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { message: 'Runs in status "expired" do not accept tool outputs.', type: 'invalid_request_error', param: null, code: null } });
    const expired = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA);
    expect(expired).toMatchObject({ status: 'expired', expires_at: null, required_action: null, usage: { total_tokens: expect.any(Number) } });
    expect(names(await events(t, run.thread_id, run.id)).slice(-3)).toEqual(['thread.run.step.expired', 'thread.run.expired', 'done']);
    const cancel = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/cancel`, { headers: BETA });
    expect(cancel.body.error.message).toBe("Cannot cancel run with status 'expired'.");
  });

  it('the sweep expires waiting runs nobody reads', async () => {
    const { run } = await waitingRun(t);
    clock.advance(601_000);
    expect(await sweepExpiredRuns(t.app.runtime)).toEqual([run.id]);
    expect(await sweepExpiredRuns(t.app.runtime)).toEqual([]);
    const rows = await t.app.runtime.fork().getConnection().execute('select status from runs where id = ?', [run.id]);
    expect(rows[0].status).toBe('expired');
  });
});

describe('restart recovery', () => {
  it('in_progress → failed (interrupted), queued → resumed to completion, cancelling → cancelled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-runs-'));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, RUN_CONCURRENCY: 1 };
    const first = await createTestApp(env);
    try {
      useLocalModel(first, hanging);
      const interrupted = await startRun(first, 'hang', {}, { tools: [] });
      await waitFor(first, interrupted.thread.id, interrupted.run.id, ['in_progress']);
      const waiting = await startRun(first, 'still queued', {}, { tools: [] });
      const cancelling = await startRun(first, 'being cancelled', {}, { tools: [] });
      // As if the process died between the cancel request and its settlement.
      await first.app.runtime.fork().getConnection().execute("update runs set status = 'cancelling' where id = ?", [cancelling.run.id]);
      // Dead, its run leases lapse (on PostgreSQL a second instance honours a live one's leases).
      await first.app.runtime.fork().getConnection().execute("update runs set lease_owner = 'dead', lease_expires_at = 0 where lease_owner is not null");

      // A second process starts on the same database while the first one is "dead" (never stopped).
      const second = await createTestApp(env);
      try {
        const failed = await ok(second, 'GET', `/v1/threads/${interrupted.thread.id}/runs/${interrupted.run.id}`, undefined, BETA);
        expect(failed).toMatchObject({
          status: 'failed',
          last_error: { code: 'server_error', message: 'The run was interrupted by a gateway restart before it finished.' },
        });
        expect((await waitFor(second, waiting.thread.id, waiting.run.id, ['completed'])).usage.total_tokens).toBeGreaterThan(0);
        expect((await ok(second, 'GET', `/v1/threads/${cancelling.thread.id}/runs/${cancelling.run.id}`, undefined, BETA)).status).toBe('cancelled');
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a graceful stop fails runs in flight and leaves queued ones for the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-runs-'));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, RUN_CONCURRENCY: 1 };
    const first = await createTestApp(env);
    useLocalModel(first, hanging);
    const inFlight = await startRun(first, 'hang', {}, { tools: [] });
    await waitFor(first, inFlight.thread.id, inFlight.run.id, ['in_progress']);
    const queued = await startRun(first, 'next in line', {}, { tools: [] });
    await first.close();
    const second = await createTestApp(env);
    try {
      expect(await ok(second, 'GET', `/v1/threads/${inFlight.thread.id}/runs/${inFlight.run.id}`, undefined, BETA)).toMatchObject({
        status: 'failed',
        last_error: { code: 'server_error', message: 'The gateway shut down while the run was in progress.' },
      });
      expect((await waitFor(second, queued.thread.id, queued.run.id, ['completed'])).status).toBe('completed');
    } finally {
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('enforcement hooks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('admission checks see every model-work request and can refuse it before anything is written', async () => {
    const seen: any[] = [];
    const remove = runHooks(t.app.runtime).addAdmissionCheck((_ctx, admission) => {
      seen.push({ ...admission.request, aiProviderId: admission.provider.integration.aiProviderId });
      if (admission.request.inputText.includes('forbidden')) {
        throw new RateLimitError('Rate limit reached for virtual key local.', { headers: { 'retry-after': '7' } });
      }
    });
    try {
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'this is forbidden');
      const refused = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, metadata: { team: 'x' } }, headers: H });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('7');
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect((await ok(t, 'GET', `/v1/threads/${th.id}/runs`, undefined, BETA)).data).toEqual([]);
      expect(seen[0]).toMatchObject({
        kind: 'create_run',
        virtualKey: 'local',
        model: 'local-test',
        inputText: 'this is forbidden',
        metadata: { team: 'x' },
        threadId: th.id,
        runId: null,
        aiProviderId: 'local',
        apiKeyId: expect.any(String),
      });
      const { run, calls } = await waitingRun(t);
      const submit = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
        body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'forbidden output' }] },
        headers: H,
      });
      expect(submit.status).toBe(429);
      expect(seen.at(-1)).toMatchObject({ kind: 'submit_tool_outputs', runId: run.id, inputText: 'forbidden output' });
      expect((await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).status).toBe('requires_action');
      await ok(t, 'POST', '/v1/threads/runs', { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'fine' }] } });
      expect(seen.at(-1)).toMatchObject({ kind: 'create_thread_and_run', inputText: 'fine', threadId: null });
    } finally {
      remove();
    }
  });

  it('a failing output check fails the run with its code; the message is left incomplete', async () => {
    const remove = runHooks(t.app.runtime).addOutputCheck((_runtime, output) =>
      output.text.includes('secret') ? { pass: false, code: 'invalid_prompt', message: 'Output guardrail guard_x failed.' } : { pass: true },
    );
    try {
      const { thread: th, run } = await startRun(t, 'tell the secret', {}, { tools: [] });
      const done = await waitFor(t, th.id, run.id, ['completed', 'failed']);
      expect(done).toMatchObject({ status: 'failed', last_error: { code: 'invalid_prompt', message: 'Output guardrail guard_x failed.' } });
      // The step enum has no invalid_prompt: the step fails server_error with the same message.
      const steps = await ok(t, 'GET', `/v1/threads/${th.id}/runs/${run.id}/steps`, undefined, BETA);
      expect(steps.data[0]).toMatchObject({ status: 'failed', last_error: { code: 'server_error', message: 'Output guardrail guard_x failed.' } });
      const messages = await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA);
      expect(messages.data[0]).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'run_failed' } });
      const ok2 = await startRun(t, 'harmless', {}, { tools: [] });
      expect((await waitFor(t, ok2.thread.id, ok2.run.id, ['completed', 'failed'])).status).toBe('completed');
    } finally {
      remove();
    }
  });

  it('run-finished listeners get every terminal run once, with its usage; a throwing one is isolated', async () => {
    const finished: { run: RunSummary; usage: RunUsage }[] = [];
    const hooks = runHooks(t.app.runtime);
    const removeBad = hooks.addRunFinishedListener(() => {
      throw new Error('listener bug');
    });
    const remove = hooks.addRunFinishedListener((_runtime, run, usage) => {
      finished.push({ run, usage });
    });
    try {
      const { thread: th, run } = await startRun(t, 'count me', {}, { tools: [] });
      const done = await waitFor(t, th.id, run.id, ['completed']);
      const waiting = await waitingRun(t);
      await ok(t, 'POST', `/v1/threads/${waiting.run.thread_id}/runs/${waiting.run.id}/cancel`, undefined, BETA);
      await new Promise((r) => setTimeout(r, 20));
      expect(finished.map((f) => [f.run.id, f.run.status])).toEqual([
        [run.id, 'completed'],
        [waiting.run.id, 'cancelled'],
      ]);
      expect(finished[0].usage).toEqual(done.usage);
      expect(finished[0].run).toMatchObject({ virtualKey: 'local', model: 'local-test', threadId: th.id, apiKeyId: expect.any(String) });
      expect(finished[1].usage.total_tokens).toBeGreaterThan(0);
    } finally {
      remove();
      removeBad();
    }
  });
});
