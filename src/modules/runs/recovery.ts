/**
 * Background upkeep of runs: the periodic expiry sweep, and what a start does with runs a previous
 * process left behind. Recovery is deterministic:
 * - `queued`: nothing of the run has happened yet, so it is queued for execution again;
 * - `in_progress`: part of an answer may already have been streamed and logged, so repeating the
 *   model call could duplicate messages or tool calls: the run fails with `server_error`
 *   ("interrupted by a restart");
 * - `cancelling`: the cancel is settled (`cancelled`);
 * - `requires_action`: left waiting for tool outputs; the expiry rules apply as usual.
 * One gateway process per database is assumed (the executor and live events are in-process).
 */
import type { Runtime } from '../../runtime.js';
import { runExecutor } from './executor.js';
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

export async function recoverRuns(runtime: Runtime): Promise<RecoveryReport> {
  const report: RecoveryReport = { resumed: [], failed: [], cancelled: [], expired: [] };
  const em = runtime.fork();
  const leftovers = await em.find(
    RunSchema,
    { status: { $in: ['queued', 'in_progress', 'cancelling'] } },
    { orderBy: { ordinal: 'asc' }, fields: ['id', 'status'] },
  );
  for (const run of leftovers) {
    if (run.status === 'in_progress' && (await failRun(runtime, run.id, 'in_progress', INTERRUPTED_ERROR))) report.failed.push(run.id);
    if (run.status === 'cancelling' && (await settleCancelled(runtime, run.id))) report.cancelled.push(run.id);
    if (run.status === 'queued') {
      runExecutor(runtime).enqueue(run.id);
      report.resumed.push(run.id);
    }
  }
  report.expired = await sweepExpiredRuns(runtime);
  if (leftovers.length > 0) runtime.logger.info(report, 'runs recovered after restart');
  return report;
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

/** Sweeps every RUN_SWEEP_INTERVAL_MS until the app shuts down. */
export function startSweep(runtime: Runtime): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping || runtime.shutdown.aborted) return;
    sweeping = true;
    sweepExpiredRuns(runtime)
      .catch((error: unknown) => runtime.logger.error({ err: error }, 'run expiry sweep failed'))
      .finally(() => {
        sweeping = false;
      });
  }, runtime.config.RUN_SWEEP_INTERVAL_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  runtime.shutdown.addEventListener('abort', stop, { once: true });
  return stop;
}
