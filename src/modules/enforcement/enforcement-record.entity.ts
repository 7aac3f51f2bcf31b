import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { Reservation } from '../usage/usage-engine.js';
import type { UsagePoint } from './estimate.js';
import type { AdmissionDecision, GuardrailDecision, Settlement } from './decisions.js';

/**
 * One enforcement decision that applied to a run: an admission (create run, create thread and
 * run, or an accepted tool-output submission) with its rate-limit result, the limits it was
 * checked against (bucket usage at that moment), its usage reservation and input-guardrail
 * evaluations; or an output-guardrail evaluation of the run's answer. Admissions are settled
 * (their share of the run's usage counted, or their reservation released) when the run ends.
 */
export const EnforcementRecordSchema = defineEntity({
  name: 'EnforcementRecord',
  tableName: 'run_enforcement_records',
  properties: (p) => ({
    id: p.uuid().primary(),
    runId: p.string().index(),
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    ordinal: p.bigint('number'),
    stage: p.enum(['admission', 'output'] as const),
    /** `create_run`, `create_thread_and_run`, `submit_tool_outputs`, or `output`. */
    kind: p.string(),
    requestId: p.string().nullable(),
    admission: p.json<AdmissionDecision>().nullable(),
    guardrails: p.json<GuardrailDecision>().nullable(),
    /** The admission's usage reservation (null: no limit applied). */
    reservation: p.json<Reservation>().nullable(),
    /** Integration price overrides at admission, for cost limits. */
    prices: p.json<Record<string, { input: number; output: number }>>().nullable(),
    /** The run's usage when the admission was committed: its segment starts there. */
    usageAtStart: p.json<UsagePoint>().nullable(),
    settlement: p.json<Settlement>().nullable(),
    settledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});

export type EnforcementRecord = InferEntity<typeof EnforcementRecordSchema>;
