import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * Request counters of the rate limiter (rate-limiter.ts), one row per limiter key and window. Only
 * ever touched by single atomic SQL statements, never loaded as entities; declared here so the
 * schema upgrade creates the table.
 */
export const RateLimitCounterSchema = defineEntity({
  name: 'RateLimitCounter',
  tableName: 'rate_limit_counters',
  properties: (p) => ({
    key: p.string().primary(),
    /** Start of the window, milliseconds since the epoch. */
    windowStart: p.bigint('number').primary(),
    count: p.integer(),
  }),
});

export type RateLimitCounter = InferEntity<typeof RateLimitCounterSchema>;
