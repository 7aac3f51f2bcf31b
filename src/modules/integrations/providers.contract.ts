/**
 * The providers' operation inputs, each one schema in wire terms: the REST row validates its body
 * with it, the GraphQL resolver parses its input with it, and GraphQL's input types are derived
 * from it (schema/contract-input.ts). Rules over stored data (the integration, the workspace's
 * access, slugs in use) and names (`validateName`, shared with workspaces) stay with the service.
 */
import { z } from 'zod';
import { refuseWhole } from '../../lib/contract.js';

const NOTE_MAX = 2000;
const GUARDRAILS_MAX = 50;
const GUARDRAIL_REF_MAX = 255;

const note = z.string().superRefine((value, ctx) => {
  if (value.length > NOTE_MAX) refuseWhole(ctx, 'invalid_value', `'note' must be at most ${NOTE_MAX} characters.`);
});

/** Guardrail ids or slugs, kept as sent (the guardrails domain resolves them), trimmed, duplicates dropped. */
const guardrailRefs = (param: string) =>
  z
    .array(z.string())
    .superRefine((list, ctx) => {
      if (list.length > GUARDRAILS_MAX) return refuseWhole(ctx, 'invalid_value', `'${param}' holds at most ${GUARDRAILS_MAX} guardrails.`);
      const bad = list.findIndex((ref) => !ref.trim() || ref.length > GUARDRAIL_REF_MAX);
      if (bad >= 0) refuseWhole(ctx, 'invalid_value', `'${param}[${bad}]' must be a guardrail id or slug (1–${GUARDRAIL_REF_MAX} characters).`, [bad]);
    })
    .transform((list) => [...new Set(list.map((ref) => ref.trim()))]);

export const createProviderContract = z.object({
  integration_id: z.string().describe('Integration UUID or slug.'),
  workspace_id: z.string().nullish().describe("Workspace UUID or slug; default: the caller's."),
  slug: z.string().nullish().describe("The virtual key; default: the integration's slug (numbered when taken)."),
  name: z.string().nullish().describe("Display name; default: the integration's name."),
  note: note.nullish().describe('Free text.'),
  input_guardrails: guardrailRefs('input_guardrails').nullish().describe('Guardrail ids or slugs checked on requests.'),
  output_guardrails: guardrailRefs('output_guardrails').nullish().describe("Guardrail ids or slugs checked on the model's answers."),
});

export const updateProviderContract = z.object({
  name: z.string().nullish().describe('Display name.'),
  note: note.nullish().describe('Free text.'),
  input_guardrails: guardrailRefs('input_guardrails').nullish().describe('Guardrail ids or slugs checked on requests; null empties it.'),
  output_guardrails: guardrailRefs('output_guardrails').nullish().describe("Guardrail ids or slugs checked on the model's answers; null empties it."),
});

export type CreateProviderInput = z.output<typeof createProviderContract>;
export type UpdateProviderInput = z.output<typeof updateProviderContract>;
