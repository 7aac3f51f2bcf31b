import { z } from 'zod';
import { pageQuery } from '../../schema/contracts.js';

/**
 * Guardrail bodies in wire terms (docs/contract.md#guardrails). Only shapes are checked here;
 * what a check id and its parameters must be is the service's judgement (one place for REST and
 * GraphQL), so that errors name `checks[0].parameters.jwksUri`.
 */
const feedback = z.object({
  value: z.number().nullish(),
  weight: z.number().nullish(),
  metadata: z.string().nullish(),
});

const outcome = z.object({ feedback: feedback.nullish() });

export const guardrailActions = z.object({
  deny: z.boolean().nullish(),
  async: z.boolean().nullish(),
  on_success: outcome.nullish(),
  on_fail: outcome.nullish(),
});

export const guardrailCheck = z.object({
  id: z.string(),
  name: z.string().nullish(),
  is_enabled: z.boolean().nullish(),
  parameters: z.record(z.unknown()).nullish(),
});

export const createGuardrailBody = z.object({
  name: z.string(),
  checks: z.array(guardrailCheck),
  actions: guardrailActions.nullish(),
  workspace_id: z.string().nullish(),
});

export const updateGuardrailBody = z.object({
  name: z.string().nullish(),
  checks: z.array(guardrailCheck).nullish(),
  actions: guardrailActions.nullish(),
});

export const listGuardrailsQuery = z.object({
  workspace_id: z.string().optional(),
  status: z.enum(['active', 'archived']).optional(),
  ...pageQuery,
});

export type GuardrailCheckBody = z.infer<typeof guardrailCheck>;
export type GuardrailActionsBody = z.infer<typeof guardrailActions>;
