/**
 * The periodic expiry sweep (startSweep in src/modules/runs/recovery.ts, RUN_SWEEP_INTERVAL_MS):
 * in a real app, a run waiting in `requires_action` past `expires_at` becomes `expired` through
 * the timer alone (no read of the run), with its events published; and the timer itself, on a
 * stub runtime with fake timers: one sweep per interval, never two at once, a failing sweep is
 * logged and the next still runs, and shutdown (or the returned stop) ends it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { singleInstance, type Instances } from '../../../src/lib/instances.js';
import { startSweep } from '../../../src/modules/runs/recovery.js';
import type { Runtime } from '../../../src/runtime.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { BETA, ok, waitingRun } from '../../helpers/run-fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stored status, read with SQL: going through the service would apply expiry on read. */
async function storedStatus(t: TestApp, runId: string): Promise<string> {
  const rows = await t.app.runtime.fork().getConnection().execute('select status from runs where id = ?', [runId]);
  return rows[0].status;
}

async function storedStatusBecomes(t: TestApp, runId: string, status: string, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await storedStatus(t, runId)) !== status) {
    if (Date.now() > until) throw new Error(`run ${runId} stayed ${await storedStatus(t, runId)}, wanted ${status}`);
    await sleep(10);
  }
}

describe('the sweep timer in a running app (RUN_SWEEP_INTERVAL_MS: 100)', () => {
  let t: TestApp;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
    t = await createTestApp({ RUN_SWEEP_INTERVAL_MS: 100 }, { clock });
  });
  afterAll(() => t.close());

  it('expires a waiting run past expires_at with no read, and publishes its events', async () => {
    const { run } = await waitingRun(t);
    expect(run.expires_at).toBe(run.created_at + 600);
    const published: string[] = [];
    const live = t.app.runtime.pubsub.subscribe<{ event: string }>(`runEvents:${run.id}`, t.app.runtime.shutdown);
    const collecting = (async () => {
      for await (const record of live) published.push(record.event);
    })();

    // One second early: several ticks pass, nothing changes.
    clock.advance(599_000);
    await sleep(350);
    expect(await storedStatus(t, run.id)).toBe('requires_action');
    expect(published).toEqual([]);

    clock.advance(1_000);
    await storedStatusBecomes(t, run.id, 'expired');
    await live.return!();
    await collecting;
    expect(published).toEqual(['thread.run.step.expired', 'thread.run.expired']);

    // What readers see afterwards is what the sweep wrote.
    const expired = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA);
    expect(expired).toMatchObject({ status: 'expired', expires_at: null, required_action: null, usage: { total_tokens: expect.any(Number) } });
    const steps = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}/steps`, undefined, BETA);
    expect(steps.data[0]).toMatchObject({ type: 'tool_calls', status: 'expired', expired_at: expired.created_at + 600 });
    // The thread is free for a new run's messages.
    expect((await t.request('POST', `/v1/threads/${run.thread_id}/messages`, { body: { role: 'user', content: 'again' }, headers: BETA })).status).toBe(200);
  });

  it('leaves a waiting run that is not due yet alone', async () => {
    const { run: due } = await waitingRun(t);
    clock.advance(300_000);
    const { run: fresh } = await waitingRun(t);
    clock.advance(300_000);
    await storedStatusBecomes(t, due.id, 'expired');
    await sleep(250);
    expect(await storedStatus(t, fresh.id)).toBe('requires_action');
  });
});

describe('with the default interval (30 s)', () => {
  it('nothing expires within a few hundred milliseconds unless the run is read', async () => {
    const clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
    const t = await createTestApp({}, { clock });
    try {
      const { run } = await waitingRun(t);
      clock.advance(601_000);
      await sleep(300);
      expect(await storedStatus(t, run.id)).toBe('requires_action');
      expect((await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).status).toBe('expired');
    } finally {
      await t.close();
    }
  });
});

describe('startSweep on a stub runtime', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Just what sweepExpiredRuns and startSweep touch; `find` is the sweep's one query. */
  function stubRuntime(find: () => Promise<unknown[]>, instances: Instances = singleInstance) {
    const shutdown = new AbortController();
    const logged: unknown[][] = [];
    const calls = { find: 0 };
    const runtime = {
      config: { RUN_SWEEP_INTERVAL_MS: 100 },
      instances,
      shutdown: shutdown.signal,
      clock: new ManualClock(new Date('2026-03-01T10:00:00.000Z')),
      logger: { error: (...args: unknown[]) => logged.push(args) },
      fork: () => ({
        find: () => {
          calls.find++;
          return find();
        },
      }),
    } as unknown as Runtime;
    return { runtime, shutdown, logged, calls };
  }

  it('sweeps once per interval until shutdown', async () => {
    vi.useFakeTimers();
    const { runtime, shutdown, calls } = stubRuntime(async () => []);
    startSweep(runtime);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls.find).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.find).toBe(1);
    await vi.advanceTimersByTimeAsync(300);
    expect(calls.find).toBe(4);
    shutdown.abort();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.find).toBe(4);
  });

  it('never runs two sweeps at once: ticks during a slow sweep are skipped', async () => {
    vi.useFakeTimers();
    let finish!: () => void;
    let first = true;
    const { runtime, shutdown, calls } = stubRuntime(() => {
      if (!first) return Promise.resolve([]);
      first = false;
      return new Promise((resolve) => (finish = () => resolve([])));
    });
    startSweep(runtime);
    await vi.advanceTimersByTimeAsync(500);
    expect(calls.find).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.find).toBe(2);
    shutdown.abort();
  });

  it('a failing sweep is logged, and the next tick sweeps again', async () => {
    vi.useFakeTimers();
    const failure = new Error('database is locked');
    let failNext = true;
    const { runtime, shutdown, logged, calls } = stubRuntime(async () => {
      if (failNext) {
        failNext = false;
        throw failure;
      }
      return [];
    });
    startSweep(runtime);
    await vi.advanceTimersByTimeAsync(100);
    expect(logged).toEqual([[{ err: failure }, 'run sweep failed']]);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.find).toBe(2);
    expect(logged).toHaveLength(1);
    shutdown.abort();
  });

  it('the returned function stops it; a runtime already shutting down never sweeps', async () => {
    vi.useFakeTimers();
    const a = stubRuntime(async () => []);
    const stop = startSweep(a.runtime);
    await vi.advanceTimersByTimeAsync(100);
    stop();
    await vi.advanceTimersByTimeAsync(500);
    expect(a.calls.find).toBe(1);

    const b = stubRuntime(async () => []);
    b.shutdown.abort();
    startSweep(b.runtime);
    await vi.advanceTimersByTimeAsync(500);
    expect(b.calls.find).toBe(0);
  });

  it('an instance that is not the sweep leader never sweeps (another instance on the database does)', async () => {
    vi.useFakeTimers();
    let asked = 0;
    const follower: Instances = { id: 'follower', alone: false, leads: async () => (asked++, false) };
    const { runtime, shutdown, calls } = stubRuntime(async () => [], follower);
    startSweep(runtime);
    await vi.advanceTimersByTimeAsync(500);
    expect(asked).toBe(5);
    expect(calls.find).toBe(0);
    shutdown.abort();
  });
});
