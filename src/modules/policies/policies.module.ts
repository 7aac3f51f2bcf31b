import type { DomainModule } from '../module.js';
import type { Runtime } from '../../runtime.js';
import { UsageAlertSchema } from '../usage/usage-alert.entity.js';
import { UsageBucketSchema } from '../usage/usage-bucket.entity.js';
import { usageEngine } from '../usage/usage-engine.js';
import { UsageReservationSchema } from '../usage/usage-reservation.entity.js';
import { policyIndexMigrations } from './policy-index.migration.js';
import { PolicyCountSchema } from './policy-count.entity.js';
import { PolicyTermSchema } from './policy-term.entity.js';
import { UsageLimitsPolicySchema } from './usage-limits-policy.entity.js';

const SWEEP_INTERVAL_MS = 60_000;
const sweepers = new WeakMap<Runtime, ReturnType<typeof setInterval>>();

/** A reservation pending this long belongs to a call that can no longer finish (its process died). */
export function staleReservationAgeMs(runtime: Runtime): number {
  return Math.max(10 * 60_000, 5 * runtime.config.MODEL_TIMEOUT_MS);
}

/**
 * Usage-limit policies with their term index, and the usage accounting engine's tables (buckets,
 * reservations, alerts), which workspace-access limits share. Long-lived work: a sweep that gives
 * back the estimates of reservations never settled.
 */
export const policiesModule: DomainModule = {
  name: 'policies',
  entities: [UsageLimitsPolicySchema, PolicyTermSchema, PolicyCountSchema, UsageBucketSchema, UsageReservationSchema, UsageAlertSchema],
  // Policies written before the term index existed are indexed once, before any request.
  migrations: policyIndexMigrations,
  start(runtime) {
    // Only the sweep leader sweeps when several instances share the database (src/lib/instances.ts).
    const sweep = () => {
      if (runtime.shutdown.aborted) return;
      runtime.instances
        .leads()
        .then((leads) => (leads ? usageEngine(runtime).sweepStaleReservations(staleReservationAgeMs(runtime)) : undefined))
        .catch((error: unknown) => runtime.logger.error({ err: error }, 'usage reservation sweep failed'));
    };
    const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
    timer.unref();
    sweepers.set(runtime, timer);
    runtime.shutdown.addEventListener('abort', () => clearInterval(timer), { once: true });
  },
  stop(runtime) {
    clearInterval(sweepers.get(runtime));
    sweepers.delete(runtime);
  },
};
