/**
 * Usage reservations survive a gateway that dies mid-run: the next process on the same database
 * recovers the runs (runs module) with the enforcement hooks already in place, so the interrupted
 * run gives its reservation back and the queued one, resumed, settles its usage into the budget.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { throwIfAborted, type ModelAdapter } from '../../src/modules/runs/models/model.js';
import { createTestApp } from '../helpers/app.js';
import { startRun, useLocalModel, waitFor } from '../helpers/run-fixtures.js';
import { allSettled, heldReservations, policyUsage, tokensPolicy } from '../helpers/enforcement.js';

/** A model that never answers until its signal aborts. */
const hanging: () => ModelAdapter = () => ({
  async *stream(req) {
    await new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
    throwIfAborted(req.signal);
  },
});

it('a restart fails the interrupted run and releases its reservation; the resumed run settles', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-enforcement-recovery-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, RUN_CONCURRENCY: 1 };
  const first = await createTestApp(env);
  try {
    const policyId = await tokensPolicy(first, 100_000, 'Survives restarts');
    useLocalModel(first, hanging);
    const interrupted = await startRun(first, 'hang', {}, { tools: [] });
    await waitFor(first, interrupted.thread.id, interrupted.run.id, ['in_progress']);
    const waiting = await startRun(first, 'still queued', {}, { tools: [] });
    // Both admissions hold their estimates while the first process "dies" (it is never stopped).
    expect(await heldReservations(first)).toBeGreaterThan(0);
    // Dead, its run leases lapse (on PostgreSQL a second instance honours a live one's leases).
    await first.app.runtime.fork().getConnection().execute("update runs set lease_owner = 'dead', lease_expires_at = 0 where lease_owner is not null");

    const second = await createTestApp(env);
    try {
      expect((await waitFor(second, interrupted.thread.id, interrupted.run.id, ['failed'])).usage.total_tokens).toBe(0);
      const resumed = await waitFor(second, waiting.thread.id, waiting.run.id, ['completed']);
      await allSettled(second);
      expect(Object.values(await policyUsage(second, policyId))[0].current_usage).toBe(resumed.usage.total_tokens);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
