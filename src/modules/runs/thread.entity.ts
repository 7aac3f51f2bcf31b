import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** A conversation: messages in order, and the runs executed on it (OpenAI `thread`). */
export const ThreadSchema = defineEntity({
  name: 'Thread',
  tableName: 'threads',
  properties: (p) => ({
    id: p.string().primary(),
    // Not indexed (migration 0009): threads are listed by workspace, never by organisation, and
    // the index was a page written per thread.
    organisationId: p.uuid(),
    workspaceId: p.uuid(),
    ordinal: p.bigint('number'),
    metadata: p.json<Record<string, string>>(),
    toolResources: p.json<Record<string, unknown>>(),
    /**
     * The run that owns the thread while it is not terminal. Claimed with a conditional update
     * (`… where active_run_id is null`), so two racing creates cannot both start a run.
     */
    activeRunId: p.string().nullable(),
    createdAt: p.datetime(),
  }),
  // A workspace's threads in order, as the list asks (migration 0010): one index where a
  // workspace index and an ordinal index were two pages written per thread.
  indexes: [{ properties: ['workspaceId', 'ordinal'] }],
});

export type Thread = InferEntity<typeof ThreadSchema>;
