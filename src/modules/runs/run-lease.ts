/**
 * Which instance executes a run. Before its job starts, an executor claims the run with a lease
 * (`lease_owner` = its instance id, `lease_expires_at` = now + RUN_LEASE_MS) in one conditional
 * UPDATE, so of several instances exactly one wins; it renews all its leases every third of the
 * lease while it executes. A status move that ends the job's part (requires_action, queued again,
 * terminal) clears the lease in the same UPDATE (RunTx.move). When an instance dies its leases
 * stop being renewed, and once they have expired the sweep leader takes its runs over
 * (recovery.ts).
 *
 * Leases are read against the wall clock (Date.now()), not `runtime.clock`: they measure whether a
 * process is alive, which a test's manual clock says nothing about. Instances' clocks must agree
 * to well within RUN_LEASE_MS (NTP does).
 */
import type { Runtime } from '../../runtime.js';
import { executeSql } from '../../db/sql.js';
import type { RunStatus } from './run-state.js';

/** Claims `runId` while it is `status` and nobody's unexpired lease holds it; true when this instance now holds it. */
export async function claimRun(runtime: Runtime, runId: string, status: RunStatus): Promise<boolean> {
  // Alone on the database (SQLite: one process per file) nobody contests a run, and the executor's
  // job map already keeps each run to one job, so a lease would cost a statement per run for nothing.
  if (runtime.instances.alone) return true;
  const now = Date.now();
  const result = await executeSql<{ affectedRows?: number }>(
    runtime.fork(),
    'update runs set lease_owner = ?, lease_expires_at = ? where id = ? and status = ? and (lease_owner is null or lease_expires_at < ?)',
    [runtime.instances.id, now + runtime.config.RUN_LEASE_MS, runId, status, now],
    'run',
  );
  return (result.affectedRows ?? 0) === 1;
}

/** Extends every lease this instance holds; returns how many. */
export async function renewLeases(runtime: Runtime): Promise<number> {
  if (runtime.instances.alone) return 0;
  const result = await executeSql<{ affectedRows?: number }>(
    runtime.fork(),
    'update runs set lease_expires_at = ? where lease_owner = ?',
    [Date.now() + runtime.config.RUN_LEASE_MS, runtime.instances.id],
    'run',
  );
  return result.affectedRows ?? 0;
}

/** Gives up this instance's lease on a run it claimed but did not start (shutdown). */
export async function releaseRun(runtime: Runtime, runId: string): Promise<void> {
  if (runtime.instances.alone) return;
  await executeSql(runtime.fork(), 'update runs set lease_owner = null, lease_expires_at = null where id = ? and lease_owner = ?', [runId, runtime.instances.id], 'run');
}

/** Status moves after which the run's lease is cleared: the executing job's part is over. */
export function moveEndsLease(to: RunStatus): boolean {
  return to !== 'in_progress' && to !== 'cancelling';
}
