/**
 * The usage engine seen from a data-plane request: the limits that apply to it (every matching
 * active usage-limit policy, plus limits the caller adds, e.g. the workspace access's own), then
 * check / reserve / record on all of them at once, with dollars priced from the request's model.
 * The engine itself (usage-engine.ts) works on explicit limit specs and priced amounts.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Runtime } from '../../runtime.js';
import type { UsageRequest } from '../usage/conditions.js';
import type { PriceOverrides, TokenUsage } from '../usage/prices.js';
import { measureUsage, usageEngine, usageLimitError, type BucketAmounts, type LimitSpec, type Reservation, type UsageAmount } from '../usage/usage-engine.js';
import { matchingPolicySpecs } from './policies.service.js';

export interface UsageRequestContext extends UsageRequest {
  organisationId: string;
  /** Limits beyond the organisation's policies (the workspace access's own usage limit). */
  extraLimits?: LimitSpec[];
  /** The integration's price overrides for cost limits. */
  prices?: PriceOverrides | null;
}

export type RequestCheck =
  | { allowed: true; limits: LimitSpec[] }
  | { allowed: false; limits: LimitSpec[]; refusedBy: LimitSpec; error: ReturnType<typeof usageLimitError> };

/** Every limit that applies to the request: the extra ones first, then policies oldest first. */
export async function limitsForRequest(runtime: Runtime, em: EntityManager, ctx: UsageRequestContext): Promise<LimitSpec[]> {
  return [...(ctx.extraLimits ?? []), ...(await matchingPolicySpecs(runtime, em, ctx.organisationId, ctx))];
}

/** Allowed, or refused with the limit that refused (its 412 ready to throw). */
export async function checkRequest(runtime: Runtime, em: EntityManager, ctx: UsageRequestContext): Promise<RequestCheck> {
  const limits = await limitsForRequest(runtime, em, ctx);
  const result = await usageEngine(runtime).check(limits);
  if (result.ok) return { allowed: true, limits };
  return { allowed: false, limits, refusedBy: result.refusedBy, error: usageLimitError(result) };
}

/**
 * Reserves an estimate of the request's usage on every applicable bucket (null: no limit applies),
 * or throws the 412 of the limit that refused, with each bucket's usage right after it. `estimate`
 * is only called when a limit applies (it may read the thread). Settle or release the reservation
 * with the engine.
 */
export async function reserveForRequest(
  runtime: Runtime,
  em: EntityManager,
  ctx: UsageRequestContext,
  estimate: () => Promise<TokenUsage>,
): Promise<{ limits: LimitSpec[]; amount: UsageAmount; reservation: Reservation; usage: BucketAmounts[] } | null> {
  const limits = await limitsForRequest(runtime, em, ctx);
  if (limits.length === 0) return null;
  const amount = measureUsage(limits, ctx.model, await estimate(), ctx.prices ?? undefined);
  const result = await usageEngine(runtime).reserve(limits, amount);
  if (!result.ok) throw usageLimitError(result);
  return { limits, amount, reservation: result.reservation, usage: result.usage };
}

/** Adds the request's actual usage (tokens, or dollars from the model's price) to every matching bucket. */
export async function recordRequest(runtime: Runtime, em: EntityManager, ctx: UsageRequestContext, usage: TokenUsage): Promise<UsageAmount> {
  const limits = await limitsForRequest(runtime, em, ctx);
  const amount = measureUsage(limits, ctx.model, usage, ctx.prices ?? undefined);
  if (limits.length > 0) await usageEngine(runtime).record(limits, amount);
  return amount;
}
