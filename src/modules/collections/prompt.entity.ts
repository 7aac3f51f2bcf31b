import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { promptSettingsProperties } from './prompt-settings.js';

export const PROMPT_STATUSES = ['active', 'archived'] as const;
export type PromptStatus = (typeof PROMPT_STATUSES)[number];

/** A prompt template in a collection; `version` is the current one, older ones are PromptVersion rows. */
export const PromptSchema = defineEntity({
  name: 'Prompt',
  tableName: 'prompts',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    workspaceId: p.uuid().index(),
    collectionId: p.uuid().index(),
    name: p.string(),
    slug: p.string(),
    template: p.text(),
    model: p.string(),
    version: p.integer(),
    ...promptSettingsProperties(),
    status: p.enum(['active', 'archived'] as const),
    createdAt: p.datetime(),
    lastUpdatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['workspaceId', 'slug'] }],
});

export type Prompt = InferEntity<typeof PromptSchema>;
