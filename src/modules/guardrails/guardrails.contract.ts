/**
 * The guardrails' operation inputs, each one schema in wire terms: the REST row validates its body
 * with it, the GraphQL resolver parses its input with it, and GraphQL's input types are derived
 * from it (schema/contract-input.ts). The contract checks the types; what a check id and its
 * parameters must be is validate.ts's judgement, run here so that both front doors name
 * `checks[0].parameters.jwksUri`. Parsed checks and actions come out with their defaults applied.
 * Names stay with the service's `validateName`, which workspaces share.
 */
import { z } from 'zod';
import { refuseWhole } from '../../lib/contract.js';
import { normalizeActions, validateChecks } from './validate.js';

const feedback = z.object({
  value: z.number().nullish().describe('Score (default 5 on success, -5 on failure).'),
  weight: z.number().nullish().describe('Weight (default 1).'),
  metadata: z.string().nullish().describe('Free text (default empty).'),
});

const outcome = z.object({ feedback: feedback.nullish().describe('The feedback record.') });

const actions = z.object({
  deny: z.boolean().nullish().describe('A failure refuses the request.'),
  async: z.boolean().nullish().describe('Evaluate after the response, only recording.'),
  on_success: outcome.nullish().describe('Recorded when every check passes.'),
  on_fail: outcome.nullish().describe('Recorded when a check fails.'),
});

const check = z.object({
  id: z.string().describe('Check id, e.g. default.jwt.'),
  name: z.string().nullish().describe('Display name.'),
  is_enabled: z.boolean().nullish().describe('Default true.'),
  parameters: z.record(z.unknown()).nullish().describe('The check’s parameters (validated per check; defaults applied).'),
});

/** At least one check, each known and with valid parameters: the stored, defaulted entries. */
const checks = z.array(check).transform((list, ctx) => {
  const result = validateChecks(list);
  if (result.ok) return result.checks;
  refuseWhole(ctx, 'invalid_value', result.message, result.at);
  return z.NEVER;
});

/** The GraphQL input types of the nested objects, named as before the contracts. */
export const GRAPHQL_NESTED = {
  checks: ['GuardrailCheckInput', 'One check entry.'],
  actions: [
    'GuardrailActionsInput',
    'Actions; every omitted field takes its default (deny false, async false, feedback 5 / -5, weight 1).',
    {
      on_success: ['GuardrailActionFeedbackInput', 'What an outcome records.', { feedback: ['GuardrailFeedbackInput', 'A feedback record; omitted fields take the defaults.'] }],
      on_fail: ['GuardrailActionFeedbackInput', 'What an outcome records.', { feedback: ['GuardrailFeedbackInput', 'A feedback record; omitted fields take the defaults.'] }],
    },
  ],
} as const;

export const createGuardrailContract = z.object({
  name: z.string().describe('Display name (1–255 characters).'),
  checks: checks.describe('At least one check.'),
  actions: actions.nullish().transform(normalizeActions).describe('Actions (defaults when omitted).'),
  workspace_id: z
    .string()
    .nullish()
    .describe('Workspace (id or slug). Default: a workspace key’s own workspace; organisation-wide for organisation keys.'),
});

export const updateGuardrailContract = z.object({
  name: z.string().nullish().describe('Display name.'),
  checks: checks.nullish().describe('Replaces the checks (at least one).'),
  actions: actions
    .transform(normalizeActions)
    .nullish()
    .describe('Replaces the actions; omitted fields take the defaults.'),
});

export type CreateGuardrailInput = z.output<typeof createGuardrailContract>;
export type UpdateGuardrailInput = z.output<typeof updateGuardrailContract>;
