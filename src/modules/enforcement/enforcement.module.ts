import { runHooks } from '../runs/admission.js';
import { usageEngine } from '../usage/usage-engine.js';
import type { DomainModule } from '../module.js';
import { EnforcementRecordSchema } from './enforcement-record.entity.js';
import {
  admissionAbandoned,
  admissionCommitted,
  checkRunOutput,
  enforceAdmission,
  recordAdmissionDecisions,
  refusalReason,
  runFinished,
} from './enforcement.service.js';

/**
 * Data-plane enforcement (enforcement.service.ts): registers its checks on the runs engine's
 * hooks. Listed before the runs module, whose start recovers runs and so already needs the hooks.
 */
export const enforcementModule: DomainModule = {
  name: 'enforcement',
  entities: [EnforcementRecordSchema],
  start(runtime) {
    runtime.singleton('enforcement.hooks', () => {
      const hooks = runHooks(runtime);
      return [
        hooks.addAdmissionListener({
          refused: (ctx, _request, error) => ctx.runtime.metrics.refusals.inc({ reason: refusalReason(error) }),
          recording: (rtx, ctx, admission, runId, usageAtStart) => recordAdmissionDecisions(rtx, ctx, admission, runId, usageAtStart),
          committed: (ctx, admission, runId) => admissionCommitted(ctx, admission, runId),
          abandoned: (ctx, admission) => admissionAbandoned(ctx, admission),
        }),
        hooks.addAdmissionCheck(enforceAdmission),
        hooks.addOutputCheck(checkRunOutput),
        hooks.addRunFinishedListener(runFinished),
      ];
    });
  },
  // The hooks stay: they belong to this runtime and must outlive the runs module's stop, which fails
  // the runs still executing (their usage then settles through the run-finished listener). What
  // answered requests deferred (settleAdmission) is written before the database closes.
  async stop(runtime) {
    await usageEngine(runtime).settled();
  },
};
