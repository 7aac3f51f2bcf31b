import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** One immutable version of a prompt: written on create and on every update, never changed. */
export const PromptVersionSchema = defineEntity({
  name: 'PromptVersion',
  tableName: 'prompt_versions',
  properties: (p) => ({
    id: p.uuid().primary(),
    promptId: p.uuid().index(),
    version: p.integer(),
    name: p.string(),
    template: p.text(),
    model: p.string(),
    createdAt: p.datetime(),
  }),
  uniques: [{ properties: ['promptId', 'version'] }],
});

export type PromptVersion = InferEntity<typeof PromptVersionSchema>;
