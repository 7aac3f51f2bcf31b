import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { CheckOutcome } from './evaluate.js';
import type { Feedback } from './validate.js';

export const GUARDRAIL_STAGES = ['input', 'output'] as const;
export type GuardrailStage = (typeof GUARDRAIL_STAGES)[number];

/**
 * One guardrail evaluated once for one request: the version that ran, its verdict, per-check
 * results and durations, and the feedback its actions chose. Written by the evaluation engine,
 * never changed.
 */
export const GuardrailEvaluationSchema = defineEntity({
  name: 'GuardrailEvaluation',
  tableName: 'guardrail_evaluations',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    /** The workspace of the request that was evaluated. */
    workspaceId: p.uuid().nullable(),
    guardrailId: p.uuid().index(),
    versionId: p.uuid(),
    stage: p.enum(['input', 'output'] as const),
    verdict: p.boolean(),
    /** The guardrail failed and its actions say deny (an async one never actually blocks). */
    deny: p.boolean(),
    async: p.boolean(),
    checks: p.json<CheckOutcome[]>(),
    feedback: p.json<Feedback>(),
    durationMs: p.float(),
    runId: p.string().nullable().index(),
    requestId: p.string().nullable().index(),
    createdAt: p.datetime(),
  }),
});

export type GuardrailEvaluation = InferEntity<typeof GuardrailEvaluationSchema>;
