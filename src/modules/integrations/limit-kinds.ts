// The kinds of usage and rate limits and their bounds: read by the stored shapes (limits.ts) and the
// input contract (integrations.contract.ts), which import each other's types, so the values live apart.
export const USAGE_LIMIT_TYPES = ['cost', 'tokens'] as const;
export type UsageLimitType = (typeof USAGE_LIMIT_TYPES)[number];
export const RATE_LIMIT_TYPES = ['requests'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];
export const RATE_LIMIT_UNITS = ['rpm', 'rph', 'rpd'] as const;
export type RateLimitUnit = (typeof RATE_LIMIT_UNITS)[number];

/** Largest rate-limit value: far above any real limit, and safely inside a 32-bit GraphQL Int. */
export const MAX_RATE_LIMIT_VALUE = 1_000_000_000;
