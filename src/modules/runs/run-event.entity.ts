import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * The run's event log: every SSE event a run ever produced, numbered from 1. It is the single
 * source for streams, replays (`Last-Event-ID`) and GraphQL subscriptions; `data` is the event's
 * payload exactly as it is sent.
 */
export const RunEventSchema = defineEntity({
  name: 'RunEvent',
  tableName: 'run_events',
  properties: (p) => ({
    id: p.integer().primary().autoincrement(),
    runId: p.string(),
    sequence: p.integer(),
    event: p.string(),
    // `json`, not `jsonb`: PostgreSQL keeps the text as written (jsonb reorders keys), so a replayed
    // event is byte for byte the live one.
    data: p.json<unknown>().columnType('json'),
    createdAt: p.datetime(),
  }),
  uniques: [{ properties: ['runId', 'sequence'] }],
});

export type RunEvent = InferEntity<typeof RunEventSchema>;
