import { BatchedInserts } from '../../db/batched-inserts.js';
import type { Runtime } from '../../runtime.js';
import { GuardrailEvaluationSchema, type GuardrailEvaluation } from './guardrail-evaluation.entity.js';

/**
 * Stored guardrail evaluations are a record of what was decided, not part of the decision, so a
 * request does not wait for them: they are inserted in batches after the answer. Readers flush
 * first (`listGuardrailEvaluations`), so an instance's own evaluations are always visible to it;
 * the module's stop writes the last batch. A failed batch is logged (as a failed insert was).
 */
export function evaluationWriter(runtime: Runtime): BatchedInserts<GuardrailEvaluation> {
  return runtime.singleton(
    'guardrails.evaluationWriter',
    () =>
      new BatchedInserts<GuardrailEvaluation>(runtime, GuardrailEvaluationSchema, (error, batch) =>
        runtime.logger.error({ err: error, evaluations: batch.map((e) => e.id) }, 'could not record guardrail evaluations'),
      ),
  );
}
