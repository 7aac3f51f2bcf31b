import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { ResponseFormat, Tool } from './runs.contract.js';

/** An assistant: the model, instructions and tools a run starts from (OpenAI `assistant`). */
export const AssistantSchema = defineEntity({
  name: 'Assistant',
  tableName: 'assistants',
  properties: (p) => ({
    id: p.string().primary(),
    organisationId: p.uuid().index(),
    workspaceId: p.uuid().index(),
    /** Insertion order (lists sort on it; `created_at` has only second resolution). */
    ordinal: p.bigint('number').index(),
    name: p.string().nullable(),
    description: p.text().nullable(),
    model: p.string(),
    instructions: p.text().nullable(),
    tools: p.json<Tool[]>(),
    toolResources: p.json<Record<string, unknown>>(),
    metadata: p.json<Record<string, string>>(),
    temperature: p.double().$type<number>().nullable(),
    topP: p.double().$type<number>().nullable(),
    responseFormat: p.json<ResponseFormat>(),
    createdAt: p.datetime(),
  }),
});

export type Assistant = InferEntity<typeof AssistantSchema>;
