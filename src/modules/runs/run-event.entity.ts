import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * The run's event log: every SSE event a run ever produced, numbered from 1. It is the single
 * source for streams, replays (`Last-Event-ID`) and GraphQL subscriptions; `data` is the event's
 * payload exactly as it is sent.
 *
 * Keyed by (run, sequence), what every read asks for (migration 0009): until then a row also had
 * an AUTOINCREMENT id nothing read, and SQLite wrote its `sqlite_sequence` page in every
 * transaction that appended events (2 of a streamed run's ~47 WAL pages), PostgreSQL a second
 * unique index.
 */
export const RunEventSchema = defineEntity({
  name: 'RunEvent',
  tableName: 'run_events',
  properties: (p) => ({
    runId: p.string().primary(),
    sequence: p.integer().primary(),
    event: p.string(),
    // `json`, not `jsonb`: PostgreSQL keeps the text as written (jsonb reorders keys), so a replayed
    // event is byte for byte the live one.
    data: p.json<unknown>().columnType('json'),
    createdAt: p.datetime(),
  }),
});

export type RunEvent = InferEntity<typeof RunEventSchema>;
