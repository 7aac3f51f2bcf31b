import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { GuardrailActions, NormalizedCheck } from './validate.js';

/** One immutable version of a guardrail: written on create and on every update, never changed. */
export const GuardrailVersionSchema = defineEntity({
  name: 'GuardrailVersion',
  tableName: 'guardrail_versions',
  properties: (p) => ({
    /** The wire `version_id`. */
    id: p.uuid().primary(),
    guardrailId: p.uuid().index(),
    version: p.integer(),
    name: p.string(),
    checks: p.json<NormalizedCheck[]>(),
    actions: p.json<GuardrailActions>(),
    /** The API key that wrote this version. */
    createdBy: p.uuid(),
    createdAt: p.datetime(),
  }),
  uniques: [{ properties: ['guardrailId', 'version'] }],
});

export type GuardrailVersion = InferEntity<typeof GuardrailVersionSchema>;
