// Model prices and the cost of a run. Cost policies need a price for every request they count:
// an unknown model is an error, never "free", or a missing row would turn a budget into no limit.
import { z } from 'zod';

/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** Token usage as the run reports it (OpenAI wire names). */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type PriceOverrides = Record<string, ModelPrice>;

/**
 * Shipped price table: OpenAI list prices (standard tier, USD per 1M tokens) when written; an
 * integration's prices (`configurations.prices`, or a model's `pricing_config` on
 * `PUT /v1/integrations/{slug}/models`, both kept in one map) override any row and price its custom models. `local` is the built-in deterministic
 * model: listed at 0 on purpose so that it is known and free rather than unknown.
 */
export const MODEL_PRICES: Readonly<Record<string, Readonly<ModelPrice>>> = Object.freeze({
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-2024-05-13': { input: 5, output: 15 }, // the first gpt-4o snapshot kept its launch price
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4': { input: 30, output: 60 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'o1': { input: 15, output: 60 },
  'o1-mini': { input: 1.1, output: 4.4 },
  'o3': { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'local': { input: 0, output: 0 },
});

/** Validates `configurations.prices` when an integration is written, not first at request time. */
const dollarsPerMillionTokens = z.number().finite().nonnegative({ message: 'expected a price ≥ 0 in US dollars per million tokens.' });
export const priceOverridesSchema = z.record(z.string().min(1), z.object({ input: dollarsPerMillionTokens, output: dollarsPerMillionTokens }).strict());

export class PriceError extends Error {
  override readonly name = 'PriceError';
  constructor(
    readonly model: string,
    readonly reason: 'unknown_model' | 'invalid_price',
    message: string,
  ) {
    super(message);
  }
}

// OpenAI snapshot names (`gpt-4o-2024-08-06`) are priced like their alias unless listed themselves.
const SNAPSHOT_SUFFIX = /-\d{4}-\d{2}-\d{2}$/;

// hasOwn: a model named `constructor` or `__proto__` must not resolve to Object.prototype members.
const own = (table: Readonly<Record<string, ModelPrice>> | undefined, name: string): ModelPrice | undefined =>
  table && Object.hasOwn(table, name) ? table[name] : undefined;

/**
 * The price applied to `model`: the most specific name wins (exact before snapshot alias), and at
 * the same name an override beats the shipped table. Undefined when nothing is known.
 */
export function priceOf(model: string, overrides?: PriceOverrides): ModelPrice | undefined {
  const names = SNAPSHOT_SUFFIX.test(model) ? [model, model.replace(SNAPSHOT_SUFFIX, '')] : [model];
  for (const name of names) {
    const price = own(overrides, name) ?? own(MODEL_PRICES, name);
    if (price) return price;
  }
  return undefined;
}

// Prices become integers in micro-dollars per million tokens, which is exactly picodollars per
// token: tokens × that is an exact integer cost. BigInt keeps it exact past 2^53. Micro-dollar
// totals would not do: one gpt-4o-mini token costs 0.15 µ$, so small runs would round to zero,
// and float sums like 0.1 + 0.2 drift. Only the final conversion to dollars rounds.
const MICROS_PER_DOLLAR = 1_000_000;
const PICOS_PER_DOLLAR = 1e12;

function picosPerToken(model: string, dollarsPerMillion: number): bigint {
  if (!Number.isFinite(dollarsPerMillion) || dollarsPerMillion < 0) {
    throw new PriceError(model, 'invalid_price', `Invalid price for model '${model}': ${String(dollarsPerMillion)}.`);
  }
  // Rounding drops sub-µ$ per-million precision (below 1e-12 $ per token), which no price uses.
  return BigInt(Math.round(dollarsPerMillion * MICROS_PER_DOLLAR));
}

function checkedTokens(n: number, field: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${field} must be a non-negative integer, got ${String(n)}`);
  return n;
}

function tokenCount(n: number, field: string): bigint {
  return BigInt(checkedTokens(n, field));
}

/** Exact cost in picodollars (1e-12 USD); throws PriceError for an unpriced model. */
export function costInPicodollars(model: string, usage: TokenUsage, overrides?: PriceOverrides): bigint {
  const price = priceOf(model, overrides);
  if (!price) {
    throw new PriceError(model, 'unknown_model', `No price is known for model '${model}', so a cost limit cannot count it. Add a price for it to the integration's configuration.`);
  }
  return (
    tokenCount(usage.prompt_tokens, 'prompt_tokens') * picosPerToken(model, price.input) +
    tokenCount(usage.completion_tokens, 'completion_tokens') * picosPerToken(model, price.output)
  );
}

/** Cost in US dollars; throws PriceError for an unpriced model. */
export function costOf(model: string, usage: TokenUsage, overrides?: PriceOverrides): number {
  return Number(costInPicodollars(model, usage, overrides)) / PICOS_PER_DOLLAR;
}

/**
 * What a policy of `type` adds for one run. Tokens are prompt + completion (not a reported
 * `total_tokens`), so token and cost policies always measure the same two numbers.
 */
export function usageAmount(type: 'cost' | 'tokens', model: string, usage: TokenUsage, overrides?: PriceOverrides): number {
  if (type === 'cost') return costOf(model, usage, overrides);
  // Two safe integers: their float sum rounds as Number(BigInt sum) would, without the BigInts.
  return checkedTokens(usage.prompt_tokens, 'prompt_tokens') + checkedTokens(usage.completion_tokens, 'completion_tokens');
}

// Portkey's model routes price in US cents per token; this table counts US dollars per million
// tokens (1 cent per token = 10,000 dollars per million). Twelve significant digits undo the
// float noise of the division (0.15 / 10,000 = 0.000014999999999999999).
const DOLLARS_PER_MILLION_PER_CENT_PER_TOKEN = 10_000;
const tidy = (n: number): number => Number(n.toPrecision(12));

/** US dollars per million tokens → US cents per token. */
export const centsPerToken = (dollarsPerMillion: number): number => tidy(dollarsPerMillion / DOLLARS_PER_MILLION_PER_CENT_PER_TOKEN);

/** US cents per token → US dollars per million tokens. */
export const dollarsPerMillion = (centsPerToken: number): number => tidy(centsPerToken * DOLLARS_PER_MILLION_PER_CENT_PER_TOKEN);
