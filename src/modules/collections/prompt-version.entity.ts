import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { promptSettingsProperties } from './prompt-settings.js';

/** One version of a prompt, written on create and on every update: its content never changes, only its label. */
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
    ...promptSettingsProperties(),
    /** A label the caller gave the version (Portkey's `label_id`). */
    labelId: p.uuid().nullable(),
    createdAt: p.datetime(),
  }),
  uniques: [{ properties: ['promptId', 'version'] }],
});

export type PromptVersion = InferEntity<typeof PromptVersionSchema>;
