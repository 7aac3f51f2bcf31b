/**
 * Background upkeep of runs: the periodic sweep (expiry, and runs whose instance died), and what a
 * start does with runs left behind. Recovery is deterministic:
 * - `queued`: nothing of the run has happened yet, so it is queued for execution again;
 * - `in_progress`: part of an answer may already have been streamed and logged, so repeating the
 *   model call could duplicate messages or tool calls: the run fails with `server_error`
 *   ("interrupted by a restart");
 * - `cancelling`: the cancel is settled (`cancelled`);
 * - `requires_action`: left waiting for tool outputs; the expiry rules apply as usual.
 * Several instances on one database (PostgreSQL): a run is left behind when the lease of the
 * instance executing it expired (run-lease.ts), or, queued and unclaimed, when nobody claimed it
 * for a whole lease. Taking one over is itself a lease claim, so exactly one instance does it, and
 * the sweep runs on the sweep leader only (src/lib/instances.ts). SQLite has one process per
 * file, so on start everything not finished is left behind, whatever its lease says.
 */
import type { Runtime } from '../../runtime.js';
import { runExecutor } from './executor.js';
import { claimRun } from './run-lease.js';
import { expireRun, failRun, settleCancelled } from './run-store.js';
import { RunSchema } from './run.entity.js';

export const INTERRUPTED_ERROR = {
  code: 'server_error',
  message: 'The run was interrupted by a gateway restart before it finished.',
};

export interface RecoveryReport {
  resumed: string[];
  failed: string[];
  cancelled: string[];
  expired: string[];
}

/** Settles the runs left behind (see above) and sweeps expired ones; on start, and in every sweep. */
export async function recoverRuns(runtime: Runtime, options: { atStart?: boolean } = {}): Promise<RecoveryReport> {
  const report: RecoveryReport = { resumed: [], failed: [], cancelled: [], expired: [] };
  const leftovers = await leftBehind(runtime, options.atStart === true);
  const executor = runExecutor(runtime);
  for (const run of leftovers) {
    if (run.status === 'in_progress' && (await failRun(runtime, run.id, 'in_progress', INTERRUPTED_ERROR))) report.failed.push(run.id);
    if (run.status === 'cancelling' && (await settleCancelled(runtime, run.id))) report.cancelled.push(run.id);
    if (run.status === 'queued') {
      executor.enqueue(run.id);
      report.resumed.push(run.id);
    }
  }
  report.expired = await sweepExpiredRuns(runtime);
  if (leftovers.length > 0) runtime.logger.info(report, options.atStart ? 'runs recovered after restart' : 'runs taken over from a stopped instance');
  return report;
}

/**
 * Runs nobody executes any more. Alone on the database at start, every unfinished one. Otherwise
 * those whose lease expired (in_progress and cancelling ones are claimed here, so no other
 * instance settles them too; queued ones are claimed by the executor) and queued ones nobody
 * claimed (on start all of them, later those unclaimed for a whole lease: the instance that
 * queued one claims it in milliseconds); never a run this process executes or has queued.
 */
async function leftBehind(runtime: Runtime, atStart: boolean): Promise<{ id: string; status: string }[]> {
  const alone = atStart && runtime.instances.alone;
  const em = runtime.fork();
  const now = Date.now();
  const unclaimedSince = atStart ? runtime.clock.now() : new Date(runtime.clock.now().getTime() - runtime.config.RUN_LEASE_MS);
  const candidates = await em.find(
    RunSchema,
    alone
      ? { status: { $in: ['queued', 'in_progress', 'cancelling'] } }
      : {
          $or: [
            { status: { $in: ['queued', 'in_progress', 'cancelling'] }, leaseExpiresAt: { $lt: now } },
            { status: { $in: ['in_progress', 'cancelling'] }, leaseOwner: null },
            { status: 'queued', leaseOwner: null, updatedAt: { $lte: unclaimedSince } },
          ],
        },
    { orderBy: { ordinal: 'asc' }, fields: ['id', 'status'] },
  );
  const executor = runExecutor(runtime);
  const runs: { id: string; status: string }[] = [];
  for (const run of candidates) {
    if (executor.has(run.id)) continue;
    if (!alone && run.status !== 'queued' && !(await claimRun(runtime, run.id, run.status))) continue;
    runs.push(run);
  }
  return runs;
}

/** Expires every run waiting for tool outputs past its `expires_at`; returns their ids. */
export async function sweepExpiredRuns(runtime: Runtime): Promise<string[]> {
  const due = await runtime.fork().find(
    RunSchema,
    { status: 'requires_action', expiresAt: { $lte: runtime.clock.now() } },
    { fields: ['id'], orderBy: { ordinal: 'asc' } },
  );
  const expired: string[] = [];
  for (const run of due) if (await expireRun(runtime, run.id)) expired.push(run.id);
  return expired;
}

/**
 * Sweeps every RUN_SWEEP_INTERVAL_MS until the app shuts down: expired runs and, with several
 * instances, the runs of instances that stopped. Only the sweep leader sweeps.
 */
export function startSweep(runtime: Runtime): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping || runtime.shutdown.aborted) return;
    sweeping = true;
    sweepOnce(runtime)
      .catch((error: unknown) => runtime.logger.error({ err: error }, 'run sweep failed'))
      .finally(() => {
        sweeping = false;
      });
  }, runtime.config.RUN_SWEEP_INTERVAL_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  runtime.shutdown.addEventListener('abort', stop, { once: true });
  return stop;
}

async function sweepOnce(runtime: Runtime): Promise<void> {
  if (!(await runtime.instances.leads())) return;
  if (runtime.instances.alone) await sweepExpiredRuns(runtime);
  else await recoverRuns(runtime);
}
