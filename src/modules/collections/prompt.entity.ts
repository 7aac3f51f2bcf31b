import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { promptSettingsProperties } from './prompt-settings.js';

export const PROMPT_STATUSES = ['active', 'archived'] as const;
export type PromptStatus = (typeof PROMPT_STATUSES)[number];

/** A prompt template in a collection; `version` is the latest one (its content is on this row), every version is a PromptVersion row. */
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
    /** The version render, completions and retrieve use when none is named; null: the latest (`version`). */
    defaultVersion: p.integer().nullable(),
    ...promptSettingsProperties(),
    status: p.enum(['active', 'archived'] as const),
    createdAt: p.datetime(),
    lastUpdatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['workspaceId', 'slug'] }],
});

export type Prompt = InferEntity<typeof PromptSchema>;
