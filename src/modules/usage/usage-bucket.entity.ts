import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * One usage counter: a limit owner (a policy or a workspace's access to an integration), one value
 * key (the request's `group_by` values) and one period. Amounts are integers in the limit's unit
 * (tokens, or nano-dollars for cost limits: see usage-engine.ts) so that concurrent SQL increments
 * add exactly. The columns are written only by atomic SQL statements in the usage engine, never by
 * loading and flushing the entity.
 */
export const UsageBucketSchema = defineEntity({
  name: 'UsageBucket',
  tableName: 'usage_buckets',
  properties: (p) => ({
    id: p.uuid().primary(),
    ownerType: p.string(),
    ownerId: p.string(),
    valueKey: p.text(),
    /** `2026-11`, `2026-W48` or `all`: derived from the clock, so a period cannot be skipped. */
    periodKey: p.string(),
    /** The reset rule the period key was derived with; a different rule starts another bucket. */
    periodicReset: p.string().nullable(),
    type: p.enum(['cost', 'tokens'] as const),
    /** Settled usage, in units. */
    used: p.bigint('number').default(0),
    /** Estimates of requests in progress, in units: they count toward the limit until settled. */
    reserved: p.bigint('number').default(0),
    /** The limit in units as last written by a request or an update (status in listings). */
    creditLimit: p.bigint('number'),
    alertThreshold: p.bigint('number').nullable(),
    thresholdAlertSent: p.boolean().default(false),
    exhaustedAlertSent: p.boolean().default(false),
    /** Where alerts of this bucket are published; null: log only. */
    workspaceId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['ownerType', 'ownerId', 'valueKey', 'type', 'periodKey'] }],
});

export type UsageBucket = InferEntity<typeof UsageBucketSchema>;
